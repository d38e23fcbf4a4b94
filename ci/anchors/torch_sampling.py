"""sampling beside torch's sort-cumsum-multinomial sampler on this machine's CPU or GPU, on the same logits.

usage: python3 ci/anchors/torch_sampling.py [--attnbench build/release/attnbench] [--suite suites/anchors_sampling.json]
                                            [--backend cpu|cuda] [--rounds 3] [--reps 9] [--out ANCHORS.json]

Needs PyPI's torch (a virtual environment outside the repository), as ci/anchors/torch_cpu.py does,
whose input, timing and thread handling this script shares. Each round runs
`attnbench run SUITE --backends cpu --no-related`, then times torch on every sampling row of that
run, in the same minute, with torch's threads set to the attnbench CPU backend's and the row's own
timing mode (a cold row: a cache flush before each of torch's launches too). The torch side
is the sampler as HF transformers' logits warpers and vLLM's reference path write it: z = logits / T;
top-k by torch.topk's k-th value; top-p by a descending sort, softmax, cumsum and a scatter of the
mask back; min-p against the largest probability; softmax and torch.multinomial, one token a row.
Before timing, torch's kept set is compared with the row's fp64 reference kept set (from
`attnbench dump CASE --backends none`): they may differ only at tokens the reference marks as
decided within rounding (kept_boundary), so both sides run the same chain. Figures: each side's
median, attnbench's speed over torch's (torch time / attnbench time) with the spread over rounds,
and attnbench's logits bytes over the CPU's copy bandwidth (the floor: one read of the logits)
beside its achieved time. The bar: attnbench at least 5x torch on the B = 64, V = 128256 top-p row.
With --backend cuda (the GPU machine, ci/device-check.sh) both sides run on the GPU and are timed
with CUDA events as torch_sdpa.py times (its hot and cold modes); the figures are reported, and the
CPU's bar does not apply.
"""

import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_cpu import anchor_arguments, dump, flush_bytes, parse_params, run_attnbench, time_cold, time_hot, timed_rows  # noqa: E402

SPEED_BAR = 5.0


def sampler_fn(torch, logits, p):
    T, k, top_p, min_p = p.get("temperature", 1.0), p.get("top_k", 0), p.get("top_p", 1.0), p.get("min_p", 0.0)

    def keep_mask():
        z = logits / T
        if 0 < k < z.shape[-1]:
            z = z.masked_fill(z < torch.topk(z, k, dim=-1).values[..., -1:], float("-inf"))
        if top_p < 1:
            zs, idx = torch.sort(z, dim=-1, descending=True, stable=True)
            ps = zs.softmax(-1)
            before = ps.cumsum(-1) - ps
            zs = zs.masked_fill(before >= top_p, float("-inf"))
            z = torch.empty_like(z).scatter_(-1, idx, zs)
        if min_p > 0:
            pr = z.softmax(-1)
            z = z.masked_fill(pr < min_p * pr.max(-1, keepdim=True).values, float("-inf"))
        return z

    def fn():
        return torch.multinomial(keep_mask().softmax(-1), 1)
    return fn, keep_mask


def bits(torch, mask_words, vocab):
    """[rows, words] int32 bit masks as [rows, vocab] bools."""
    w = mask_words.to(torch.int64) & 0xFFFFFFFF
    shifts = torch.arange(32, dtype=torch.int64)
    b = ((w.unsqueeze(-1) >> shifts) & 1).reshape(w.shape[0], -1)
    return b[:, :vocab].bool()


def main():
    ap = anchor_arguments(__doc__, "suites/anchors_sampling.json", 0.05)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"], help="attnbench's backend, and torch's device")
    args = ap.parse_args()
    gpu = args.backend == "cuda"

    import torch
    if gpu:
        import torch_sdpa

    rounds, fns = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            doc = run_attnbench(args.attnbench, args.suite, os.path.join(tmp, f"round{i}.json"), [], args.backend)
            be = doc["context"]["backends"][args.backend]
            if not gpu:
                torch.set_num_threads(int(be["details"]["threads"]))
            copy_bw = be["peaks"]["copy_bytes_per_s"]
            figures = []
            for rec in timed_rows(doc, args.backend, ("sampling",)):
                cid, p = rec["case_id"], parse_params(rec["case_id"])
                if cid not in fns:
                    t, h, ref = dump(args.attnbench, cid, tmp, torch)
                    if h != rec["hashes"]["inputs"]:
                        sys.exit(f"{cid}: the dump's input hash {h} is not the row's {rec['hashes']['inputs']}")
                    fn, keep_mask = sampler_fn(torch, t["logits"].to(args.backend), p)
                    with torch.inference_mode():
                        kept = keep_mask() > float("-inf")
                    kept = kept.cpu()
                    want, boundary = bits(torch, ref["kept"], p["vocab"]), bits(torch, ref["kept_boundary"], p["vocab"])
                    wrong = int(((kept != want) & ~boundary).sum())
                    if wrong:
                        sys.exit(f"{cid}: torch's kept set differs from the reference's at {wrong} tokens: not the same chain")
                    fns[cid] = fn
                with torch.inference_mode():
                    if gpu:
                        if rec["timing"]["mode"] == "cold":
                            flush_buf = torch.ones(flush_bytes(rec), dtype=torch.uint8, device="cuda")
                            median = torch_sdpa.time_cold(torch, fns[cid], flush_buf.zero_, args.reps)
                            how = "one launch after an L2 flush (CUDA events)"
                        else:
                            median, batch = torch_sdpa.time_hot(torch, fns[cid], args.reps, 5)
                            how = f"{batch} back-to-back launches per sample (CUDA events)"
                        samples = [median]
                    elif rec["timing"]["mode"] == "cold":  # the row's own timing mode
                        flush_buf = torch.ones(flush_bytes(rec), dtype=torch.uint8)
                        samples, how = time_cold(fns[cid], lambda: int(flush_buf.sum()), args.reps, args.min_time)
                    else:
                        samples, how = time_hot(fns[cid], args.reps, args.min_time, args.warmup, 2e-2)
                ours, theirs = rec["timing"]["median_s"], statistics.median(samples)
                logits_bytes = 4 * p["batch"] * p["vocab"]
                figures.append({"case_id": cid, "attnbench_s": ours, "torch_s": theirs, "speed_over_torch": theirs / ours,
                                "floor_s": logits_bytes / copy_bw, "fraction_of_floor": logits_bytes / copy_bw / ours,
                                "torch_how": how})
                print(f"round {i}: {cid}\n  attnbench {ours * 1e3:.3f} ms, torch {theirs * 1e3:.3f} ms, "
                      f"{theirs / ours:.2f}x; floor {logits_bytes / copy_bw * 1e3:.3f} ms "
                      f"({100 * logits_bytes / copy_bw / ours:.1f}% of it)")
            rounds.append({"attnbench_commit": doc["context"].get("git_commit"), "rows": figures})
    ok = True
    print("\nsummary: speed over torch, median [min, max] over rounds")
    for cid in fns:
        v = [f["speed_over_torch"] for r in rounds for f in r["rows"] if f["case_id"] == cid]
        frac = [f["fraction_of_floor"] for r in rounds for f in r["rows"] if f["case_id"] == cid]
        print(f"  {cid}: {statistics.median(v):.2f}x [{min(v):.2f}, {max(v):.2f}]; "
              f"{100 * statistics.median(frac):.1f}% of the copy-bandwidth floor")
        p = parse_params(cid)
        if not gpu and p.get("batch") == 64 and p.get("vocab") == 128256 and p.get("top_p", 1) < 1 \
                and statistics.median(v) < SPEED_BAR:
            print(f"  below the bar of {SPEED_BAR}x")
            ok = False
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "backend": args.backend, "bar": None if gpu else SPEED_BAR,
                       "rounds": rounds}, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
