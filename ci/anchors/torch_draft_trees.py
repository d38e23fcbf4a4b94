"""eagle2_tree and jakiro beside the same jobs written in torch, on this machine's CPU, on the same inputs.

usage: python3 ci/anchors/torch_draft_trees.py [--attnbench build/release/attnbench] [--suite suites/anchors_draft_trees.json]
                                               [--rounds 3] [--reps 9] [--out ANCHORS.json]

Needs PyPI's torch (a virtual environment outside the repository), as ci/anchors/torch_cpu.py does,
whose input, timing and thread handling this script shares. Each round runs
`attnbench run SUITE --backends cpu --no-related`, then times torch on every eagle2_tree and jakiro
row of that run, in the same minute, with torch's threads set to the attnbench CPU backend's and
the row's cold timing (a cache flush before each launch).
  eagle2_tree  EAGLE-2's topK_genrate without the draft forward (whose outputs are the case's draft
               rows): log_softmax and topk of every row, per level the frontier's children's
               cumulative scores and torch.topk of the k² for the next frontier, torch.topk of all
               candidates, sorted into creation order, the parents by searchsorted, and the tree's
               mask, depths and leaf paths as EAGLE builds them (a loop over the kept nodes).
  jakiro       Jakiro's two-expert MixtralSparseMoeBlock.forward as its code writes it (LlamaRMSNorm,
               the gate's four logits, both LlamaMLP experts, the torch.where pairing of weights and
               experts, the moe and contrastive sums), in the case's dtype as the authors run it, on
               all forward rows at once; the residual; the LM head; then the builder above.
Before timing, torch's trees are compared with the reference's (eagle2_tree: rows without a
boundary event must match; jakiro: its half-precision features round after every op, so its logits
and trees are reported beside the reference's, not required equal). Figures: each side's median,
attnbench's speed over torch's (torch time / attnbench time) with the spread over rounds, and for
jakiro torch's draft forward alone (its builder's Python loops left out), the part a fused torch
builder would not change.
"""

import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_cpu import anchor_arguments, cold_rounds, speed_summary  # noqa: E402


def tree_fn(torch, root, p):
    """EAGLE-2's builder over draft logits [batch, slots, V]: a function returning (tokens, parents)."""
    k, D, T = p.get("top_k", 10), p.get("depth", 6), p.get("total_tokens", 60)

    def build(logits):
        B = logits.shape[0]
        lp = torch.log_softmax(logits.float(), dim=-1)               # every draft row, as the draft head's output
        top = torch.topk(lp, k, dim=-1)                              # [B, rows, k]
        out_tokens, out_parents = [], []
        for b in range(B):
            scores_list, parents_list, tokens_list = [top.values[b, 0]], [torch.zeros(k, dtype=torch.long)], [top.indices[b, 0]]
            scores = top.values[b, 0]                                # the frontier's scores
            frontier = torch.arange(k)                               # candidate indices of the frontier's slots
            for level in range(2, D + 1):
                rows = 1 + (level - 2) * k + torch.arange(k)
                cu = top.values[b, rows] + scores[:, None]           # [k slots, k children]
                parents_list.append((frontier + 1).repeat_interleave(k))  # node index of the parent: candidate + 1
                tokens_list.append(top.indices[b, rows].reshape(-1))
                scores_list.append(cu.reshape(-1))
                best = torch.topk(cu.reshape(-1), k)
                first = k + (level - 2) * k * k
                frontier, scores = first + best.indices, best.values
            all_scores = torch.cat(scores_list)
            keep = torch.sort(torch.topk(all_scores, min(T, all_scores.numel())).indices).values
            tokens = torch.cat([root[b:b + 1], torch.cat(tokens_list)[keep]])
            parent_cand = torch.cat(parents_list)[keep] - 1          # −1: the root
            node = torch.searchsorted(keep, parent_cand.clamp(min=0)) + 1
            parents = torch.cat([torch.tensor([-1]), torch.where(parent_cand < 0, torch.zeros_like(node), node)])
            n = parents.numel()
            # EAGLE's layout: the mask row of a node is its parent's plus itself; depths; leaf paths.
            mask = torch.eye(n, dtype=torch.bool)
            depth = torch.zeros(n, dtype=torch.long)
            pl = parents.tolist()
            for i in range(1, n):
                mask[i] |= mask[pl[i]]
                depth[i] = depth[pl[i]] + 1
            is_leaf = torch.ones(n, dtype=torch.bool)
            is_leaf[parents[1:]] = False
            paths = []
            for leaf in torch.nonzero(is_leaf).flatten().tolist():
                path, v = [], leaf
                while v >= 0:
                    path.append(v)
                    v = pl[v]
                paths.append(path[::-1])
            out_tokens.append(tokens)
            out_parents.append(parents)
        return torch.stack(out_tokens), torch.stack(out_parents)

    return build


def jakiro_fn(torch, t, p):
    """Jakiro's draft in torch over the case's inputs: a function returning the draft logits [B, S, V]."""
    F = torch.nn.functional
    x, g = t["hidden_states"], t["norm_weight"]
    w_in, w_down, w_router, head = t["w_in"], t["w_down"], t["w_router"], t["lm_head"]
    B, Fr, d = x.shape
    k, D = p.get("top_k", 10), p.get("depth", 6)
    S = 1 + (D - 1) * k
    contrastive = p.get("last_stage", "contrastive") == "contrastive"
    gate = [w_in[2 * e * d:(2 * e + 1) * d] for e in range(2)]
    up = [w_in[(2 * e + 1) * d:(2 * e + 2) * d] for e in range(2)]

    def pick(bools, a, b):
        return torch.where(bools.unsqueeze(-1), a, b)

    def draft():
        h = x.reshape(B * Fr, d)
        v = h.float().pow(2).mean(-1, keepdim=True)                     # LlamaRMSNorm
        n = g * (h.float() * torch.rsqrt(v + 1e-6)).to(h.dtype)
        r = F.linear(n, w_router)                                        # the gate's 4 logits
        e0 = F.linear(F.silu(F.linear(n, gate[0])) * F.linear(n, up[0]), w_down[0])
        e1 = F.linear(F.silu(F.linear(n, gate[1])) * F.linear(n, up[1]), w_down[1])
        b1 = r[..., 0] > r[..., 1]
        w1 = F.softmax(r[..., :2], dim=-1, dtype=h.dtype)
        w1_0, w1_1 = torch.where(b1, w1[..., 0], w1[..., 1]).unsqueeze(-1), torch.where(b1, w1[..., 1], w1[..., 0]).unsqueeze(-1)
        moe = pick(b1, e0, e1) * w1_0 + pick(b1, e1, e0) * w1_1
        feats = (h + moe).reshape(B, Fr, d)
        if contrastive:
            b2 = r[..., 2] > r[..., 3]
            w2 = F.softmax(r[..., 2:], dim=-1, dtype=h.dtype)
            w2_0, w2_1 = torch.where(b2, w2[..., 0], w2[..., 1]).unsqueeze(-1), torch.where(b2, w2[..., 1], w2[..., 0]).unsqueeze(-1)
            con = (h + (pick(b2, e0, e1) * w2_0 - pick(b2, e1, e0) * w2_1)).reshape(B, Fr, d)
            feats = torch.cat([feats, con[:, Fr - k:]], dim=1)           # the last k slots: the penultimate frontier's
        return F.linear(feats.reshape(B * S, d), head).reshape(B, S, -1)

    return draft


def job(torch, cid, p, t, ref):
    """(the function timed, a line saying how its result compares with the reference's)."""
    build = tree_fn(torch, t["root_token"].long(), p)
    if cid.startswith("eagle2_tree/"):
        logits = t["draft_logits"]
        tokens, parents = build(logits)
        keep = ref["boundary"] == 0
        for name, mine, want in (("tokens", tokens, ref["tokens"]), ("parents", parents, ref["parents"])):
            wrong = int(((mine.int() != want.int()).any(dim=1) & keep).sum())
            if wrong:
                sys.exit(f"{cid}: torch's {name} differ from the reference's in {wrong} rows: not the same job")
        return (lambda: build(logits)), "trees equal the reference's", None
    draft = jakiro_fn(torch, t, p)
    logits = draft()
    want = ref["draft_logits"]
    cos = float(torch.nn.functional.cosine_similarity(logits.double().flatten(), want.double().flatten(), dim=0))
    if cos < 0.999:
        sys.exit(f"{cid}: torch's draft logits are not the reference's (cosine {cos:.6f}): not the same job")
    tokens, _ = build(logits)
    same = float((tokens.int() == ref["tokens"].int()).float().mean())
    note = (f"torch's logits: cosine {cos:.6f}, max abs {float((logits.double() - want).abs().max()):.3g} from the "
            f"fp64 reference; its tree tokens equal the reference's at {100 * same:.1f}% of nodes")
    return (lambda: build(draft())), note, draft


def main():
    ap = anchor_arguments(__doc__, "suites/anchors_draft_trees.json", 0.02)
    args = ap.parse_args()
    import torch

    def prepare(cid, p, t, ref):
        fn, note, draft = job(torch, cid, p, t, ref)
        print(f"{cid}: {note}")
        return fn, note, draft

    def measure(i, rec, p, prepared, time_job, backend):
        fn, note, draft = prepared
        samples, how = time_job(fn)
        # jakiro: torch's draft forward alone, without its builder's loops
        draft_only = statistics.median(time_job(draft)[0]) if draft is not None else None
        cid, ours, theirs = rec["case_id"], rec["timing"]["median_s"], statistics.median(samples)
        extra = f"; torch's draft forward alone {draft_only * 1e3:.3f} ms" if draft_only else ""
        print(f"round {i}: {cid}\n  attnbench {ours * 1e3:.3f} ms, torch {theirs * 1e3:.3f} ms, {theirs / ours:.2f}x{extra}")
        return {"case_id": cid, "attnbench_s": ours, "torch_s": theirs, "speed_over_torch": theirs / ours,
                "torch_draft_only_s": draft_only, "torch_how": how, "same_job": note}

    rounds, jobs = cold_rounds(args, torch, ("eagle2_tree", "jakiro"), prepare, measure)
    speed_summary(rounds, jobs)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
