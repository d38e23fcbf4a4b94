"""tree_verify beside the same verification in torch, on this machine's CPU, on the same probabilities.

usage: python3 ci/anchors/torch_tree_verify.py [--attnbench build/release/attnbench] [--suite suites/anchors_tree.json]
                                               [--rounds 3] [--reps 9] [--out ANCHORS.json]

Needs PyPI's torch (a virtual environment outside the repository), as ci/anchors/torch_cpu.py does,
whose input, timing and thread handling this script shares. Each round runs
`attnbench run SUITE --backends cpu --no-related`, then times torch on every tree_verify row of that
run, in the same minute, with torch's threads set to the attnbench CPU backend's and the row's cold
timing (a cache flush before each launch). The torch side is EAGLE's and Medusa's evaluate_posterior
over a batch: every node's argmax (greedy) or entropy and threshold (typical) over its
distribution, gathered along the retrieve paths, a cumulative product of the acceptance mask for
each path's accepted length, and the best path (typical: the highest sum of log-probabilities
among the longest); one difference from Medusa's code, as in the method's spec: the entropy is
−Σ p·ln p exactly, not −Σ p·ln(p + 1e-5). Before timing, torch's accepted lengths and paths are
compared with the row's fp64 reference (typical: rows the reference marks as boundary events are
skipped). Figures: each side's median, attnbench's speed over torch's (torch time / attnbench
time) with the spread over rounds, and the probabilities' bytes over the CPU's read bandwidth
(the floor: one read of them) beside attnbench's achieved time.
"""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_cpu import anchor_arguments, cold_rounds, speed_summary  # noqa: E402


def verify_fn(torch, t, p):
    """A function doing the verification, and one returning (accept_len, best_path) per row."""
    probs, tokens = t["target_probs"], t["tokens"].long()
    retrieve, leaves = t["retrieve"].long(), t["n_leaves"].long()
    B, n, L = retrieve.shape
    typical = p.get("mode") == "typical"
    eps, delta = torch.tensor(p.get("epsilon", 0.3), dtype=torch.float32), torch.tensor(p.get("delta", 0.09), dtype=torch.float32)
    valid = (torch.arange(n).unsqueeze(0) < leaves.unsqueeze(1))  # [B, n] retrieve rows that are paths
    safe = retrieve.clamp(min=0)
    batch = torch.arange(B).view(B, 1, 1)

    def decide():
        parents, children = safe[:, :, :-1], safe[:, :, 1:]
        present = (retrieve[:, :, 1:] >= 0) & valid.unsqueeze(-1)
        child_tokens = tokens[batch, children]                       # [B, n, L-1]
        if typical:
            entropy = torch.special.entr(probs).sum(-1, dtype=torch.float64)  # −Σ p ln p, fp32 terms summed in fp64
            tau = torch.minimum(eps, delta * torch.exp(-entropy.float()))     # [B, n], in fp32 as attnbench's
            px = probs[batch, parents, child_tokens]                    # [B, n, L-1]
            mask = (px > tau[batch, parents]) & present
        else:
            argmax = probs.argmax(-1)                                    # the first maximum
            mask = (child_tokens == argmax[batch, parents]) & present
        accepted = torch.cumprod(mask.int(), dim=-1)
        length = accepted.sum(-1)                                        # [B, n]; 0 on non-paths
        best_len = length.max(-1).values
        if not typical:
            best = torch.argmax((length == best_len.unsqueeze(1)).int(), dim=-1)  # the lowest path index
        else:
            score = torch.where(accepted.bool(), torch.log(px), torch.zeros_like(px)).sum(-1)
            score = torch.where((length == best_len.unsqueeze(1)) & valid, score, torch.tensor(float("-inf")))
            best = torch.argmax(score, dim=-1)
            best = torch.where(best_len == 0, torch.zeros_like(best), best)
        return best_len, best

    return decide


def main():
    ap = anchor_arguments(__doc__, "suites/anchors_tree.json", 0.02)
    args = ap.parse_args()
    import torch

    def prepare(cid, p, t, ref):
        fn = verify_fn(torch, t, p)
        best_len, best = fn()
        keep = ref["boundary"] == 0
        for name, mine, want in (("accept_len", best_len, ref["accept_len"]), ("best_path", best, ref["best_path"])):
            wrong = int(((mine.int() != want.int()) & keep).sum())
            if wrong:
                sys.exit(f"{cid}: torch's {name} differs from the reference's in {wrong} rows: not the same job")
        return fn

    def measure(i, rec, p, fn, time_job, backend):
        samples, how = time_job(fn)
        cid, ours, theirs = rec["case_id"], rec["timing"]["median_s"], statistics.median(samples)
        floor = 4 * p["batch"] * p["nodes"] * p["vocab"] / backend["peaks"]["read_bytes_per_s"]  # one read of the probabilities
        print(f"round {i}: {cid}\n  attnbench {ours * 1e3:.3f} ms, torch {theirs * 1e3:.3f} ms, {theirs / ours:.2f}x; "
              f"floor {floor * 1e3:.3f} ms ({100 * floor / ours:.1f}% of it)")
        return {"case_id": cid, "attnbench_s": ours, "torch_s": theirs, "speed_over_torch": theirs / ours,
                "floor_s": floor, "fraction_of_floor": floor / ours, "torch_how": how}

    rounds, jobs = cold_rounds(args, torch, ("tree_verify",), prepare, measure)

    def of_floor(cid):
        frac = [f["fraction_of_floor"] for r in rounds for f in r["rows"] if f["case_id"] == cid]
        return f"; {100 * statistics.median(frac):.1f}% of the read-bandwidth floor"

    speed_summary(rounds, jobs, of_floor)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
