"""The CPU backend's anchors: attnbench beside torch on this machine's CPU, on the same inputs.

usage: python3 ci/anchors/torch_cpu.py [--attnbench build/release/attnbench] [--suite suites/anchors_cpu.json]
                                       [--rounds 3] [--reps 9] [--out ANCHORS.json]
       python3 ci/anchors/torch_cpu.py --results RESULTS.json     (one round from an existing run)

Needs PyPI's torch (a virtual environment outside the repository; Debian's python3-torch 1.13 is a
generic build and no anchor). Each round runs `attnbench run SUITE --backends cpu --no-related`,
then times torch's scaled_dot_product_attention on every attention row of that run, so both are
measured in the same minute on a machine that other work shares; rounds are repeated and the
spread reported. For each row:
  inputs   the very tensors attnbench used: `attnbench dump CASE --backends none` writes them as
           .safetensors (docs/dump.md), whose input hash must equal the row's;
  threads  torch.set_num_threads(attnbench's cpu.threads, from the results' context);
  timing   as attnbench timed that row (its `timing.mode`):
             hot   launches back to back, a batch long enough for 0.2 ms per sample, each
                   repetition at least --min-time long after a warm-up, median of --reps;
             cold  one launch per sample after reading a buffer of twice the cache size attnbench
                   flushed (its `timing.how`), as CpuBackend::flush_cache does, a fixed count per
                   repetition, median of --reps.
Figures: memory-bound rows (decode) as a fraction of the in-run copy bandwidth (context.backends.
cpu.peaks.copy_bytes_per_s, bytes read + written); compute-bound rows (prefill) as GFLOP/s and
attnbench's speed over torch's (torch time / attnbench time). Throughput uses attnbench's own work
figures for both. Bars (issue 3): decode >= 60% of the copy bandwidth; prefill >= 0.67x torch.
"""

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import attnbench_inputs as inputs  # noqa: E402
from torch_sdpa import make_sdpa  # noqa: E402

DECODE_BAR = 0.60   # of the copy bandwidth
PREFILL_BAR = 0.67  # of torch's speed


def median_rows(doc):
    """The record of each timed cpu attention row (the _median aggregate carries it)."""
    rows = []
    for r in doc["benchmarks"]:
        rec = r.get("attnbench", {})
        # The exact-attention methods by name, on purpose: torch's SDPA is their counterpart, and
        # no other family has one here (scripts that mean every method read `attnbench list --json`).
        if rec.get("backend") != "cpu" or rec.get("method") not in ("mha", "mqa", "gqa"):
            continue
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median" and "timing" in rec:
            rows.append(rec)
    return rows


def time_hot(fn, reps, min_time, warmup_s, target_sample_s):
    single = min(_once(fn) for _ in range(3))
    batch = max(1, min(100000, math.ceil(target_sample_s / max(single, 1e-9))))
    t_end = time.perf_counter() + warmup_s
    while time.perf_counter() < t_end:
        fn()
    samples = []
    for _ in range(reps):
        launches, spent = 0, 0.0
        while spent < min_time or launches == 0:
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            spent += time.perf_counter() - t0
            launches += batch
        samples.append(spent / launches)
    return samples, f"{batch} back-to-back launches per sample"


def time_cold(fn, flush, reps, min_time):
    single = min(_once(fn) for _ in range(3))
    iters = max(2, min(20, math.ceil(min_time / max(single, 1e-9))))
    samples = []
    for _ in range(reps):
        spent = 0.0
        for _ in range(iters):
            flush()
            spent += _once(fn)
        samples.append(spent / iters)
    return samples, f"one launch per sample after a cache flush, {iters} per repetition"


def _once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def flush_bytes(rec):
    """Twice the cache size attnbench flushed for this row (CpuBackend::flush_cache)."""
    m = re.search(r"\((\d+) MiB\)", rec["timing"].get("how", ""))
    return 2 * (int(m.group(1)) if m else 512) << 20


def load_safetensors(torch, path):
    """{name: tensor} and the metadata of a .safetensors file (docs/dump.md's format)."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    meta = header.pop("__metadata__", {})
    kinds = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
             "I32": torch.int32, "I8": torch.int8, "U8": torch.uint8}
    out = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        out[name] = torch.frombuffer(data, dtype=kinds[e["dtype"]], count=(end - begin) // torch.tensor(
            [], dtype=kinds[e["dtype"]]).element_size(), offset=begin).reshape(e["shape"])
    return out, meta


class TorchSide:
    def __init__(self, torch, binary, tmp, reps, min_time, warmup_s):
        self.torch, self.binary, self.tmp = torch, binary, tmp
        self.reps, self.min_time, self.warmup_s = reps, min_time, warmup_s
        self.tensors = {}  # case id -> ({q, k, v}, input hash)
        self.flush_buf = None

    def inputs(self, cid):
        if cid not in self.tensors:
            out = os.path.join(self.tmp, f"dump{len(self.tensors)}")
            cmd = [self.binary, "dump", cid, "--backends", "none", "--out", out]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.exit(f"attnbench dump exited {proc.returncode}: {proc.stderr[-2000:]}")
            t, meta = load_safetensors(self.torch, os.path.join(out, "inputs.safetensors"))
            for name in os.listdir(out):
                os.remove(os.path.join(out, name))
            self.tensors[cid] = (t, meta["input_hash"])
        return self.tensors[cid]

    def flush(self, nbytes):
        if self.flush_buf is None or self.flush_buf.numel() != nbytes:
            self.flush_buf = self.torch.ones(nbytes, dtype=self.torch.uint8)
        # Read on every thread, as attnbench does: the caches are left clean, so neither side's
        # launch pays for write-backs.
        self.flush_sink = int(self.flush_buf.sum())

    def time(self, rec):
        cid = rec["case_id"]
        shape = inputs.attention_shape(inputs.parse_case_id(cid))
        if shape["ragged"] or shape["head_lengths"]:
            return {"skipped": "ragged batch or heads: SDPA has no per-sequence lengths"}
        t, input_hash = self.inputs(cid)
        if input_hash != rec["hashes"]["inputs"]:
            sys.exit(f"{cid}: the dump's input hash {input_hash} is not the row's {rec['hashes']['inputs']}")
        fn, mask = make_sdpa(self.torch, t["q"], t["k"], t["v"], shape)
        with self.torch.inference_mode():
            if rec["timing"]["mode"] == "cold":
                nbytes = flush_bytes(rec)
                samples, how = time_cold(fn, lambda: self.flush(nbytes), self.reps, self.min_time)
            else:
                samples, how = time_hot(fn, self.reps, self.min_time, self.warmup_s, 2e-4)
        return {"median_s": statistics.median(samples), "samples_s": samples, "mode": rec["timing"]["mode"],
                "how": how, "mask": mask, "input_hash": input_hash}


def run_attnbench(binary, suite, path, extra):
    cmd = [binary, "run", suite, "--backends", "cpu", "--no-related", "--quiet", "--out", path] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"attnbench exited {proc.returncode}: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return json.load(open(path))


def round_figures(doc, side):
    ctx = doc["context"]["backends"]["cpu"]
    threads = int(ctx["details"]["threads"])
    side.torch.set_num_threads(threads)
    copy = ctx.get("peaks", {}).get("copy_bytes_per_s", 0.0)
    out = {"threads": threads, "copy_bytes_per_s": copy, "cases": []}
    for rec in median_rows(doc):
        e = {"case_id": rec["case_id"], "label": rec.get("label", ""), "status": rec["status"],
             "bound": rec["work"]["bound"], "work": rec["work"], "attnbench_s": rec["timing"]["median_s"],
             "attnbench_cv": rec["timing"].get("cv"), "mode": rec["timing"]["mode"]}
        e["torch"] = side.time(rec)
        flops, nbytes = rec["work"]["flops"], rec["work"]["bytes"]
        e["attnbench_gflops"] = flops / e["attnbench_s"] / 1e9
        e["attnbench_copy_fraction"] = nbytes / e["attnbench_s"] / copy if copy else None
        if "median_s" in e["torch"]:
            ts = e["torch"]["median_s"]
            e["torch_gflops"] = flops / ts / 1e9
            e["torch_copy_fraction"] = nbytes / ts / copy if copy else None
            e["speed_over_torch"] = ts / e["attnbench_s"]
        out["cases"].append(e)
    return out


def print_round(i, r):
    print(f"round {i}: copy {r['copy_bytes_per_s'] / 1e9:.1f} GB/s, {r['threads']} threads")
    for e in r["cases"]:
        t = e["torch"]
        name = (e["label"] or e["case_id"]).split(" (bar")[0] + f" [{e['case_id'].split('/')[-2]}]"
        if e["bound"] == "memory":
            tt = f"torch {t['median_s'] * 1e3:8.2f} ms {100 * e['torch_copy_fraction']:5.1f}%" if "median_s" in t else "torch -"
            print(f"  {name:<48} {e['mode']:<4} attnbench {e['attnbench_s'] * 1e3:8.2f} ms "
                  f"{100 * e['attnbench_copy_fraction']:5.1f}% of copy   {tt}")
        else:
            tt = (f"torch {t['median_s'] * 1e3:8.2f} ms {e['torch_gflops']:6.1f} GFLOP/s   speed x{e['speed_over_torch']:.2f}"
                  if "median_s" in t else "torch -")
            print(f"  {name:<48} {e['mode']:<4} attnbench {e['attnbench_s'] * 1e3:8.2f} ms "
                  f"{e['attnbench_gflops']:6.1f} GFLOP/s   {tt}")


def summary(rounds):
    print(f"\nsummary over {len(rounds)} round(s): median [min, max]")
    ok = True
    for k, e0 in enumerate(rounds[0]["cases"]):
        per = [r["cases"][k] for r in rounds]
        name = (e0["label"] or e0["case_id"]).split(" (bar")[0] + f" [{e0['case_id'].split('/')[-2]}]"
        if e0["bound"] == "memory":
            vals, bar, what = [e["attnbench_copy_fraction"] for e in per], DECODE_BAR, "of the copy bandwidth"
        else:
            vals, bar, what = [e.get("speed_over_torch") for e in per], PREFILL_BAR, "x torch's speed"
        if any(v is None for v in vals):
            print(f"  {name:<48} no figure")
            continue
        med = statistics.median(vals)
        verdict = "meets" if med >= bar else "MISSES"
        ok &= med >= bar
        fmt = (lambda v: f"{100 * v:.1f}%") if e0["bound"] == "memory" else (lambda v: f"{v:.2f}")
        print(f"  {name:<48} {fmt(med)} [{fmt(min(vals))}, {fmt(max(vals))}] {what}; bar {fmt(bar)}: {verdict}")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attnbench", default="build/release/attnbench")
    ap.add_argument("--suite", default="suites/anchors_cpu.json")
    ap.add_argument("--results", help="use this results file (one round) instead of running attnbench")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--warmup", type=float, default=0.02)
    ap.add_argument("--filter", help="attnbench --filter")
    ap.add_argument("--out", help="write every round's figures here (JSON)")
    args = ap.parse_args()

    import torch

    extra = ["--filter", args.filter] if args.filter else []
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        side = TorchSide(torch, args.attnbench, tmp, args.reps, args.min_time, args.warmup)
        for i in range(1 if args.results else args.rounds):
            if args.results:
                doc = json.load(open(args.results))
            else:
                doc = run_attnbench(args.attnbench, args.suite, os.path.join(tmp, f"round{i}.json"), extra)
            r = round_figures(doc, side)
            r["attnbench_commit"] = doc["context"].get("git_commit")
            rounds.append(r)
            print_round(i, r)
    ok = summary(rounds)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                       "bars": {"decode_copy_fraction": DECODE_BAR, "prefill_speed_over_torch": PREFILL_BAR},
                       "rounds": rounds}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
