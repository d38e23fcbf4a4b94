"""torch's scaled_dot_product_attention beside attnbench, on the same inputs (the shapes of suites/anchors.json).

usage: python3 ci/anchors/torch_sdpa.py --results RESULTS.json --out ANCHORS.json
                                        [--backend cuda] [--reps 20] [--warmup 5]

For every timed attention row of an attnbench results file (`attnbench run ... --out RESULTS.json`)
it regenerates the case's inputs from its id with attnbench's recipe (attnbench_inputs.py, checked
bit for bit against the scalar port on a prefix of every tensor), runs torch SDPA with the FLASH and
the CUDNN backend, and times them as attnbench times (CUDA events):
  hot   back-to-back launches, a batch long enough for 0.2 ms per sample, median of --reps samples
        (attnbench's default timing, no L2 flush);
  cold  one launch after an L2 flush, the stream held by torch.cuda._sleep while it is queued so the
        launch latency stays out, median of --reps.
Throughput uses attnbench's own work figures (flops, bytes) from the row, so the ratios compare
times. Causal masks: attnbench aligns bottom-right; torch's is_causal is top-left, so it is used only
when q_len == kv_len, no mask when q_len == 1 (the last query sees every key), and an explicit
boolean mask otherwise. GQA uses enable_gqa=True (K and V are not expanded). Ragged batches are
skipped (SDPA has no per-sequence lengths). Prints a table and writes JSON.
"""

import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbench_inputs as inputs  # noqa: E402

TARGET_SAMPLE_S = 2e-4  # as attnbench's TimingOptions::target_sample_s


def attnbench_rows(doc, backend):
    """The full record of each timed row (the _median aggregate carries it), by row name."""
    rows = {}
    for r in doc["benchmarks"]:
        rec = r.get("attnbench", {})
        # The exact-attention methods by name, on purpose: SDPA is their counterpart, and no other
        # family has one here (scripts that mean every method read `attnbench list --json`).
        if rec.get("backend") != backend or rec.get("method") not in ("mha", "mqa", "gqa"):
            continue
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median" and "timing" in rec:
            rows[r["run_name"]] = rec
    return rows


def best_by_case(rows):
    """Per case id, the fastest variant's record."""
    best = {}
    for rec in rows.values():
        cid = rec["case_id"]
        if rec.get("status") != "pass":
            continue
        if cid not in best or rec["timing"]["median_s"] < best[cid]["timing"]["median_s"]:
            best[cid] = rec
    return best


def make_sdpa(torch, q, k, v, shape):
    F = torch.nn.functional
    hq, hkv, q_len, kv_len = shape["q_heads"], shape["kv_heads"], shape["q_len"], shape["kv_cap"]
    kwargs = {"scale": 1.0 / math.sqrt(shape["head_dim"])}
    if hq != hkv:
        kwargs["enable_gqa"] = True
    how = "no mask"
    if shape["causal"] and q_len == kv_len:
        kwargs["is_causal"] = True
        how = "is_causal (square: top-left = bottom-right)"
    elif shape["causal"] and q_len > 1:
        i = torch.arange(q_len, device=q.device).view(-1, 1)
        j = torch.arange(kv_len, device=q.device).view(1, -1)
        kwargs["attn_mask"] = j <= kv_len - q_len + i
        how = "explicit bottom-right mask"
    elif shape["causal"]:
        how = "no mask (one query: it sees every key)"
    return (lambda: F.scaled_dot_product_attention(q, k, v, **kwargs)), how


def time_hot(torch, fn, reps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    single = max(start.elapsed_time(stop) * 1e-3, 1e-9)
    batch = max(1, min(100000, math.ceil(TARGET_SAMPLE_S / single)))
    samples = []
    for _ in range(reps):
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e-3 / batch)
    return statistics.median(samples), batch


def time_cold(torch, fn, flush, reps):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        flush()
        torch.cuda._sleep(4_000_000)  # ~2 ms of GPU spinning while the launch below is queued
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e-3)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--backend", default="cuda", help="attnbench backend whose rows are compared")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    doc = json.load(open(args.results))
    backends_ctx = doc.get("context", {}).get("backends", {}).get(args.backend, {})
    peaks = backends_ctx.get("peaks", {})
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 60 << 20)
    flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    flush = lambda: flush_buf.fill_(1)  # noqa: E731

    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "attnbench_results": args.results,
           "attnbench_peaks": peaks, "timing": {"reps": args.reps, "warmup": args.warmup,
                                                "hot": "back-to-back launches, median, no L2 flush",
                                                "cold": "single launch after an L2 flush, median"},
           "cases": []}
    for cid, rec in sorted(best_by_case(attnbench_rows(doc, args.backend)).items()):
        case = inputs.parse_case_id(cid)
        shape = inputs.attention_shape(case)
        entry = {"case_id": cid, "label": rec.get("label", ""), "work": rec["work"],
                 "attnbench": {"variant": rec["variant"], "hot_s": rec["timing"]["median_s"],
                               "throughput": rec.get("throughput", {})}}
        out["cases"].append(entry)
        if shape["ragged"] or shape["head_lengths"]:
            entry["skipped"] = "ragged batch or heads: SDPA has no per-sequence lengths"
            continue
        tensors, lens = inputs.torch_inputs(torch, case, "cuda")
        mismatches = inputs.verify_prefix(torch, case, tensors, lens)
        entry["inputs"] = {"regenerated": "attnbench_inputs.py", "prefix_mismatches": mismatches}
        fn_base, how = make_sdpa(torch, tensors["q"], tensors["k"], tensors["v"], shape)
        entry["mask"] = how
        flops, nbytes = rec["work"]["flops"], rec["work"]["bytes"]
        entry["torch"] = {}
        for name, backend in (("FLASH", SDPBackend.FLASH_ATTENTION), ("CUDNN", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(backend):  # only this backend: an unsupported case raises
                    hot, batch = time_hot(torch, fn_base, args.reps, args.warmup)
                    cold = time_cold(torch, fn_base, flush, args.reps)
                t = {"hot_s": hot, "batch": batch, "cold_s": cold,
                     "hot_tflops": flops / hot / 1e12, "hot_gbps": nbytes / hot / 1e9,
                     "attnbench_speedup_hot": hot / rec["timing"]["median_s"]}
                # Against the ceiling the attnbench row names (read bandwidth for decode, the mma rate
                # of its dtype for prefill), so both sides are judged alike.
                ceiling = rec.get("throughput", {}).get("peak", "")
                if peaks.get(ceiling):
                    amount = flops if ceiling.endswith("_flops_per_s") else nbytes
                    t["hot_pct_of_ceiling"] = 100.0 * amount / hot / peaks[ceiling]
                    t["ceiling"] = ceiling
            except RuntimeError as e:
                t = {"error": str(e).splitlines()[0][:300]}
            entry["torch"][name] = t
            torch.cuda.synchronize()
        del tensors
        torch.cuda.empty_cache()

    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{'case':<64} {'attnbench':>14} {'FLASH':>14} {'CUDNN':>14}  (TFLOP/s or GB/s, hot; ×: attnbench speedup)")
    for e in out["cases"]:
        memory = e["work"].get("bound", "compute") != "compute"  # read or copy ("memory" in older files)
        unit = (lambda s: e["work"]["bytes"] / s / 1e9) if memory else (lambda s: e["work"]["flops"] / s / 1e12)
        cells = [f"{unit(e['attnbench']['hot_s']):9.1f} {e['attnbench']['variant'][:4]}"]
        for name in ("FLASH", "CUDNN"):
            t = e.get("torch", {}).get(name, {})
            cells.append(f"{unit(t['hot_s']):7.1f} ×{t['attnbench_speedup_hot']:.2f}" if "hot_s" in t
                         else f"{'error' if 'error' in t else '-':>14}")
        print(f"{(e['label'] or e['case_id'])[:64]:<64} " + " ".join(f"{c:>14}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
