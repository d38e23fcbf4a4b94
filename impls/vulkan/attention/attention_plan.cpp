#include "attention_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "attnbench/error.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::attn {

namespace {

Push base_push(const attention::AttentionParams& s) {
  Push p{};
  p.s = s;
  p.plan.rows = static_cast<uint32_t>(s.group * s.q_len);
  return p;
}

// The keys' splits (split_keys over `keys` of them, none longer than max_len) and the grid they give.
void choose_splits(Push& push, uint32_t keys, uint64_t base_groups, uint64_t target, uint32_t step, uint32_t forced,
                   uint32_t max_len = 0) {
  const KeySplits k = split_keys(keys, base_groups, target, step, forced, max_len);
  push.plan.splits = k.splits;
  push.plan.split_len = k.split_len;
  push.plan.groups = static_cast<uint32_t>(base_groups * k.splits);
}

// Index arithmetic in the shaders is 32-bit, and each tensor is one binding. With key_index K and
// V hold cache_cap rows per (sequence, KV head), and kv_cap counts the lists' entries.
std::string binding_limits(const attention::AttentionParams& s, DType dtype, const DeviceView& d) {
  const uint64_t es = dtype_size(dtype);
  const uint64_t rows = static_cast<uint64_t>(s.batch) * s.q_heads * s.q_len;
  const uint64_t keys = static_cast<uint64_t>(s.batch) * s.kv_heads * (s.key_index ? s.cache_cap : s.kv_cap);
  const uint64_t listed = static_cast<uint64_t>(s.batch) * (s.key_index == 2 ? s.kv_heads : 1) * s.kv_cap;
  return over_binding({{"q", rows * s.head_dim * es, es},
                       {"O", rows * s.v_head_dim * es, es},
                       {"k", keys * s.head_dim * es, es},
                       {"v", keys * s.v_stride * es, es},
                       {"key_idx", s.key_index ? listed * 4 : 0, 4},
                       {"key_bias", s.key_bias ? keys * 4 : 0, 4},
                       {"tree_mask", s.tree_mask ? rows / s.q_heads * attention::tree_words(s) * 4 : 0, 4}},
                      d);
}

// What every kernel assumes of the value rows: at least one element each, within their stride.
std::string value_layout(const attention::AttentionParams& s) {
  if (s.v_head_dim < 1 || s.v_stride < s.v_head_dim)
    return cat("v_head_dim=", s.v_head_dim, " with v_stride=", s.v_stride, ": V rows must be 1 or more elements, within their stride");
  return {};
}

Plan plan_split_kv(const attention::AttentionParams& s, DType dtype, const DeviceView& d) {
  Plan p;
  p.push = base_push(s);
  const uint32_t D = static_cast<uint32_t>(s.head_dim), nch = ceil_div(D, 8), rows = p.push.plan.rows;
  const uint32_t DV = static_cast<uint32_t>(s.v_head_dim), vch = ceil_div(DV, 8);
  // Up to 16 lanes per key: a 128-dim 16-bit row is 16 loads of 16 bytes, one per lane. The wider
  // of the key and value rows sets it (a lane past a narrow key row's end adds nothing to the dot).
  const uint32_t T = pow2_floor(std::min({16u, d.min_sg, std::max(nch, vch)}));
  const uint32_t cpl = ceil_div(nch, T), E = 8 * cpl, vcpl = ceil_div(vch, T), EV = 8 * vcpl;
  // Registers: q and the accumulators are RB·(E + EV) floats per lane; at most 64 (more for the
  // largest head dims), so enough workgroups stay resident to keep loads in flight.
  uint32_t rb = std::clamp(64u / (E + EV), 1u, 8u);
  rb = std::min(rb, std::max(rows, 1u));
  const uint32_t U = std::max(cpl, vcpl) == 1 ? 4 : 2;  // keys per lane group per step: 4 or 8 loads in flight per lane
  uint32_t nt = std::max(128u, d.max_sg);
  const auto shared = [&](uint32_t threads, uint32_t r) { return uint64_t{threads / T} * r * (2 + 8 * vch) * 4; };
  while (shared(nt, rb) > d.shared && nt / 2 >= std::max(T, d.max_sg) && (nt / 2) % d.max_sg == 0) nt /= 2;
  while (shared(nt, rb) > d.shared && rb > 1) rb = ceil_div(rb, 2);
  if (shared(nt, rb) > d.shared) {
    p.unsupported = cat("head_dim=", D, " needs ", shared(nt, rb), " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  const uint32_t row_blocks = ceil_div(std::max(rows, 1u), rb);
  rb = ceil_div(std::max(rows, 1u), row_blocks);  // balance the blocks
  p.push.plan.row_blocks = row_blocks;
  const uint64_t base = static_cast<uint64_t>(s.batch) * s.kv_heads * row_blocks;
  // About 16 workgroups per compute unit: several waves, so the last one leaves little idle.
  // The splits cut the keys the rows see (attention_decode.comp): with a window, the last
  // window + q_len − 1 of them from the first row's window start, so the work stays flat in kv_len.
  const auto keys = static_cast<uint32_t>(attention::split_span(s));
  // One step of the key loop (attention_decode.comp), every loop counted: the U loads, then per
  // row the U dots (CPL chunks of 4 and the log2 T shuffles), the maximum, the rescale of EV
  // accumulators and the U accumulations. Split 0 also walks the sinks.
  const uint32_t step = (nt / T) * U, log2t = static_cast<uint32_t>(std::log2(T));
  const uint64_t per_step = 1 + U * (1 + cpl + vcpl) +
                            uint64_t{rb} * (1 + U * (1 + 5 * cpl + log2t) + U + EV + U * (1 + 5 * vcpl));
  const uint32_t max_len = keys_within_loop_cap(d, per_step, step, ceil_div(std::max(s.sinks, 0), step) + 1);
  choose_splits(p.push, keys, base, uint64_t{d.cpu ? 2u : 16u} * d.cus, step, d.forced_splits, max_len);
  p.shader = "attention_decode";
  p.constants = {nt, dtype_code(dtype), D, nch, T, cpl, rb, U, vec16(D, dtype_size(dtype)),
                 DV, vch, vcpl, vec16(static_cast<uint32_t>(s.v_stride), dtype_size(dtype))};
  p.partial_stride = 8 * vch;
  p.shared_bytes = shared(nt, rb);
  return p;
}

Plan plan_tiled(const attention::AttentionParams& s, DType dtype, const DeviceView& d) {
  Plan p;
  p.push = base_push(s);
  const uint32_t D = static_cast<uint32_t>(s.head_dim), DV = static_cast<uint32_t>(s.v_head_dim);
  const uint32_t ct = pow2_floor(std::min(8u, d.min_sg));
  const uint32_t dp = round_up(D, std::max(8u, 4 * ct)), dpv = round_up(DV, std::max(8u, 4 * ct));
  uint32_t tm = 4;
  while (tm > 1 && tm * dpv / ct > 64) tm /= 2;  // accumulators: TM·DPV/CT floats per lane
  // Q tile, K tile (rows padded by a vec4), V tile, P.
  const auto shared = [&](uint32_t br, uint32_t bc) {
    return uint64_t{4} * (uint64_t{br} * dp + uint64_t{bc} * (dp + 4) + uint64_t{bc} * dpv + uint64_t{br} * (bc + 1));
  };
  static const std::pair<uint32_t, uint32_t> kTiles[] = {{64, 32}, {64, 16}, {32, 32}, {32, 16}, {16, 16},
                                                         {32, 8},  {16, 8},  {8, 8},   {16, 4},  {8, 4}, {4, 4}};
  for (auto [br, bc] : kTiles) {
    if (br % tm || bc % ct) continue;
    const uint32_t nt = br / tm * ct;
    if (nt % d.max_sg || nt > std::min(256u, d.max_wg) || shared(br, bc) > d.shared) continue;
    const uint32_t rows = p.push.plan.rows;
    p.push.plan.row_blocks = ceil_div(std::max(rows, 1u), br);
    const uint64_t base = static_cast<uint64_t>(s.batch) * s.kv_heads * p.push.plan.row_blocks;
    // One key tile of attention_prefill.comp, every loop counted: the tile load, S's init and its
    // DP/4 × (TM + TN·(1 + TM)) products, the per-row softmax (2·TN keys, 2·log2 CT shuffles,
    // DPT4 rescales) and O += P·V over BC keys.
    const uint32_t tn = bc / ct, dpt4 = dpv / 4 / ct, nchm = std::max(dp, dpv) / 8;
    const uint64_t per_tile = 1 + ceil_div(uint64_t{bc} * nchm, nt) + tm * (1 + tn) + dp / 4 * (1 + tm + tn * (1 + tm)) +
                              tm * (1 + 2 * tn + 2 * static_cast<uint32_t>(std::log2(ct)) + dpt4) +
                              uint64_t{bc} * (1 + dpt4 + tm * (1 + dpt4));
    choose_splits(p.push, static_cast<uint32_t>(s.kv_cap), base, uint64_t{2} * d.cus, bc, d.forced_splits,
                  keys_within_loop_cap(d, per_tile, bc));
    p.shader = "attention_prefill";
    p.constants = {nt, dtype_code(dtype), D, dp, br, bc, tm, ct, vec16(D, dtype_size(dtype)),
                   DV, dpv, vec16(static_cast<uint32_t>(s.v_stride), dtype_size(dtype))};
    p.partial_stride = dpv;
    p.shared_bytes = shared(br, bc);
    return p;
  }
  p.unsupported = cat("no Q/K/V tile of head_dim=", D, " fits ", d.shared, " bytes of shared memory");
  return p;
}

}  // namespace

uint64_t partial_ml_bytes(const attention::AttentionParams& s, const Plan& p) {
  return static_cast<uint64_t>(s.batch) * s.q_heads * s.q_len * p.push.plan.splits * 8;
}

uint64_t partial_o_bytes(const attention::AttentionParams& s, const Plan& p) {
  return static_cast<uint64_t>(s.batch) * s.q_heads * s.q_len * p.push.plan.splits * p.partial_stride * 4;
}

Plan plan_portable(const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits) {
  const DeviceView d(limits);
  Plan none;
  none.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_shuffle"}, "the portable kernels");
  if (!none.unsupported.empty()) return none;
  if (std::string why = value_layout(s); !why.empty()) {
    none.unsupported = why;
    return none;
  }
  if (std::string why = binding_limits(s, dtype, d); !why.empty()) {
    none.unsupported = why;
    return none;
  }
  // Few rows per KV head (decode, verification steps): the split-KV kernel reads each key once
  // for all of them. Otherwise the tiled kernel, unless no tile fits (very large head_dim).
  Plan p;
  if (s.group * s.q_len > 8) p = plan_tiled(s, dtype, d);
  if (p.shader.empty()) p = plan_split_kv(s, dtype, d);
  if (!p.unsupported.empty()) return p;
  if (p.push.plan.splits > 1 && partial_o_bytes(s, p) > d.max_binding) {
    p.unsupported = cat("split partials of ", partial_o_bytes(s, p), " bytes exceed one binding");
  }
  return p;
}

Plan plan_coopmat_nv(const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits, const std::string& phase) {
  const DeviceView d(limits);
  Plan p;
  if (!limits.has("coopmat_nv")) {
    p.unsupported = "the device does not offer VK_NV_cooperative_matrix with f16 inputs and f32 accumulators";
    return p;
  }
  if (dtype != DType::f16) {
    p.unsupported = cat("dtype ", dtype_name(dtype), ": VK_NV_cooperative_matrix v1 has no bf16, and this variant is f16 only");
    return p;
  }
  if (phase != "prefill") {
    p.unsupported = "decode is memory-bound and served by the portable split-KV kernel; this variant is a prefill kernel";
    return p;
  }
  if (!limits.has("workgroup_explicit_layout16")) {
    p.unsupported = "the device lacks VK_KHR_workgroup_memory_explicit_layout with 16-bit access";
    return p;
  }
  if (!limits.has("subgroup_shuffle") || !limits.has("subgroup_vote") || !limits.has("storage16")) {
    p.unsupported = "the device lacks subgroup shuffle/vote or 16-bit storage";
    return p;
  }
  if (s.head_sparse) {
    p.unsupported = "head_sparse (moh's routed heads): the cooperative-matrix kernel does not walk a row map; the portable "
                    "variant does";
    return p;
  }
  if (s.key_index || s.key_bias || s.tree_mask) {
    p.unsupported = "key_index or key_bias (gather_decode, bias_decode) or tree_mask (tree_decode): the cooperative-matrix "
                    "kernel reads K and V rows by position, adds no key bias and masks causally only; the portable variant takes them";
    return p;
  }
  const uint32_t D = static_cast<uint32_t>(s.head_dim);
  // The kernel stages K and V tiles of one width and accumulates O as D/NN fragments of it.
  if (s.v_head_dim != s.head_dim || s.v_stride != s.head_dim) {
    p.unsupported = cat("v_head_dim=", s.v_head_dim, " (v_stride ", s.v_stride, ") with head_dim=", D,
                        ": the cooperative-matrix kernel needs V rows as wide as K's; the portable variant takes them");
    return p;
  }
  if (D % 16 != 0 || D > 256) {
    p.unsupported = cat("head_dim=", D, ": the cooperative-matrix kernel needs a multiple of 16 up to 256");
    return p;
  }
  if (d.min_sg != d.max_sg || d.min_sg < 16 || d.min_sg % 16 != 0) {
    p.unsupported = cat("subgroup size ", d.min_sg, "..", d.max_sg, ": the kernel needs one fixed size, a multiple of 16");
    return p;
  }
  if (std::string why = binding_limits(s, dtype, d); !why.empty()) {
    p.unsupported = why;
    return p;
  }
  // Shape: 16xNx16 with N = 16 preferred, else 8.
  uint32_t nn = 0;
  const std::vector<MatrixShape>& shapes = limits.coopmat_f16_shapes;
  const auto offers = [&](MatrixShape m) { return std::find(shapes.begin(), shapes.end(), m) != shapes.end(); };
  if (offers({16, 16, 16})) nn = 16;
  else if (offers({16, 8, 16})) nn = 8;
  if (!nn) {
    p.unsupported = cat("no 16x16x16 or 16x8x16 f16 cooperative-matrix shape (device offers: ",
                        matrix_shapes_text(shapes), ")");
    return p;
  }
  const uint32_t sg = d.min_sg, nw = 4, nt = nw * sg, br = nw * 16, ds = D + 8;
  const auto shared_words = [&](uint32_t bc) {
    const uint64_t halves = 2ull * (uint64_t{bc} * ds + uint64_t{nw} * 16 * (bc + 4)) + uint64_t{nw} * 16 * (bc + 8);
    return (halves / 2 + 3) / 4 * 4;
  };
  uint32_t bc = 0;
  for (uint32_t c = 128; c >= 32; c -= 16)
    if (shared_words(c) * 4 <= d.shared) {
      bc = c;
      break;
    }
  if (!bc || nt > d.max_wg) {
    p.unsupported = cat("head_dim=", D, ": no key tile of at least 32 fits ", d.shared, " bytes of shared memory");
    return p;
  }
  p.push = base_push(s);
  p.push.plan.row_blocks = ceil_div(std::max(p.push.plan.rows, 1u), br);
  const uint64_t base = static_cast<uint64_t>(s.batch) * s.kv_heads * p.push.plan.row_blocks;
  choose_splits(p.push, static_cast<uint32_t>(s.kv_cap), base, uint64_t{2} * d.cus, bc, d.forced_splits);
  p.shader = "attention_prefill_coopmat_nv";
  p.constants = {nt, D, bc, 16, nn, 16, sg, static_cast<uint32_t>(shared_words(bc))};
  p.partial_stride = D;
  p.shared_bytes = shared_words(bc) * 4;
  if (p.push.plan.splits > 1 && partial_o_bytes(s, p) > d.max_binding)
    p.unsupported = cat("split partials of ", partial_o_bytes(s, p), " bytes exceed one binding");
  return p;
}

}  // namespace attnbench::vulkan::attn
