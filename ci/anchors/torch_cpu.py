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
Figures: every row, attnbench's and torch's, as a fraction of the in-run ceiling the attnbench row
names (its throughput.peak: the read bandwidth for decode, which reads K and V once; the rate of
the compute path for prefill, fp32 FMA for f32 and the AMX tiles for bf16 where the CPU has them),
from context.backends.cpu.peaks; compute-bound rows also as GFLOP/s and attnbench's speed over
torch's (torch time / attnbench time), and bf16 prefill over f32 prefill of the same shape.
Throughput uses attnbench's own work figures for both. Bars: decode >= 85% of the read bandwidth;
f32 prefill >= 0.67x torch; bf16 prefill >= 2x torch and >= 1.5x attnbench's own f32; and no row,
attnbench's or torch's, above its ceiling.
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

DECODE_BAR = 0.85                             # of the read bandwidth
PREFILL_BAR = {"f32": 0.67, "bf16": 2.0}      # of torch's speed, by dtype
BF16_OVER_F32_BAR = 1.5                       # bf16 prefill over f32 prefill of the same shape


def dtype_of(cid):
    return cid.split("/")[-2]


def memory_bound(e):
    return e["bound"] != "compute"


def timed_rows(doc, backend, methods):
    """The record of each timed row of these methods on the backend (the _median aggregate carries it)."""
    rows = []
    for r in doc["benchmarks"]:
        rec = r.get("attnbench", {})
        if rec.get("backend") != backend or rec.get("method") not in methods:
            continue
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median" and "timing" in rec:
            rows.append(rec)
    return rows


def median_rows(doc):
    """The timed cpu attention rows."""
    # The exact-attention methods by name, on purpose: torch's SDPA is their counterpart, and
    # no other family has one here (scripts that mean every method read `attnbench list --json`).
    return timed_rows(doc, "cpu", ("mha", "mqa", "gqa"))


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


def dump(binary, cid, tmp, torch):
    """The case's inputs, their hash and its fp64 reference, from `attnbench dump CID --backends none`."""
    out = os.path.join(tmp, "dump")
    proc = subprocess.run([binary, "dump", cid, "--backends", "none", "--out", out], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"attnbench dump exited {proc.returncode}: {proc.stderr[-2000:]}")
    t, meta = load_safetensors(torch, os.path.join(out, "inputs.safetensors"))
    ref, _ = load_safetensors(torch, os.path.join(out, "reference.safetensors"))
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    return t, meta["input_hash"], ref


def run_attnbench(binary, suite, path, extra, backend="cpu"):
    cmd = [binary, "run", suite, "--backends", backend, "--no-related", "--quiet", "--out", path] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        sys.exit(f"attnbench exited {proc.returncode}: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return json.load(open(path))


def round_figures(doc, side):
    ctx = doc["context"]["backends"]["cpu"]
    threads = int(ctx["details"]["threads"])
    side.torch.set_num_threads(threads)
    peaks = ctx.get("peaks", {})
    out = {"threads": threads, "peaks": {k: v for k, v in peaks.items() if isinstance(v, (int, float))}, "cases": []}
    for rec in median_rows(doc):
        e = {"case_id": rec["case_id"], "label": rec.get("label", ""), "status": rec["status"],
             "bound": rec["work"]["bound"], "work": rec["work"], "attnbench_s": rec["timing"]["median_s"],
             "attnbench_cv": rec["timing"].get("cv"), "mode": rec["timing"]["mode"]}
        e["torch"] = side.time(rec)
        flops, nbytes = rec["work"]["flops"], rec["work"]["bytes"]
        e["ceiling"] = rec.get("throughput", {}).get("peak", "")
        ceiling = peaks.get(e["ceiling"], 0.0)
        amount = nbytes if memory_bound(e) else flops
        e["attnbench_gflops"] = flops / e["attnbench_s"] / 1e9
        e["attnbench_fraction"] = amount / e["attnbench_s"] / ceiling if ceiling else None
        if "median_s" in e["torch"]:
            ts = e["torch"]["median_s"]
            e["torch_gflops"] = flops / ts / 1e9
            e["torch_fraction"] = amount / ts / ceiling if ceiling else None
            e["speed_over_torch"] = ts / e["attnbench_s"]
        out["cases"].append(e)
    return out


def short(ceiling):
    return ceiling.replace("_bytes_per_s", "").replace("_flops_per_s", "") or "?"


def pct(v):
    return f"{100 * v:5.1f}%" if v is not None else "    -"


def print_round(i, r):
    p = r["peaks"]
    print(f"round {i}: {r['threads']} threads; ceilings: " +
          ", ".join(f"{short(k)} {v / 1e9:.1f} {'GB/s' if k.endswith('_bytes_per_s') else 'GFLOP/s'}" for k, v in p.items()))
    for e in r["cases"]:
        t = e["torch"]
        name = (e["label"] or e["case_id"]).split(" (bar")[0] + f" [{dtype_of(e['case_id'])}]"
        of = f"of {short(e['ceiling'])}"
        if memory_bound(e):
            tt = f"torch {t['median_s'] * 1e3:8.2f} ms {pct(e['torch_fraction'])}" if "median_s" in t else "torch -"
            print(f"  {name:<48} {e['mode']:<4} attnbench {e['attnbench_s'] * 1e3:8.2f} ms "
                  f"{pct(e['attnbench_fraction'])} {of}   {tt}")
        else:
            tt = (f"torch {t['median_s'] * 1e3:8.2f} ms {e['torch_gflops']:6.1f} GFLOP/s {pct(e['torch_fraction'])}"
                  f"   speed x{e['speed_over_torch']:.2f}" if "median_s" in t else "torch -")
            print(f"  {name:<48} {e['mode']:<4} attnbench {e['attnbench_s'] * 1e3:8.2f} ms "
                  f"{e['attnbench_gflops']:6.1f} GFLOP/s {pct(e['attnbench_fraction'])} {of}   {tt}")


def spread(vals, fmt):
    return f"{fmt(statistics.median(vals))} [{fmt(min(vals))}, {fmt(max(vals))}]"


def summary(rounds):
    print(f"\nsummary over {len(rounds)} round(s): median [min, max]")
    ok = True
    cases = rounds[0]["cases"]
    for k, e0 in enumerate(cases):
        per = [r["cases"][k] for r in rounds]
        dtype = dtype_of(e0["case_id"])
        name = (e0["label"] or e0["case_id"]).split(" (bar")[0] + f" [{dtype}]"
        # No row, attnbench's or torch's, may run above the ceiling it is judged against.
        fractions = [v for e in per for v in (e["attnbench_fraction"], e.get("torch_fraction")) if v is not None]
        if any(v > 1.0 for v in fractions):
            ok = False
            print(f"  {name:<48} ABOVE its ceiling {short(e0['ceiling'])}: {max(fractions) * 100:.1f}%")
        if memory_bound(e0):
            vals, bar, what = [e["attnbench_fraction"] for e in per], DECODE_BAR, f"of the {short(e0['ceiling'])} bandwidth"
            fmt = lambda v: f"{100 * v:.1f}%"  # noqa: E731
        else:
            vals, bar, what = [e.get("speed_over_torch") for e in per], PREFILL_BAR.get(dtype), "x torch's speed"
            fmt = lambda v: f"{v:.2f}"  # noqa: E731
        if bar is None or any(v is None for v in vals):
            print(f"  {name:<48} no figure")
            continue
        verdict = "meets" if statistics.median(vals) >= bar else "MISSES"
        ok &= statistics.median(vals) >= bar
        print(f"  {name:<48} {spread(vals, fmt)} {what}; bar {fmt(bar)}: {verdict}")
    # bf16 prefill over the f32 prefill of the same shape, round by round (both in the same run).
    for k, e0 in enumerate(cases):
        if memory_bound(e0) or dtype_of(e0["case_id"]) != "bf16":
            continue
        twin = e0["case_id"].rsplit("/", 2)
        twin = f"{twin[0]}/f32/{twin[2]}"
        j = next((j for j, e in enumerate(cases) if e["case_id"] == twin), None)
        if j is None:
            continue
        vals = [r["cases"][j]["attnbench_s"] / r["cases"][k]["attnbench_s"] for r in rounds]
        verdict = "meets" if statistics.median(vals) >= BF16_OVER_F32_BAR else "MISSES"
        ok &= statistics.median(vals) >= BF16_OVER_F32_BAR
        name = (e0["label"] or e0["case_id"]).split(" (bar")[0]
        print(f"  {name + ' bf16 over f32':<48} {spread(vals, lambda v: f'{v:.2f}')} x; bar {BF16_OVER_F32_BAR:.2f}: {verdict}")
    return ok


def parse_params(case_id):
    """The k=v segment of a case id, numbers as numbers and words as strings."""
    out = {}
    for item in case_id.split("/")[-3].split(","):
        k, v = item.split("=", 1)
        if v in ("true", "false"):
            out[k] = v == "true"
            continue
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def cold_rounds(args, torch, methods, prepare, measure):
    """The round loop of the anchors whose torch side is one Python job per row, timed cold.

    Each of args.rounds rounds runs attnbench's suite, sets torch's threads to the CPU backend's and,
    for every timed row of `methods` in that run, calls measure(i, rec, p, job, time_job, backend) for
    the round's figures of the row: `time_job(fn)` times fn cold as the row was (a buffer of the row's
    flush size summed before each call) and returns (samples, how). `job` is prepare(cid, p, t, ref)
    for the case, built once from the dump of its inputs t and fp64 reference ref (whose input hash
    must be the row's) under torch.inference_mode, as every timing is. Returns the rounds (each
    round's commit and figures) and the cases' jobs in the order met.
    """
    rounds, jobs = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            doc = run_attnbench(args.attnbench, args.suite, os.path.join(tmp, f"round{i}.json"), [])
            be = doc["context"]["backends"]["cpu"]
            torch.set_num_threads(int(be["details"]["threads"]))
            figures = []
            for rec in timed_rows(doc, "cpu", methods):
                cid, p = rec["case_id"], parse_params(rec["case_id"])
                if cid not in jobs:
                    t, h, ref = dump(args.attnbench, cid, tmp, torch)
                    if h != rec["hashes"]["inputs"]:
                        sys.exit(f"{cid}: the dump's input hash {h} is not the row's {rec['hashes']['inputs']}")
                    with torch.inference_mode():
                        jobs[cid] = prepare(cid, p, t, ref)
                flush_buf = torch.ones(flush_bytes(rec), dtype=torch.uint8)

                def time_job(fn):
                    return time_cold(fn, lambda: int(flush_buf.sum()), args.reps, args.min_time)

                with torch.inference_mode():
                    figures.append(measure(i, rec, p, jobs[cid], time_job, be))
            rounds.append({"attnbench_commit": doc["context"].get("git_commit"), "rows": figures})
    return rounds, jobs


def speed_summary(rounds, cids, extra=lambda cid: ""):
    """Prints each case's speed over torch, median [min, max] over the rounds, and extra(cid)."""
    print("\nsummary: speed over torch, median [min, max] over rounds")
    for cid in cids:
        v = [f["speed_over_torch"] for r in rounds for f in r["rows"] if f["case_id"] == cid]
        print(f"  {cid}: {statistics.median(v):.2f}x [{min(v):.2f}, {max(v):.2f}]{extra(cid)}")


def anchor_arguments(doc, suite, warmup):
    """The options every anchor script takes (each may add its own)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--attnbench", default="build/release/attnbench")
    ap.add_argument("--suite", default=suite)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--warmup", type=float, default=warmup)
    ap.add_argument("--out", help="write every round's figures here (JSON)")
    return ap


def main():
    ap = anchor_arguments(__doc__, "suites/anchors_cpu.json", 0.02)
    ap.add_argument("--results", help="use this results file (one round) instead of running attnbench")
    ap.add_argument("--filter", help="attnbench --filter")
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
                       "bars": {"decode_read_fraction": DECODE_BAR, "prefill_speed_over_torch": PREFILL_BAR,
                                "bf16_prefill_over_f32": BF16_OVER_F32_BAR},
                       "rounds": rounds}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
