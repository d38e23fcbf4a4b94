#!/usr/bin/env bash
# The cluster test (CTest label `cluster`): a real one-node Slurm cluster on this machine — munged,
# slurmctld and slurmd started here with a configuration generated into a temporary folder, and
# stopped at the end — runs suites/smoke.json through ci/slurm/submit.sh as 4 array tasks and the
# merge job, following docs/cluster.md. One array task is cancelled mid-run and requeued, as a
# preempted task is. The merged result must have exactly the rows, statuses and output hashes of
# one unsharded run of the suite. Exit 77 (a CTest skip) where Slurm is missing or cannot start,
# saying why.
#   tests/cluster/slurm_cluster_test.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
skip() { echo "skip: $*"; exit 77; }
for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel sinfo python3; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian's slurm-wlm and munge: ci/install-deps.sh)"
done

tmp=$(mktemp -d /tmp/attnbench-cluster.XXXXXX)
export SLURM_CONF=$tmp/slurm.conf
cleanup() {
  scontrol shutdown >/dev/null 2>&1 || true
  [ -f "$tmp/slurmd.pid" ] && kill "$(cat "$tmp/slurmd.pid")" 2>/dev/null || true
  munged --socket="$tmp/munge.sock" --stop >/dev/null 2>&1 || true
  sleep 1
  rm -rf "$tmp"
}
trap cleanup EXIT
log_tail() { for f in "$tmp"/*.log; do echo "--- $f"; tail -5 "$f"; done; }

# Authentication: a key of this test's own, and a socket in the temporary folder.
mungekey --create --keyfile="$tmp/munge.key" --force >/dev/null 2>&1 || skip "mungekey could not create a key"
chmod 400 "$tmp/munge.key"
munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --log-file="$tmp/munged.log" \
  --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" || skip "munged did not start: $(tail -2 "$tmp/munged.log" 2>/dev/null)"

# Two free ports, a node named as this host, every path in the temporary folder.
read -r ctld_port node_port < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool"
cat > "$SLURM_CONF" <<CONF
ClusterName=attnbench-test
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF" || skip "slurmctld did not start: $(log_tail)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start: $(log_tail)"
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %T 2>/dev/null | grep -q idle || skip "the Slurm node did not come up: $(log_tail)"
echo "one-node Slurm cluster up: $host, ports $ctld_port/$node_port"

# docs/cluster.md, step by step: submit, then wait for the merge.
suite=suites/smoke.json
opts=(--backends cpu --repetitions 3 --min-time 0.002 --warmup 0.001 --quiet)
results=$tmp/results
submitted=$(ATTNBENCH=$build/attnbench ci/slurm/submit.sh "$suite" "$results" 4 "${opts[@]}")
echo "$submitted"
array=$(sed -n 's/^array job \([0-9]*\).*/\1/p' <<<"$submitted")
merge=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' <<<"$submitted")

# Task 0, once it has journaled a case, is cancelled and requeued: it must resume, not start over.
deadline=$((SECONDS + 600))
until [ -f "$results/shard-0.json.journal" ] && grep -q case_done "$results/shard-0.json.journal"; do
  [ $SECONDS -lt $deadline ] || { echo "FAIL: task 0 journaled no case in 600 s"; squeue; log_tail; exit 1; }
  [ -f "$results/shard-0.json" ] && [ ! -e "$results/shard-0.json.journal" ] && { echo "FAIL: task 0 ended before it could be cancelled"; exit 1; }
  sleep 0.2
done
scancel "${array}_0"
for _ in $(seq 100); do
  squeue -h -j "${array}_0" -o %T 2>/dev/null | grep -q . || break
  sleep 0.2
done
scontrol requeue "${array}_0"
# Slurm holds a requeued job back for a while before it is eligible again; the test does not wait.
scontrol update jobid="${array}_0" starttime=now >/dev/null 2>&1 || true
echo "task ${array}_0 cancelled after $(grep -c case_done "$results/shard-0.json.journal") cases, and requeued (${SECONDS} s)"

until ! squeue -h -j "$merge" 2>/dev/null | grep -q .; do
  [ $SECONDS -lt $deadline ] || { echo "FAIL: the merge job had not ended after 600 s"; squeue; log_tail; exit 1; }
  sleep 1
done
[ -f "$results/merged.json" ] || { echo "FAIL: no merged result"; cat "$results/attnbench-merge-$merge.out" 2>/dev/null; exit 1; }
[ -f "$results/leaderboard.html" ] || { echo "FAIL: no leaderboard"; exit 1; }
grep -q "resuming from" "$results/attnbench-${array}_0.out" || { echo "FAIL: task 0 did not resume from its journal"; cat "$results/attnbench-${array}_0.out"; exit 1; }

echo "merged (${SECONDS} s)"
# The same suite unsharded: the same rows, statuses and output hashes.
"$build/attnbench" run "$suite" "${opts[@]}" --out "$tmp/one.json" >/dev/null
python3 - "$results/merged.json" "$tmp/one.json" <<'PY'
import json, sys
def rows(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        a = b.get("attnbench")
        if a and "status" in a:
            out[b["name"]] = (a["status"], (a.get("hashes") or {}).get("outputs"))
    return out
merged, one = rows(sys.argv[1]), rows(sys.argv[2])
missing, extra = sorted(set(one) - set(merged)), sorted(set(merged) - set(one))
differ = sorted(k for k in one.keys() & merged.keys() if one[k] != merged[k])
for what, names in (("missing from the merge", missing), ("only in the merge", extra), ("different", differ)):
    for n in names[:5]: print(f"FAIL: {what}: {n}")
if missing or extra or differ: sys.exit(1)
print(f"the merged result has the {len(one)} rows of one unsharded run, with their statuses and output hashes")
PY
