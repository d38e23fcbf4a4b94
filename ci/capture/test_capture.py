"""The test of ci/capture/capture_hf.py: a tiny random Llama's capture, checked against torch, replayed by attnbench.

usage: python3 ci/capture/test_capture.py [--attnbench build/release/attnbench] [--keep DIR]
       (ci/capture/test.sh finds the Python, and skips when it lacks torch, transformers or safetensors)

1. capture   capture_hf.py --random-config ci/capture/tiny_llama.json --weight-seed 0 --layers 0,1
             --kv-len 128 --obs-window 32 --n-future 16 --logits-rows 4 --dtype bf16 on a fixed
             paragraph, into a temporary directory or --keep DIR (how tests/data/replay/ is made).
2. torch     the same model (same config, same seed) rebuilt here and run with use_cache=True on
             the same tokens, without the script's monkeypatch: k and v must equal the returned
             cache's post-RoPE keys and values, q_prompt, q_obs, q_future and q the q_proj output
             rotated here by the model's rotary embedding and the rotate_half formula, logits
             the model's logits at positions T-R..T-1 as float32; all bit for bit (torch.equal),
             and the metadata must say what the file holds.
3. attnbench `check tests/data/replay/tiny_llama.json --inputs LAYER` passes on both layers (cpu and
             vulkan, or cpu where vulkan is unavailable: exit 3); `list` names every case with
             the file's hash (/s<seed>@<16 hex digits>); `dump` of one KV case and one sampler case
             writes inputs.safetensors whose k, v, q_obs, q_future, q_prompt, q or logits equal the
             torch tensors of step 2 bit for bit.
Prints a summary; exits 1 when any check failed.
"""

import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import safetensors
import safetensors.torch
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIG = os.path.join(HERE, "tiny_llama.json")
SUITE = os.path.join(ROOT, "tests", "data", "replay", "tiny_llama.json")
SEED, LAYERS, T, W, F, R = 0, (0, 1), 128, 32, 16, 4
KV_NAMES = ("k", "v", "q_prompt", "q_obs", "q_future", "q")
TEXT = (
    "A benchmark that only ever sees random tensors can rank kernels correctly and still mislead: "
    "the keys of a trained model are far from isotropic, a few channels carry most of the energy, "
    "attention piles onto the first tokens and onto a handful of heavy hitters, and the queries of "
    "the last few positions say a great deal about which keys the next ones will read. Methods "
    "that compress the cache live or die by that structure. So the harness replays tensors captured "
    "from a real forward pass, exactly as the model held them, next to the ones it generates itself.\n"
)


class Checks:
    def __init__(self):
        self.results = []

    def __call__(self, name, ok, detail=""):
        self.results.append((name, bool(ok), detail))
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def summary(self):
        failed = [r for r in self.results if not r[1]]
        print(f"=== {len(self.results) - len(failed)} of {len(self.results)} checks passed")
        for name, _, detail in failed:
            print(f"  FAIL {name}" + (f": {detail.splitlines()[0]}" if detail else ""))
        return not failed


def run_capture(text_file, out):
    cmd = [sys.executable, os.path.join(HERE, "capture_hf.py"), "--random-config", CONFIG,
           "--weight-seed", str(SEED), "--layers", ",".join(map(str, LAYERS)), "--kv-len", str(T),
           "--obs-window", str(W), "--n-future", str(F), "--logits-rows", str(R), "--dtype", "bf16",
           "--text-file", text_file, "--out", out]
    print("$ " + shlex.join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def tokens(text, vocab, n_tokens):
    """Tokens by capture_hf.py's documented rule: the UTF-8 bytes mod vocab of the fewest copies
    of the text, joined by "\\n", that make n_tokens of them, cut to n_tokens."""
    copies = 1
    while len("\n".join([text] * copies).encode("utf-8")) < n_tokens:
        copies += 1
    ids = [b % vocab for b in "\n".join([text] * copies).encode("utf-8")][:n_tokens]
    return torch.tensor([ids]), copies


def check_repeats(check):
    """A text shorter than the tokens needed is repeated: the script's rule against the documented one."""
    sys.path.insert(0, HERE)
    from capture_hf import tokenize
    for text, n in (("Short text.", T + F), ("ab", 4097), ("x", 1), ("\u00e9t\u00e9", 64)):
        want = tokens(text, 1024, n)
        got = tokenize(text, lambda s: [b % 1024 for b in s.encode("utf-8")], n)
        check(f"text repeats: {text!r} to {n} tokens", torch.equal(got[0], want[0]) and got[1] == want[1],
              f"{got[1]} copies, expected {want[1]}")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def torch_tensors():
    """{layer: {name: tensor}} as torch held them, recomputed without capture_hf.py, and the token copies."""
    with open(CONFIG) as f:
        config = transformers.AutoConfig.for_model(**json.load(f))
    torch.manual_seed(SEED)
    model = transformers.AutoModelForCausalLM.from_config(
        config, dtype=torch.bfloat16, attn_implementation="eager").eval()
    ids, copies = tokens(TEXT, config.vocab_size, T + F)
    q_proj = {}
    hooks = [model.model.layers[i].self_attn.q_proj.register_forward_hook(
        lambda m, a, out, i=i: q_proj.__setitem__(i, out)) for i in LAYERS]
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    for h in hooks:
        h.remove()
    # transformers 5.25 names the returned cache `cache`; older versions `past_key_values`.
    cache = out["cache"] if "cache" in out else out["past_key_values"]
    logits = out.logits[0, T - R:T].float()
    positions = torch.arange(T + F).unsqueeze(0)
    expected = {}
    for i in LAYERS:
        keys, values = cache.layers[i].keys, cache.layers[i].values
        head_dim = keys.shape[-1]
        q = q_proj[i].view(1, T + F, -1, head_dim).transpose(1, 2)
        cos, sin = model.model.rotary_emb(q, positions)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        # The same elementwise operations in the same order as the model's apply_rotary_pos_emb,
        # each rounded to bf16 as torch rounds it there, so the result is bit-exact, not close.
        q = (q * cos) + (rotate_half(q) * sin)
        expected[i] = {
            "k": keys[:, :, :T], "v": values[:, :, :T],
            "q_prompt": q[:, :, :T - W], "q_obs": q[:, :, T - W:T], "q_future": q[:, :, T:T + F],
            "q": q[:, :, T - 1:T], "logits": logits,
        }
    return expected, copies, config


def check_file(check, path, expected, copies, config, layer):
    tensors = safetensors.torch.load_file(path)
    with safetensors.safe_open(path, "pt") as f:
        meta = f.metadata() or {}
    check(f"layer{layer}: tensor names", sorted(tensors) == sorted(expected), sorted(tensors))
    for name, want in expected.items():
        got = tensors.get(name)
        if got is None:
            continue
        same = got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want)
        detail = f"{got.dtype} {list(got.shape)}"
        if not same and got.shape == want.shape:
            detail += f", max |difference| {(got.float() - want.float()).abs().max().item():g}"
        check(f"layer{layer}: {name} equals torch's bit for bit", same, detail)
    kv_heads, q_heads = config.num_key_value_heads, config.num_attention_heads
    want_meta = {
        "model_id": f"random:tiny_llama.json:seed{SEED}", "layer": str(layer),
        "n_layers": str(config.num_hidden_layers), "q_heads": str(q_heads), "kv_heads": str(kv_heads),
        "head_dim": str(config.head_dim), "vocab": str(config.vocab_size), "kv_len": str(T),
        "obs_window": str(W), "n_future": str(F), "logits_rows": str(R), "dtype": "bf16",
        "positions": f"k,v: 0..{T - 1}; q_prompt: 0..{T - W - 1}; q_obs: {T - W}..{T - 1}; q: {T - 1}; "
                     f"q_future: {T}..{T + F - 1}; logits: {T - R}..{T - 1}",
        "text_sha256": hashlib.sha256(TEXT.encode("utf-8")).hexdigest(), "text_repeats": str(copies),
        "tokens": str(T + F), "torch": torch.__version__, "transformers": transformers.__version__,
        "capture": "ci/capture/capture_hf.py", "rope": "post-RoPE q and k",
    }
    wrong = {k: (meta.get(k), v) for k, v in want_meta.items() if meta.get(k) != v}
    check(f"layer{layer}: metadata", not wrong, f"(file, expected): {wrong}" if wrong else "")


def attnbench(args, *argv):
    cmd = [args.attnbench, *argv]
    print("$ " + shlex.join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True)


def outcome(p):
    """The exit status, and when the command failed its last line, then the tail of what it printed."""
    if p.returncode == 0:
        return "exit 0"
    printed = (p.stdout + p.stderr).strip()
    return f"exit {p.returncode} ({printed.splitlines()[-1] if printed else 'nothing printed'})\n{printed[-3000:]}"


def check_attnbench(check, args, capture_dir, expected):
    """Step 3: attnbench checks, lists and dumps the suite on the capture."""
    found = os.access(args.attnbench, os.X_OK)
    missing = "" if found else ": missing (build it or pass --attnbench)"
    if not check("attnbench binary", found, args.attnbench + missing):
        return
    layer0 = os.path.join(capture_dir, "layer0.safetensors")
    for i in LAYERS:
        layer = os.path.join(capture_dir, f"layer{i}.safetensors")
        p = attnbench(args, "check", SUITE, "--inputs", layer, "--backends", "cpu,vulkan")
        backends = "cpu,vulkan"
        if p.returncode == 3:
            backends = "cpu"
            p = attnbench(args, "check", SUITE, "--inputs", layer, "--backends", backends)
        check(f"attnbench check on layer{i} ({backends})", p.returncode == 0, outcome(p))

    p = attnbench(args, "list", SUITE, "--inputs", layer0)
    ids = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]  # "ID  [skipped: why]"
    hashes = {m.group(1) if m else None for m in (re.search(r"/s\d+@([0-9a-f]{16})$", i) for i in ids)}
    if not check("attnbench list: case ids ending /s<seed>@<file hash>",
                 p.returncode == 0 and ids and len(hashes) == 1 and None not in hashes,
                 f"{len(ids)} ids, hashes {sorted(map(str, hashes))}, {outcome(p)}"):
        return

    def fits(case, **params):  # the case id's parameters include these (its shapes are the file's)
        return all(re.search(rf"[/,]{k}={v}[,/]", case) for k, v in params.items())

    kv = next((i for i in ids if "budget=" in i and fits(i, kv_len=T, kv_heads=2, head_dim=64)), None)
    sampler = next((i for i in ids if i.startswith("sampling/") and fits(i, vocab=1024)), None) \
        or next((i for i in ids if "kv_len=" not in i and fits(i, vocab=1024)), None)
    for kind, case, names in (("KV", kv, KV_NAMES), ("sampler", sampler, ("logits",))):
        if not check(f"attnbench list: a {kind} case", case is not None):
            continue
        with tempfile.TemporaryDirectory(prefix="attnbench-dump-") as tmp:
            out = os.path.join(tmp, "dump")
            p = attnbench(args, "dump", case, "--inputs", layer0, "--backends", "none", "--out", out)
            path = os.path.join(out, "inputs.safetensors")
            if not check(f"attnbench dump of the {kind} case", p.returncode == 0 and os.path.exists(path), outcome(p)):
                continue
            dumped = safetensors.torch.load_file(path)
        # A KV method may read only some of the query tensors; every method reads k and v.
        required = ("k", "v") if kind == "KV" else ("logits",)
        check(f"attnbench dump of the {kind} case: holds {', '.join(required)}",
              all(n in dumped for n in required), f"holds {sorted(dumped)}")
        for name in (n for n in names if n in dumped):
            got, want = dumped[name], expected[0][name]
            check(f"attnbench dump of the {kind} case: {name} equals torch's bit for bit",
                  got.dtype == want.dtype and got.shape == want.shape and torch.equal(got, want),
                  f"{got.dtype} {list(got.shape)}")


def main():
    p = argparse.ArgumentParser(description="Test ci/capture/capture_hf.py against torch and attnbench.")
    p.add_argument("--attnbench", default=os.path.join(ROOT, "build", "release", "attnbench"),
                   help="the attnbench binary (default build/release/attnbench)")
    p.add_argument("--keep", metavar="DIR", help="capture into DIR and keep it (default: a temporary directory)")
    args = p.parse_args()
    check = Checks()
    check_repeats(check)
    with tempfile.TemporaryDirectory(prefix="attnbench-capture-") as tmp:
        capture_dir = args.keep or os.path.join(tmp, "capture")
        text_file = os.path.join(tmp, "text.txt")
        with open(text_file, "w", encoding="utf-8") as f:
            f.write(TEXT)
        if check("capture_hf.py exits 0", run_capture(text_file, capture_dir) == 0):
            again = os.path.join(tmp, "again")
            files = [f"layer{i}.safetensors" for i in LAYERS]
            check("capture_hf.py again: the same bytes", run_capture(text_file, again) == 0 and all(
                read(os.path.join(capture_dir, f)) == read(os.path.join(again, f)) for f in files))
            expected, copies, config = torch_tensors()
            for i in LAYERS:
                check_file(check, os.path.join(capture_dir, f"layer{i}.safetensors"), expected[i], copies, config, i)
            check_attnbench(check, args, capture_dir, expected)
    sys.exit(0 if check.summary() else 1)


if __name__ == "__main__":
    main()
