"""The decode steps of the selection-only and quantized KV caches beside full-cache decode.

usage: python3 ci/bench/kv_decode.py [--attnbench build/release/attnbench] [--backend cpu]
                                     [--suite suites/kv_decode_bench.json] [--rounds 5]

Each round runs `attnbench run SUITE --backends BACKEND --no-related` (the rows one after the
other, cold timing: caches flushed before each launch), so the rows of a round share the machine's
state of that minute; the ratios are taken within a round, and their median and range over the
rounds are printed. Figures per row: the median time, the bytes a step reads (the row's work), the
achieved fraction of the read and copy bandwidths measured in the same run, and the speed over the
full-cache row. The bars (KV compression II): gather_decode over 2048 of 32768 keys at least 8x
faster than full decode, kivi_decode at 2 bits at least 2x faster, on this machine's CPU (the GPU
backends' figures are reported, not judged). tokenselect and quest are whole selection-only steps
(choosing the set, then the same sparse step): reported, not judged. With --backend cuda it runs in ci/device-check.sh.
Standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

BARS = {"gather_decode": 8.0, "kivi_decode": 2.0}


def run_round(args, out):
    cmd = [args.attnbench, "run", args.suite, "--backends", args.backend, "--no-related", "--quiet", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    peaks = doc["context"]["backends"][args.backend]["peaks"]
    rows = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        a = b["attnbench"]
        if a["status"] != "pass":
            sys.exit(f"{a['case_id']}: {a['status']} {a.get('reason', '')}")
        seconds = b["real_time"] * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "ns": 1e-9}[b["time_unit"]]
        rows[a["method"]] = {"s": seconds, "bytes": a["work"]["bytes"]}
    return rows, peaks


def spread(xs):
    return f"{statistics.median(xs):.2f} [{min(xs):.2f}, {max(xs):.2f}]"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--attnbench", default="build/release/attnbench")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--suite", default=os.path.join(os.path.dirname(__file__), "..", "..", "suites", "kv_decode_bench.json"))
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    per_round = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            per_round.append(run_round(args, os.path.join(tmp, f"round{r}.json")))
    methods = list(per_round[0][0].keys())
    print(f"{'row':16} {'median ms':>10} {'MB read':>8} {'% read bw':>10} {'% copy bw':>10} {'speed over full':>22}")
    failed = []
    for m in methods:
        ms = [rows[m]["s"] * 1e3 for rows, _ in per_round]
        mb = per_round[0][0][m]["bytes"] / 1e6
        read = [100 * rows[m]["bytes"] / rows[m]["s"] / peaks["read_bytes_per_s"] for rows, peaks in per_round]
        copy = [100 * rows[m]["bytes"] / rows[m]["s"] / peaks["copy_bytes_per_s"] for rows, peaks in per_round]
        speed = [rows["gqa"]["s"] / rows[m]["s"] for rows, _ in per_round]
        print(f"{m:16} {statistics.median(ms):10.3f} {mb:8.1f} {statistics.median(read):10.1f} {statistics.median(copy):10.1f} "
              f"{spread(speed):>22}")
        if args.backend == "cpu" and m in BARS and statistics.median(speed) < BARS[m]:
            failed.append(f"{m}: {statistics.median(speed):.2f}x < {BARS[m]}x")
    if args.backend == "cpu":
        print("bars: " + ("met" if not failed else "; ".join(failed)))


if __name__ == "__main__":
    main()
