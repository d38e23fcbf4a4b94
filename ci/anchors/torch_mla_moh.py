"""mla and moh beside torch on this machine's CPU, on the same inputs, in the eager forms their authors' code runs.

usage: python3 ci/anchors/torch_mla_moh.py [--attnbench build/release/attnbench] [--suite suites/anchors_mla_moh.json]
                                           [--rounds 3] [--reps 9] [--out ANCHORS.json]

Needs PyPI's torch (a virtual environment outside the repository), as ci/anchors/torch_cpu.py does,
whose input, timing and thread handling this script shares. Each round runs
`attnbench run SUITE --backends cpu --no-related`, then times torch on every mla and moh row of that
run, in the same minute. The torch side is the layer as the methods' reference code writes it:
  mla absorbed  DeepSeek-V3's inference code with attn_impl="absorb": q_nope·w_uk folded into the
                query, scores against the latent cache and the rotary cache (two einsums), softmax
                in fp32, P·latent, then w_uv;
  mla naive     its attn_impl="naive" math with every head's K and V decompressed from the latent
                cache in the step, as attnbench's naive form does (DeepSeek's code instead keeps
                the decompressed K and V in its cache), then scores, softmax in fp32 and P·V;
  moh           MoH's layer computes every head and multiplies each head's output by its gate (0 for
                a head the router left out): the router (norm: the routed heads' ‖q_h‖, top
                routed_k; learned: logits, softmaxes and the α weights) and torch's SDPA over all
                heads, gated. attnbench skips the heads a token does not run.
Before timing, torch's O is checked against attnbench's fp64 reference of the row (from
`attnbench dump CASE --backends none`): its relative L2 error must be below 2e-2 (the storage
dtype's rounding), so both sides compute the same layer. Figures: each side's median, attnbench's
speed over torch's (torch time / attnbench time) with the spread over rounds. No bar: these are
the first anchors of these methods; the figures say where attnbench stands.
"""

import json
import math
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_cpu import anchor_arguments, dump, parse_params, flush_bytes, run_attnbench, time_cold, time_hot  # noqa: E402

METHODS = ("mla", "moh")
MAX_REL_L2 = 2e-2


def median_rows(doc):
    rows = []
    for r in doc["benchmarks"]:
        rec = r.get("attnbench", {})
        if rec.get("backend") != "cpu" or rec.get("method") not in METHODS:
            continue
        if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median" and "timing" in rec:
            rows.append(rec)
    return rows


def causal_mask(torch, q_len, kv_len):
    """Bottom-right aligned, as attnbench's: query i sees keys j <= kv_len - q_len + i."""
    i = torch.arange(q_len).unsqueeze(1)
    j = torch.arange(kv_len).unsqueeze(0)
    return j <= kv_len - q_len + i


def mla_fn(torch, t, p):
    q, lat, w_uk, w_uv = t["q"], t["kv_latent"], t["w_uk"], t["w_uv"]
    rank, rope, nope = p.get("kv_lora_rank", 512), p.get("qk_rope_head_dim", 64), p.get("qk_nope_head_dim", 128)
    scale = 1.0 / math.sqrt(nope + rope)
    q_len, kv_len = q.shape[2], lat.shape[1]
    mask = causal_mask(torch, q_len, kv_len) if p.get("causal", True) and q_len > 1 else None
    q_nope, q_pe = q[..., :nope], q[..., nope:]
    c, k_pe = lat[..., :rank], lat[..., rank:]

    def finish(scores, values_fn):
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return values_fn(scores.softmax(dim=-1, dtype=torch.float32).to(q.dtype))

    if p.get("form", "absorbed") == "absorbed":
        def fn():
            qa = torch.einsum("bhin,hnr->bhir", q_nope, w_uk)
            scores = (torch.einsum("bhir,btr->bhit", qa, c) + torch.einsum("bhie,bte->bhit", q_pe, k_pe)) * scale
            return finish(scores, lambda pr: torch.einsum("bhir,hvr->bhiv", torch.einsum("bhit,btr->bhir", pr, c), w_uv))
    else:
        def fn():
            k_nope = torch.einsum("btr,hnr->bhtn", c, w_uk)
            v = torch.einsum("btr,hvr->bhtv", c, w_uv)
            scores = (torch.einsum("bhin,bhtn->bhit", q_nope, k_nope) + torch.einsum("bhie,bte->bhit", q_pe, k_pe)) * scale
            return finish(scores, lambda pr: torch.einsum("bhit,bhtv->bhiv", pr, v))
    return fn


def moh_fn(torch, t, p):
    q, k, v = t["q"], t["k"], t["v"]
    heads, hs, rk = q.shape[1], p.get("shared_heads", 16), p.get("routed_k", 8)
    q_len, kv_len = q.shape[2], k.shape[2]
    mask = causal_mask(torch, q_len, kv_len) if p.get("causal", True) and q_len > 1 else None
    learned = p.get("router", "norm") == "learned"
    x, w = (t["x"], t["w_router"]) if learned else (None, None)

    def gates():
        if not learned:
            score = q[:, hs:].float().norm(dim=-1)  # [B, routed, L]
            top = score.topk(rk, dim=1).indices
            g = torch.zeros(q.shape[0], heads, q_len)
            g[:, :hs] = 1.0
            g[:, hs:].scatter_(1, top, 1.0)
            return g
        logit = torch.einsum("bld,hd->blh", x.float(), w.float())  # [B, L, heads + 2]
        routed = logit[..., hs:heads].softmax(-1)
        top = routed.topk(rk, dim=-1)
        kept = torch.zeros_like(routed).scatter_(-1, top.indices, top.values)
        alpha = 2 * logit[..., heads:heads + 2].softmax(-1) if hs and rk else torch.ones(*logit.shape[:2], 2)
        g = torch.zeros(*logit.shape[:2], heads)
        if hs:
            g[..., :hs] = alpha[..., :1] * hs * logit[..., :hs].softmax(-1)
        g[..., hs:] = alpha[..., 1:] * rk * kept / kept.sum(-1, keepdim=True)
        return g.transpose(1, 2)  # [B, heads, L]

    def fn():
        # SDPA over every head, K and V shared by their groups (enable_gqa: measured faster here
        # than HF Llama's repeat_kv copy, so the stronger of the two peers).
        o = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=k.shape[1] != heads)
        return o * gates().unsqueeze(-1).to(o.dtype)
    return fn


def rel_l2(torch, got, ref):
    keep = ~torch.isnan(ref)
    diff = (got.double() - ref)[keep]
    return float(diff.norm() / ref[keep].norm().clamp_min(1e-300))


class Side:
    def __init__(self, torch, binary, tmp, reps, min_time, warmup):
        self.torch, self.binary, self.tmp = torch, binary, tmp
        self.reps, self.min_time, self.warmup = reps, min_time, warmup
        self.cache = {}
        self.flush_buf = None

    def time(self, rec):
        torch, cid = self.torch, rec["case_id"]
        p = parse_params(cid)
        if p.get("ragged") or p.get("rope_layout"):
            return {"skipped": "ragged batches and the PreRoPE variant have no torch counterpart here"}
        if cid not in self.cache:
            t, h, ref = dump(self.binary, cid, self.tmp, torch)
            if h != rec["hashes"]["inputs"]:
                sys.exit(f"{cid}: the dump's input hash {h} is not the row's {rec['hashes']['inputs']}")
            fn = (mla_fn if rec["method"] == "mla" else moh_fn)(torch, t, p)
            with torch.inference_mode():
                err = rel_l2(torch, fn(), ref["O"])
            if err > MAX_REL_L2:
                sys.exit(f"{cid}: torch's O is {err:.3g} from attnbench's reference (rel L2): not the same layer")
            self.cache[cid] = (fn, err)
        fn, err = self.cache[cid]
        with torch.inference_mode():
            if rec["timing"]["mode"] == "cold":
                nbytes = flush_bytes(rec)

                def flush():
                    if self.flush_buf is None or self.flush_buf.numel() != nbytes:
                        self.flush_buf = torch.ones(nbytes, dtype=torch.uint8)
                    self.sink = int(self.flush_buf.sum())
                samples, how = time_cold(fn, flush, self.reps, self.min_time)
            else:
                samples, how = time_hot(fn, self.reps, self.min_time, self.warmup, 2e-4)
        return {"median_s": statistics.median(samples), "samples_s": samples, "how": how, "rel_l2_to_reference": err}


def round_figures(doc, side):
    threads = int(doc["context"]["backends"]["cpu"]["details"]["threads"])
    side.torch.set_num_threads(threads)
    out = {"threads": threads, "cases": []}
    for rec in median_rows(doc):
        e = {"case_id": rec["case_id"], "label": rec.get("label", ""), "status": rec["status"],
             "attnbench_s": rec["timing"]["median_s"], "attnbench_cv": rec["timing"].get("cv"),
             "mode": rec["timing"]["mode"], "torch": side.time(rec)}
        if "median_s" in e["torch"]:
            e["speed_over_torch"] = e["torch"]["median_s"] / e["attnbench_s"]
        out["cases"].append(e)
    return out


def name_of(e):
    return f"{e['label'] or e['case_id']} [{e['case_id'].split('/')[-2]}]"


def main():
    args = anchor_arguments(__doc__, "suites/anchors_mla_moh.json", 0.02).parse_args()

    import torch

    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        side = Side(torch, args.attnbench, tmp, args.reps, args.min_time, args.warmup)
        for i in range(args.rounds):
            doc = run_attnbench(args.attnbench, args.suite, os.path.join(tmp, f"round{i}.json"), [])
            r = round_figures(doc, side)
            r["attnbench_commit"] = doc["context"].get("git_commit")
            rounds.append(r)
            print(f"round {i}: {r['threads']} threads")
            for e in r["cases"]:
                t = e["torch"]
                tt = (f"torch {t['median_s'] * 1e3:9.3f} ms  speed x{e['speed_over_torch']:.2f}" if "median_s" in t
                      else f"torch - ({t.get('skipped')})")
                print(f"  {name_of(e):<60} attnbench {e['attnbench_s'] * 1e3:9.3f} ms   {tt}")
    print(f"\nsummary over {len(rounds)} round(s): attnbench's speed over torch's, median [min, max]")
    for k, e0 in enumerate(rounds[0]["cases"]):
        vals = [r["cases"][k].get("speed_over_torch") for r in rounds]
        if any(v is None for v in vals):
            continue
        err = e0["torch"]["rel_l2_to_reference"]
        print(f"  {name_of(e0):<60} x{statistics.median(vals):.2f} [{min(vals):.2f}, {max(vals):.2f}]"
              f"   (torch's O at rel L2 {err:.1e} of the reference)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"torch": torch.__version__, "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
                       "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
