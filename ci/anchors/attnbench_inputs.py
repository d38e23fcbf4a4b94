"""attnbench's attention inputs, regenerated bit for bit from a case id (docs/design.md "Random numbers").

Two implementations of the same recipe:
  * scalar, pure Python (exact: Python floats are IEEE doubles with no fused operations), for
    checking, and for hashing small cases the way attnbench does (harness/src/hash.cpp);
  * vectorised with torch (CPU or CUDA, int64 and float64 element-wise ops only, each a separately
    rounded IEEE operation), for model-sized tensors.
The recipe: elements 2k and 2k+1 of tensor "x" are the Box-Muller pair (r cos, r sin) of
Philox4x32-10 block k of the stream (seed, FNV-1a-32("x"), domain 0), with attnbench's own log,
cos and sin (harness/src/detmath.cpp), rounded once from fp64 to the case dtype; K and V beyond a ragged
sequence's length are NaN; kv_len[b] (b >= 1, ragged) = min(cap, floor(u_b * (cap + 1))).

`python3 attnbench_inputs.py --verify RESULTS.json` regenerates the inputs of every row of an
attnbench results file (small cases) and compares their hash with the row's hashes.inputs.
"""

import json
import math
import struct
import sys

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85

# --- case ids ----------------------------------------------------------------------------------


def parse_case_id(case_id):
    """method[/phase]/k=v,.../dtype/s<seed> -> dict."""
    parts = case_id.split("/")
    if len(parts) == 5:
        method, phase, kv, dtype, seed = parts
    elif len(parts) == 4:
        method, kv, dtype, seed = parts
        phase = ""
    else:
        raise ValueError(f"not a case id: {case_id}")
    params = {}
    for item in kv.split(","):
        k, v = item.split("=", 1)
        params[k] = {"true": True, "false": False}.get(v, v)
        if isinstance(params[k], str):
            params[k] = int(v) if v.lstrip("-").isdigit() else float(v)
    if not seed.startswith("s"):
        raise ValueError(f"bad seed segment in {case_id}")
    return {"id": case_id, "method": method, "phase": phase, "params": params, "dtype": dtype, "seed": int(seed[1:])}


def attention_shape(case):
    p = case["params"]
    hq = p["q_heads"]
    # The exact-attention methods by name: this recipe is theirs alone (mha: one KV head per query
    # head, mqa: one in all, gqa: kv_heads).
    hkv = {"mha": hq, "mqa": 1}.get(case["method"], p.get("kv_heads", hq))
    return {"batch": p["batch"], "q_heads": hq, "kv_heads": hkv, "head_dim": p["head_dim"], "q_len": p["q_len"],
            "kv_cap": p["kv_len"], "causal": p["causal"], "ragged": p.get("ragged", False),
            "head_lengths": p.get("head_lengths", False)}


# --- scalar reference implementation -----------------------------------------------------------


def fnv1a32(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & MASK32
    return h


def philox4x32_10(c, k):
    c0, c1, c2, c3 = c
    k0, k1 = k
    for r in range(10):
        if r:
            k0 = (k0 + PHILOX_W0) & MASK32
            k1 = (k1 + PHILOX_W1) & MASK32
        p0 = PHILOX_M0 * c0
        p1 = PHILOX_M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
    return c0, c1, c2, c3


def _block(seed, stream, domain, index):
    return philox4x32_10((index & MASK32, (index >> 32) & MASK32, stream, domain), (seed & MASK32, (seed >> 32) & MASK32))


def _u53(w0, w1):
    return (float(w0 >> 5) * 67108864.0 + float(w1 >> 6)) * (2.0 ** -53)


def uniform_f64(seed, name, n):
    stream = fnv1a32(name)
    b = _block(seed, stream, 0, (2 * n) >> 2)
    return _u53(b[(2 * n) & 3], b[(2 * n + 1) & 3])


LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
SQRT_HALF = 0.70710678118654752440
HALF_PI = 1.57079632679489661923
SIN_COEF = [1.0 / 355687428096000.0, 1.0 / 1307674368000.0, 1.0 / 6227020800.0, 1.0 / 39916800.0, 1.0 / 362880.0,
            1.0 / 5040.0, 1.0 / 120.0, 1.0 / 6.0]
SIN_SIGN = [1, -1, 1, -1, 1, -1, 1, -1]  # s = s*t2 - c for the -1 entries (the first is the start)
COS_COEF = [1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, 1.0 / 87178291200.0, 1.0 / 479001600.0,
            1.0 / 3628800.0, 1.0 / 40320.0, 1.0 / 720.0, 1.0 / 24.0, 0.5]
COS_SIGN = [1, -1, 1, -1, 1, -1, 1, -1, 1]
LOG_COEF = [1.0 / k for k in range(23, 1, -2)]  # 1/23, 1/21, ..., 1/3


def det_log(x):
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    e = (bits >> 52) & 0x7FF
    if e == 0:
        x *= 2.0 ** 54
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        e = ((bits >> 52) & 0x7FF) - 54
    e -= 1023
    m = struct.unpack("<d", struct.pack("<Q", (bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000))[0]
    if m > 2.0 * SQRT_HALF:
        m *= 0.5
        e += 1
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    p = 1.0 / 25.0
    for c in LOG_COEF:
        p = p * s2 + c
    log_m = 2.0 * s + 2.0 * s * s2 * p
    de = float(e)
    return de * LN2_HI + (log_m + de * LN2_LO)


def _poly(coef, signs, t2):
    v = coef[0]
    for c, sg in zip(coef[1:], signs[1:]):
        v = v * t2 + c if sg > 0 else v * t2 - c
    return v


def _sin_small(t):
    t2 = t * t
    return t + t * t2 * _poly(SIN_COEF, SIN_SIGN, t2)


def _cos_small(t):
    t2 = t * t
    return 1.0 - t2 * _poly(COS_COEF, COS_SIGN, t2)


def _cos_quarter(f):
    return _cos_small(f * HALF_PI) if f <= 0.5 else _sin_small((1.0 - f) * HALF_PI)


def _sin_quarter(f):
    return _sin_small(f * HALF_PI) if f <= 0.5 else _cos_small((1.0 - f) * HALF_PI)


def det_cos_2pi(u):
    t = u * 4.0
    k = int(t)
    f = t - k
    q = k & 3
    if q == 0:
        return _cos_quarter(f)
    if q == 1:
        return -_sin_quarter(f)
    if q == 2:
        return -_cos_quarter(f)
    return _sin_quarter(f)


def det_sin_2pi(u):
    t = u * 4.0
    k = int(t)
    f = t - k
    q = k & 3
    if q == 0:
        return _sin_quarter(f)
    if q == 1:
        return _cos_quarter(f)
    if q == 2:
        return -_sin_quarter(f)
    return -_cos_quarter(f)


def normal(seed, stream, n):
    b = _block(seed, stream, 0, n >> 1)  # one block per pair of elements
    u1 = _u53(b[0], b[1])
    u2 = _u53(b[2], b[3])
    radius = math.sqrt(-2.0 * det_log(1.0 - u1))
    z = radius * (det_sin_2pi(u2) if n & 1 else det_cos_2pi(u2))
    return 0.0 + 1.0 * z  # fill_normal: mean + scale·N


FORMATS = {"f16": (11, -14, 15), "bf16": (8, -126, 127)}


def round_binary(x, p, emin, emax):
    if x == 0.0 or not math.isfinite(x):
        return x
    a = abs(x)
    e = math.frexp(a)[1] - 1
    if e > emax:
        return math.copysign(math.inf, x)
    e = max(e, emin)
    spacing = math.ldexp(1.0, e - (p - 1))
    r = round(a / spacing) * spacing  # Python rounds halves to even
    if math.frexp(r)[1] - 1 > emax:
        return math.copysign(math.inf, x)
    return math.copysign(r, x)


def encode(dtype, v):
    """Bytes of one element as attnbench stores it (HostTensor::set)."""
    if dtype == "f32":
        return struct.pack("<f", v)
    if dtype == "i32":
        return struct.pack("<i", int(v))
    if math.isnan(v):
        return struct.pack("<H", {"f16": 0x7E00, "bf16": 0x7FC0}[dtype])
    r = round_binary(v, *FORMATS[dtype])
    if dtype == "f16":
        return struct.pack("<e", r)
    return struct.pack("<H", struct.unpack("<I", struct.pack("<f", r))[0] >> 16)


def sequence_lengths(case, shape):
    if shape["head_lengths"]:  # kv_len per (sequence, KV head): not ported
        raise ValueError(f"{case['id']}: head_lengths=true is not ported; attnbench dump gives its inputs")
    lens = [shape["kv_cap"]] * shape["batch"]
    if shape["ragged"]:
        for b in range(1, shape["batch"]):
            lens[b] = min(shape["kv_cap"], int(uniform_f64(case["seed"], "kv_len", b) * float(shape["kv_cap"] + 1)))
    return lens


def tensor_shapes(shape):
    s = shape
    return {"q": [s["batch"], s["q_heads"], s["q_len"], s["head_dim"]],
            "k": [s["batch"], s["kv_heads"], s["kv_cap"], s["head_dim"]],
            "v": [s["batch"], s["kv_heads"], s["kv_cap"], s["head_dim"]]}


def scalar_value(case, shape, lens, name, n):
    """Element n (flat) of tensor q, k or v, as the fp64 value before rounding (NaN for padding)."""
    if name in ("k", "v"):
        d, cap, hkv = shape["head_dim"], shape["kv_cap"], shape["kv_heads"]
        j = (n // d) % cap
        b = n // (d * cap * hkv)
        if j >= lens[b]:
            return math.nan
    return normal(case["seed"], fnv1a32(name), n)


def scalar_inputs(case):
    """{name: (dtype, shape, bytes)} of every input, as attnbench generates them."""
    shape = attention_shape(case)
    lens = sequence_lengths(case, shape)
    out = {}
    for name, dims in tensor_shapes(shape).items():
        count = math.prod(dims)
        out[name] = (case["dtype"], dims, b"".join(encode(case["dtype"], scalar_value(case, shape, lens, name, n))
                                                   for n in range(count)))
    out["kv_len"] = ("i32", [shape["batch"]], b"".join(struct.pack("<i", x) for x in lens))
    return out


# --- attnbench's content hash (harness/src/hash.cpp, HostTensor::hash, hash_tensors) -------------

HASH_A, HASH_B, HASH_C = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _mix(x):
    x ^= x >> 30
    x = (x * HASH_B) & MASK64
    x ^= x >> 27
    x = (x * HASH_C) & MASK64
    return x ^ (x >> 31)


def hash64(data, seed=0):
    lanes = [seed ^ HASH_A, (seed + HASH_B) & MASK64, seed ^ HASH_C, (seed - HASH_A) & MASK64]
    i = 0
    while i + 32 <= len(data):
        for k in range(4):
            w = int.from_bytes(data[i + 8 * k:i + 8 * k + 8], "little")
            lanes[k] = ((lanes[k] ^ w) * HASH_A) & MASK64
            lanes[k] ^= lanes[k] >> 29
        i += 32
    h = _mix(lanes[0]) ^ ((_mix(lanes[1]) * 3) & MASK64) ^ ((_mix(lanes[2]) * 5) & MASK64) ^ ((_mix(lanes[3]) * 7) & MASK64)
    for byte in data[i:]:
        h = ((h ^ byte) * HASH_B) & MASK64
    return _mix(h ^ len(data))


def hash_tensors(tensors):
    h = 0
    for name in sorted(tensors):
        dtype, dims, raw = tensors[name]
        th = hash64(dtype.encode())
        th = hash64(b"".join(struct.pack("<q", d) for d in dims), th)
        th = hash64(raw, th)
        h = hash64(name.encode(), h)
        h = hash64(f"{th:016x}".encode(), h)
    return f"{h:016x}"


# --- vectorised implementation (numpy or torch) -------------------------------------------------
# Only int64 and float64 element-wise operations, each one separately rounded IEEE operation, so
# numpy (the unit test, here) and torch (the GPU machine) give the scalar path's bits.


class Ops:
    """The few array operations the vectorised recipe needs, for numpy or torch."""

    def __init__(self, lib, device=None):
        self.lib, self.device = lib, device
        self.is_torch = lib.__name__ == "torch"

    def arange(self, first, count):
        if self.is_torch:
            return self.lib.arange(first, first + count, dtype=self.lib.int64, device=self.device)
        return self.lib.arange(first, first + count, dtype=self.lib.int64)

    def f64(self, x):  # int64 values -> float64 (exact below 2^53)
        return x.double() if self.is_torch else x.astype(self.lib.float64)

    def i64_trunc(self, x):  # float64 -> int64, toward zero
        return x.to(self.lib.int64) if self.is_torch else x.astype(self.lib.int64)

    def bits(self, x):  # float64 -> its int64 bit pattern
        return x.view(self.lib.int64)

    def from_bits(self, i):  # int64 bit pattern -> float64
        return i.view(self.lib.float64)

    def exponent(self, a):  # frexp's exponent, as int64
        e = self.lib.frexp(a)[1]
        return e.to(self.lib.int64) if self.is_torch else e.astype(self.lib.int64)

    def full_like(self, x, v):
        return self.lib.full_like(x, v)

    def where(self, c, a, b):
        return self.lib.where(c, a, b)


def _mulhilo(m, c):
    """(hi, lo) 32-bit halves of m·c for a constant m < 2^32 and int64 c in [0, 2^32), without
    overflowing int64: split m into 16-bit halves."""
    m_lo, m_hi = m & 0xFFFF, m >> 16
    lo_prod = c * m_lo  # < 2^48
    hi_prod = c * m_hi  # < 2^48
    hi = (hi_prod + (lo_prod >> 16)) >> 16
    lo = (((hi_prod & 0xFFFF) << 16) + lo_prod) & MASK32
    return hi, lo


def philox_blocks(ops, seed, stream, domain, index):
    """Philox4x32-10 of blocks `index` (int64 array) -> four int64 arrays of 32-bit words."""
    c0 = index & MASK32
    c1 = index >> 32
    c2 = ops.full_like(index, stream)
    c3 = ops.full_like(index, domain)
    k0, k1 = seed & MASK32, (seed >> 32) & MASK32
    for r in range(10):
        if r:
            k0 = (k0 + PHILOX_W0) & MASK32
            k1 = (k1 + PHILOX_W1) & MASK32
        hi0, lo0 = _mulhilo(PHILOX_M0, c0)
        hi1, lo1 = _mulhilo(PHILOX_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def _u53_v(ops, w0, w1):
    return (ops.f64(w0 >> 5) * 67108864.0 + ops.f64(w1 >> 6)) * (2.0 ** -53)


def det_log_v(ops, x):
    """det_log for x in the normal range (1 - u is, for every fp64 uniform u)."""
    bits = ops.bits(x)
    e = ((bits >> 52) & 0x7FF) - 1023
    m = ops.from_bits((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > 2.0 * SQRT_HALF
    m = ops.where(big, m * 0.5, m)
    e = ops.where(big, e + 1, e)
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    p = ops.full_like(s, 1.0 / 25.0)
    for c in LOG_COEF:
        p = p * s2 + c
    log_m = 2.0 * s + 2.0 * s * s2 * p
    de = ops.f64(e)
    return de * LN2_HI + (log_m + de * LN2_LO)


def det_cos_sin_2pi_v(ops, u):
    t = u * 4.0
    k = ops.i64_trunc(t)  # u >= 0
    f = t - ops.f64(k)
    first = f <= 0.5
    a = ops.where(first, f * HALF_PI, (1.0 - f) * HALF_PI)
    a2 = a * a
    sin_a = a + a * a2 * _poly(SIN_COEF, SIN_SIGN, a2)
    cos_a = 1.0 - a2 * _poly(COS_COEF, COS_SIGN, a2)
    cos_q = ops.where(first, cos_a, sin_a)  # cos of f·π/2
    sin_q = ops.where(first, sin_a, cos_a)  # sin of f·π/2
    q = k & 3
    cos_u = ops.where(q == 0, cos_q, ops.where(q == 1, -sin_q, ops.where(q == 2, -cos_q, sin_q)))
    sin_u = ops.where(q == 0, sin_q, ops.where(q == 1, cos_q, ops.where(q == 2, -sin_q, -cos_q)))
    return cos_u, sin_u


def normals_v(ops, seed, stream, first, count):
    """Elements [first, first + count): block k gives the pair 2k (r cos) and 2k+1 (r sin)."""
    k0 = first >> 1
    blocks = ((first + count + 1) >> 1) - k0
    w0, w1, w2, w3 = philox_blocks(ops, seed, stream, 0, ops.arange(k0, blocks))
    u1, u2 = _u53_v(ops, w0, w1), _u53_v(ops, w2, w3)
    radius = ops.lib.sqrt(-2.0 * det_log_v(ops, 1.0 - u1))  # IEEE sqrt, correctly rounded
    cos_u, sin_u = det_cos_sin_2pi_v(ops, u2)
    pairs = ops.lib.stack([radius * cos_u, radius * sin_u], 1).reshape(-1)
    start = first - 2 * k0
    return 0.0 + 1.0 * pairs[start:start + count]


def round_binary_v(ops, x, dtype):
    """fp64 -> the nearest value of a 16-bit float format, ties to even, still as fp64 (finite x)."""
    p, emin, _ = FORMATS[dtype]
    a = abs(x)
    e = ops.exponent(a) - 1
    e = ops.where(e < emin, ops.full_like(e, emin), e)
    spacing = ops.from_bits((e - (p - 1) + 1023) << 52)  # 2^(e-p+1), built from its bits
    r = ops.lib.round(a / spacing) * spacing  # exact quotient and product; round() ties to even
    return ops.lib.copysign(r, x)


def torch_inputs(torch, case, device, chunk=1 << 24):
    """q, k, v (torch tensors in the case dtype on `device`) and the sequence lengths."""
    ops = Ops(torch, device)
    shape = attention_shape(case)
    lens = sequence_lengths(case, shape)
    tdtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[case["dtype"]]
    out = {}
    for name, dims in tensor_shapes(shape).items():
        count = math.prod(dims)
        t = torch.empty(count, dtype=tdtype, device=device)
        stream = fnv1a32(name)
        for first in range(0, count, chunk):
            m = min(chunk, count - first)
            x = normals_v(ops, case["seed"], stream, first, m)
            # f16/bf16: the rounded value is representable, so the cast is exact; f32: the cast
            # rounds to nearest even, as attnbench's does.
            t[first:first + m] = (x if case["dtype"] == "f32" else round_binary_v(ops, x, case["dtype"])).to(tdtype)
        t = t.view(*dims)
        if name in ("k", "v"):
            for b, length in enumerate(lens):
                t[b, :, length:, :] = float("nan")
        out[name] = t
    return out, lens


def numpy_encoded(np, case, name, first, count):
    """Bytes of elements [first, first + count) of q (no padding) by the vectorised recipe with
    numpy: the unit test compares them with the scalar path."""
    x = normals_v(Ops(np), case["seed"], fnv1a32(name), first, count)
    if case["dtype"] == "f32":
        return x.astype(np.float32).tobytes()
    r = round_binary_v(Ops(np), x, case["dtype"])
    if case["dtype"] == "f16":
        return r.astype(np.float16).tobytes()
    return (r.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()


def verify_prefix(torch, case, tensors, lens, count=2048):
    """Compares the first `count` elements of each tensor with the scalar implementation, bit for
    bit; returns the number of mismatches."""
    shape = attention_shape(case)
    bad = 0
    for name, t in tensors.items():
        flat = t.reshape(-1)
        m = min(count, flat.numel())
        got = flat[:m].cpu()
        raw = bytes(got.view(torch.int16 if got.element_size() == 2 else torch.int32).numpy().tobytes())
        want = b"".join(encode(case["dtype"], scalar_value(case, shape, lens, name, n)) for n in range(m))
        bad += sum(1 for i in range(0, len(raw), got.element_size())
                   if raw[i:i + got.element_size()] != want[i:i + got.element_size()])
    return bad


# --- command line -------------------------------------------------------------------------------


def verify_results(path, max_elements=1 << 16):
    """Regenerates the inputs of every small case of a results file and compares hashes."""
    doc = json.load(open(path))
    seen, bad = set(), 0
    for row in doc["benchmarks"]:
        rec = row.get("attnbench", {})
        case_id, want = rec.get("case_id"), rec.get("hashes", {}).get("inputs")
        if not case_id or not want or case_id in seen:
            continue
        seen.add(case_id)
        case = parse_case_id(case_id)
        if case["method"] not in ("mha", "mqa", "gqa"):  # exact attention: this port's only recipe
            continue
        shape = attention_shape(case)
        if shape["head_lengths"] or sum(math.prod(d) for d in tensor_shapes(shape).values()) > max_elements:
            continue
        got = hash_tensors(scalar_inputs(case))
        status = "ok" if got == want else "MISMATCH"
        bad += got != want
        print(f"{status} {got} {want} {case_id}")
    if not seen:
        print("no rows with input hashes", file=sys.stderr)
        return 1
    return 1 if bad else 0


def check_vectorised(count=4096):
    """The numpy path against the scalar one on every dtype (exit 0 = equal; 77 = no numpy)."""
    try:
        import numpy as np
    except ImportError:
        print("numpy is not installed: skipped")
        return 77
    bad = 0
    for dtype in ("f32", "f16", "bf16"):
        for seed in (1, 0x0123456789ABCDEF):
            case = {"seed": seed, "dtype": dtype}
            first = 1000003
            got = numpy_encoded(np, case, "q", first, count)
            want = b"".join(encode(dtype, normal(seed, fnv1a32("q"), n)) for n in range(first, first + count))
            size = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
            mism = sum(1 for i in range(0, len(want), size) if got[i:i + size] != want[i:i + size])
            print(f"{'ok' if mism == 0 else 'MISMATCH'} {dtype} seed {seed}: {mism} of {count} differ")
            bad += mism
    # Rounding edge cases the normals rarely hit: f16 subnormals, exact ties, values next to ties.
    specials = [0.0, 1.0, -2.5, 6.0e-8, 2.0 ** -24, 1.5 * 2.0 ** -24, 3.0e-6, 6.1e-5, -6.1e-5, 1.0 + 2.0 ** -11,
                1.0 + 3 * 2.0 ** -11, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8, (1.0 + 2.0 ** -8) * (1 + 2.0 ** -40), 65504.0,
                -1.0e-40, 3.4e38]
    for dtype in ("f16", "bf16"):
        p, emin, emax = FORMATS[dtype]
        got = round_binary_v(Ops(np), np.array(specials), dtype)
        want = [round_binary(x, p, emin, emax) for x in specials]
        mism = sum(1 for g, w in zip(got.tolist(), want) if g != w and not (math.isinf(w) and g > 65504.0))
        print(f"{'ok' if mism == 0 else 'MISMATCH'} {dtype} rounding edge cases: {mism} of {len(specials)} differ")
        bad += mism
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--verify":
        sys.exit(verify_results(sys.argv[2]))
    if len(sys.argv) == 2 and sys.argv[1] == "--check-vectorised":
        sys.exit(check_vectorised())
    print(__doc__)
    sys.exit(2)
