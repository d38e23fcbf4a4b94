"""Captures a Hugging Face causal LM's attention tensors and logits for attnbench to replay.

usage: python3 ci/capture/capture_hf.py (--model ID_OR_DIR | --random-config CONFIG.json [--weight-seed N])
           (--text "..." | --text-file F) --layers 0,1 --kv-len T --obs-window W --n-future F
           [--logits-rows R] [--dtype bf16|f16|f32] --out DIR

attnbench ships no weights. It generates its inputs, or replays tensors a user captured from a real
model with this script (docs/real-tensors.md). One forward pass (batch 1, eval mode, no grad,
eager attention, on the CPU, in --dtype) runs over T+F tokens; for each chosen layer it writes
DIR/layer<L>.safetensors holding, under attnbench's input names:

  k, v       [1, kv_heads, T, head_dim]     post-RoPE keys and the values of prompt positions 0..T-1
  q_prompt   [1, q_heads, T-W, head_dim]    post-RoPE queries of positions 0..T-W-1
  q_obs      [1, q_heads, W, head_dim]      positions T-W..T-1: the observation window
  q_future   [1, q_heads, F, head_dim]      positions T..T+F-1: held-out queries after the prompt
  q          [1, q_heads, 1, head_dim]      position T-1, the window's last query: the query of a
                                            decode step over the prompt (attention's decode phase,
                                            a selection-only method's step)
  logits     [R, vocab] float32             the next-token logits at positions T-R..T-1

q, k and v are in the model's dtype, the very values torch held; the metadata (all strings) names
the model, layer, shapes, positions, text hash and library versions. The header's keys are sorted,
so the same model, text and options give the same bytes (attnbench names a file by its hash).

Why a monkeypatch: the post-RoPE query exists only inside the attention forward, between
apply_rotary_pos_emb and the attention kernel; the KV cache keeps post-RoPE keys, but no module
output or cache keeps the query. So the script replaces apply_rotary_pos_emb in the attention's
module (the attention looks it up there on each call) with a wrapper that records its outputs for
the layer running, which a forward pre-hook on each decoder layer's self_attn names. V is the
v_proj output, viewed as the attention views it. A model whose attention module has no
apply_rotary_pos_emb, or does not call it, is refused with a message.

--model loads the weights and tokenizer with from_pretrained (a local directory or a hub id).
--random-config builds AutoModelForCausalLM.from_config(AutoConfig.for_model(**CONFIG)) after
torch.manual_seed(--weight-seed): nothing is downloaded, and the model id recorded is
random:<config file name>:seed<N>. Such a model has no tokenizer: the tokens are the text's UTF-8
bytes, each taken modulo vocab_size. Either way, a text shorter than T+F tokens is repeated, the
copies joined by "\\n", until it is long enough (metadata text_repeats: the number of copies), and
the tokens are cut to exactly T+F.

Needs torch, transformers (4.56 or newer) and safetensors, in a virtual environment outside the
repository.
"""

import argparse
import hashlib
import json
import os
import struct
import sys

import safetensors.torch
import torch
import transformers

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
SCRIPT = "ci/capture/capture_hf.py"


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="capture_hf.py",
        description="Capture post-RoPE q and k, v and logits of chosen layers of a Hugging Face causal LM "
                    "as .safetensors files attnbench replays (docs/real-tensors.md).")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", metavar="ID_OR_DIR", help="from_pretrained: a local directory or a hub id")
    source.add_argument("--random-config", metavar="CONFIG.json",
                        help="a config dict (with model_type) for a randomly initialised model; nothing is downloaded")
    p.add_argument("--weight-seed", type=int, metavar="N",
                   help="torch.manual_seed before the random model is built (default 0; --random-config only)")
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--text", help="the prompt text")
    text.add_argument("--text-file", metavar="F", help="a UTF-8 file holding the prompt text")
    p.add_argument("--layers", required=True, metavar="L,L,...", help="decoder layers to capture, e.g. 0,1")
    p.add_argument("--kv-len", type=int, required=True, metavar="T", help="prompt tokens: the KV cache's length")
    p.add_argument("--obs-window", type=int, required=True, metavar="W",
                   help="the prompt's last W queries are q_obs, the rest q_prompt")
    p.add_argument("--n-future", type=int, required=True, metavar="F", help="queries after the prompt (q_future)")
    p.add_argument("--logits-rows", type=int, default=8, metavar="R",
                   help="next-token logits at the prompt's last R positions (default 8)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16", help="model dtype (default bf16)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for layer<L>.safetensors")
    args = p.parse_args(argv)
    if args.model and args.weight_seed is not None:
        p.error("--weight-seed goes with --random-config")
    if args.weight_seed is None:
        args.weight_seed = 0
    try:
        args.layers = sorted({int(x) for x in args.layers.split(",")})
    except ValueError:
        p.error(f"--layers: expected comma-separated integers, got {args.layers!r}")
    T, W, F, R = args.kv_len, args.obs_window, args.n_future, args.logits_rows
    if not 0 < W < T:
        p.error(f"--obs-window must be in 1..kv_len-1 (q_prompt needs a row), got {W} with kv_len {T}")
    if F < 1:
        p.error(f"--n-future must be at least 1, got {F}")
    if not 0 < R <= T:
        p.error(f"--logits-rows must be in 1..kv_len, got {R} with kv_len {T}")
    return args


def read_text(args):
    if args.text is not None:
        text = args.text
    else:
        with open(args.text_file, encoding="utf-8") as f:
            text = f.read()
    if not text:
        sys.exit("capture_hf.py: the text is empty")
    return text


def load_model(args):
    """(model, encode, model_id): encode maps a text to a list of token ids."""
    common = {"dtype": DTYPES[args.dtype], "attn_implementation": "eager"}
    if args.model:
        model = transformers.AutoModelForCausalLM.from_pretrained(args.model, **common)
        tokenizer = transformers.AutoTokenizer.from_pretrained(args.model)
        encode = lambda s: tokenizer(s)["input_ids"]  # noqa: E731
        model_id = args.model
    else:
        with open(args.random_config) as f:
            config = transformers.AutoConfig.for_model(**json.load(f))
        torch.manual_seed(args.weight_seed)
        model = transformers.AutoModelForCausalLM.from_config(config, **common)
        vocab = config.vocab_size
        encode = lambda s: [b % vocab for b in s.encode("utf-8")]  # noqa: E731
        model_id = f"random:{os.path.basename(args.random_config)}:seed{args.weight_seed}"
    return model.eval(), encode, model_id


def tokenize(text, encode, n_tokens):
    """(ids [1, n_tokens], copies): the fewest copies of the text, joined by "\\n", that make n_tokens tokens."""
    def enough(copies):
        return len(encode("\n".join([text] * copies))) >= n_tokens

    short, copies = 0, 1  # too few copies, enough copies: double, then bisect
    while not enough(copies):
        short, copies = copies, copies * 2
    while copies - short > 1:
        mid = (short + copies) // 2
        short, copies = (short, mid) if enough(mid) else (mid, copies)
    ids = encode("\n".join([text] * copies))[:n_tokens]
    return torch.tensor([ids], dtype=torch.long), copies


class Recorder:
    """Records post-RoPE q and k (from apply_rotary_pos_emb) and v (from v_proj) of chosen layers."""

    def __init__(self, model, layers):
        self.layers = set(layers)
        self.running = None
        self.qk, self.v = {}, {}
        decoder = model.get_decoder()
        layers_of = getattr(decoder, "layers", None)
        if layers_of is None or not all(hasattr(layer, "self_attn") for layer in layers_of):
            sys.exit(f"capture_hf.py: {type(decoder).__name__} has no .layers[i].self_attn, "
                     "so this script cannot find its attention")
        self.attentions = [layer.self_attn for layer in layers_of]
        bad = [i for i in layers if not 0 <= i < len(self.attentions)]
        if bad:
            sys.exit(f"capture_hf.py: --layers {bad} out of range: the model has {len(self.attentions)} layers")
        if not hasattr(self.attentions[0], "v_proj"):
            sys.exit(f"capture_hf.py: {type(self.attentions[0]).__name__} has no v_proj (fused projections?), "
                     "so its values cannot be captured by this script")
        self.module = sys.modules[type(self.attentions[0]).__module__]
        self.original = getattr(self.module, "apply_rotary_pos_emb", None)
        if self.original is None:
            sys.exit(f"capture_hf.py: {self.module.__name__} has no apply_rotary_pos_emb, so its post-RoPE "
                     "queries cannot be captured by this script")

    def rotary(self, *args, **kwargs):
        q, k = self.original(*args, **kwargs)
        if self.running in self.layers:
            self.qk[self.running] = (q, k)
        return q, k

    def __enter__(self):
        self.hooks = []
        for i, attn in enumerate(self.attentions):
            self.hooks.append(attn.register_forward_pre_hook(lambda m, a, i=i: setattr(self, "running", i)))
            if i in self.layers:
                self.hooks.append(attn.v_proj.register_forward_hook(lambda m, a, out, i=i: self.v.__setitem__(i, out)))
        self.module.apply_rotary_pos_emb = self.rotary
        return self

    def __exit__(self, *exc):
        self.module.apply_rotary_pos_emb = self.original
        for h in self.hooks:
            h.remove()

    def tensors(self, layer, n_tokens):
        """(q, k, v) of one layer, [1, heads, n_tokens, head_dim] each."""
        if layer not in self.qk:
            sys.exit(f"capture_hf.py: layer {layer}'s attention did not call {self.module.__name__}."
                     "apply_rotary_pos_emb, so its post-RoPE queries cannot be captured by this script")
        q, k = self.qk[layer]
        head_dim = k.shape[-1]
        if q.dim() != 4 or q.shape[0] != 1 or q.shape[2] != n_tokens or k.shape[2] != n_tokens:
            sys.exit(f"capture_hf.py: apply_rotary_pos_emb returned q {list(q.shape)}, k {list(k.shape)}; "
                     f"expected [1, heads, {n_tokens}, head_dim]")
        v = self.v[layer].view(1, n_tokens, -1, head_dim).transpose(1, 2)
        return q, k, v


def forward(model, ids, layers):
    """({layer: (q, k, v)}, logits [tokens, vocab]) of one forward pass."""
    with Recorder(model, layers) as rec, torch.no_grad():
        logits = model(input_ids=ids, use_cache=False).logits[0]
    return {layer: rec.tensors(layer, ids.shape[1]) for layer in layers}, logits


def layer_file(q, k, v, logits, T, W, F, R):
    """The tensors of one layer's file, contiguous, on the CPU."""
    tensors = {
        "k": k[:, :, :T], "v": v[:, :, :T],
        "q_prompt": q[:, :, :T - W], "q_obs": q[:, :, T - W:T], "q_future": q[:, :, T:T + F], "q": q[:, :, T - 1:T],
        "logits": logits[T - R:T].float(),
    }
    return {name: t.detach().contiguous().cpu() for name, t in tensors.items()}


def metadata(args, model, model_id, text, copies, q, k, vocab, layer):
    T, W, F, R = args.kv_len, args.obs_window, args.n_future, args.logits_rows
    return {
        "model_id": model_id,
        "layer": str(layer),
        "n_layers": str(model.config.num_hidden_layers),
        "q_heads": str(q.shape[1]),
        "kv_heads": str(k.shape[1]),
        "head_dim": str(k.shape[3]),
        "vocab": str(vocab),
        "kv_len": str(T),
        "obs_window": str(W),
        "n_future": str(F),
        "logits_rows": str(R),
        "dtype": args.dtype,
        "positions": f"k,v: 0..{T - 1}; q_prompt: 0..{T - W - 1}; q_obs: {T - W}..{T - 1}; q: {T - 1}; "
                     f"q_future: {T}..{T + F - 1}; logits: {T - R}..{T - 1}",
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "text_repeats": str(copies),
        "tokens": str(T + F),
        "tokenizer": "the model's" if args.model else "UTF-8 bytes modulo vocab",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "capture": SCRIPT,
        "rope": "post-RoPE q and k",
    }


def save(path, tensors, meta):
    """Writes safetensors' serialisation with its header's keys sorted: the package writes the
    metadata in an order that changes from run to run, and the same capture should be the same bytes."""
    data = safetensors.torch.save(tensors, metadata=meta)
    n = struct.unpack("<Q", data[:8])[0]
    header = json.dumps(json.loads(data[8:8 + n]), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    header = header.encode("utf-8")
    header += b" " * (-len(header) % 8)  # the format pads the header to a multiple of 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + data[8 + n:])


def main(argv):
    args = parse_args(argv)
    text = read_text(args)
    model, encode, model_id = load_model(args)
    T, W, F, R = args.kv_len, args.obs_window, args.n_future, args.logits_rows
    ids, copies = tokenize(text, encode, T + F)
    captured, logits = forward(model, ids, args.layers)
    os.makedirs(args.out, exist_ok=True)
    for layer, (q, k, v) in captured.items():
        tensors = layer_file(q, k, v, logits, T, W, F, R)
        meta = metadata(args, model, model_id, text, copies, q, k, logits.shape[-1], layer)
        path = os.path.join(args.out, f"layer{layer}.safetensors")
        save(path, tensors, meta)
        shapes = " ".join(f"{name} {list(t.shape)}" for name, t in tensors.items())
        print(f"{path}: {shapes}; q, k, v {args.dtype}, logits f32")


if __name__ == "__main__":
    main(sys.argv[1:])
