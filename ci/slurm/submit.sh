#!/usr/bin/env bash
# Submits a suite to Slurm as N array tasks and the merge that waits for them (docs/cluster.md).
#   ci/slurm/submit.sh SUITE RESULTS_DIR N [attnbench run options...]
# Prints the two job ids; the jobs' logs go to RESULTS_DIR. sbatch's own SBATCH_* variables choose the partition, account, time
# limit and GPUs (SBATCH_PARTITION=gpu SBATCH_GPUS_PER_TASK=1 ...); ATTNBENCH names the binary.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 SUITE RESULTS_DIR N [attnbench run options...]" >&2
  exit 2
fi
suite=$1
dir=$2
n=$3
shift 3
case $n in '' | *[!0-9]* | 0) echo "$0: N must be a positive number of shards, not '$n'" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
# Each job's log lands beside the results.
array=$(sbatch --parsable --array=0-$((n - 1)) --output="$dir/attnbench-%A_%a.out" "$here/run-shard.sbatch" "$suite" "$dir" "$@")
array=${array%%;*}  # "id;cluster" on multi-cluster installations
merge=$(sbatch --parsable --dependency=afterany:"$array" --output="$dir/attnbench-merge-%j.out" "$here/merge.sbatch" "$dir" "$n")
merge=${merge%%;*}
echo "array job $array ($n shards), merge job $merge: $dir/merged.json and $dir/leaderboard.html when it ends"
