#include "snapkv_plan.h"

#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::snapkv {

namespace {

constexpr uint64_t kMaxSplitKeys = 8192;

struct Tile {
  uint32_t br, bc, dk;
};

uint64_t scores_shared_bytes(const Tile& t) {
  const uint64_t stage = 16ull * t.dk * (t.br / 4 + t.bc / 4);
  const uint64_t stats = uint64_t{t.br} * (t.bc / 4) * 8;             // MODE 0: per-thread (m, l)
  const uint64_t sums = uint64_t{t.br} * (t.bc + 1) * 4 + t.br * 8ull;  // MODE 1: P tile, row (m, 1/l)
  return stage + std::max(stats, sums);
}

}  // namespace

Plan make_plan(const kvcomp::SelectionParams& s, const kvcomp::SnapkvParams& m, DType dtype, const DeviceLimits& limits) {
  const DeviceView d(limits);
  Plan p;
  p.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_arithmetic"}, "the snapkv kernels");
  if (!p.unsupported.empty()) return p;
  const uint64_t es = dtype_size(dtype), B = s.batch, Hq = s.q_heads, Hkv = s.kv_heads, D = s.head_dim;
  const uint64_t T = s.kv_len, w = m.obs_window, P = s.candidates, G = s.group;

  // The largest tile that fits, with no more rows than a (batch, KV head) has.
  static const Tile kTiles[] = {{64, 64, 32}, {64, 32, 32}, {32, 32, 32}, {32, 16, 32}, {16, 16, 16}, {16, 8, 16}};
  const uint64_t rows = G * w;
  const uint32_t want_br = std::clamp(pow2_ceil(static_cast<uint32_t>(std::min<uint64_t>(rows, 64))), 16u, 64u);
  const Tile* tile = nullptr;
  for (const Tile& t : kTiles)
    if (t.br <= want_br && t.br * t.bc / 16 <= d.max_wg && scores_shared_bytes(t) <= d.shared) {
      tile = &t;
      break;
    }
  if (!tile) {
    p.unsupported = cat("no scoring tile fits ", d.shared, " bytes of shared memory");
    return p;
  }
  const Tile t = *tile;
  const uint32_t nt = t.br * t.bc / 16;
  ScoresPlan base{};
  // A block is HB heads × WB window queries: whole windows of several heads when the window
  // is shorter than a block, else one head's window in segments of BR queries.
  if (w >= t.br) {
    base.rows_per_head = t.br;
    base.heads_per_block = 1;
  } else {
    base.rows_per_head = static_cast<uint32_t>(w);
    base.heads_per_block = static_cast<uint32_t>(std::min<uint64_t>(G, t.br / w));
  }
  base.segments = ceil_div(w, base.rows_per_head);
  const uint64_t row_blocks = uint64_t{ceil_div(G, base.heads_per_block)} * base.segments;  // as the shader derives it
  const uint64_t blocks = B * Hkv * row_blocks, target = uint64_t{d.cpu ? 2u : 4u} * d.cus;
  p.stats = p.sums = {s, m, base};
  // At most kMaxSplitKeys keys per workgroup: on lavapipe, workgroups that looped over 16384 keys
  // (a 32k prompt with few KV heads, so one or two splits) returned scores outside the SET band
  // while 8192 passed. The likely cause is llvmpipe's limit on a shader loop's iterations (kv_across
  // met it at 65536, and no longer loops that long); splits are bounded on every device, which also
  // keeps long prompts spread over a GPU's units.
  const auto splits_for = [&](uint64_t keys) {
    const KeySplits chosen = split_keys(static_cast<uint32_t>(keys), blocks, target, t.bc, d.forced_splits);
    if (chosen.split_len <= kMaxSplitKeys) return chosen;
    return split_keys(static_cast<uint32_t>(keys), blocks, target, t.bc, static_cast<uint32_t>(ceil_div(keys, kMaxSplitKeys)));
  };
  const KeySplits stats = splits_for(m.candidate_softmax ? P : T);  // the keys of each softmax
  p.stats.plan.splits = stats.splits;
  p.stats.plan.split_len = stats.split_len;
  const KeySplits sums = splits_for(P);
  p.sums.plan.splits = sums.splits;
  p.sums.plan.split_len = sums.split_len;
  p.stats.plan.stat_splits = p.sums.plan.stat_splits = p.stats.plan.splits;
  p.stats.plan.groups = static_cast<uint32_t>(blocks * p.stats.plan.splits);
  p.sums.plan.groups = static_cast<uint32_t>(blocks * p.sums.plan.splits);
  p.scores_constants = {nt, dtype_code(dtype), static_cast<uint32_t>(D), t.dk, t.br, t.bc, 0, vec16(D, es)};
  p.scores_shared = scores_shared_bytes(t);
  p.part_ml_bytes = B * Hq * w * p.stats.plan.splits * 8;
  p.a_part_bytes = B * Hq * base.segments * P * 4;
  p.unsupported = over_binding(
      {{s.sparse_step ? "q" : "q_obs", B * Hq * w * D * es, es}, {"the softmax partials", p.part_ml_bytes, 8}}, d);
  if (!p.unsupported.empty()) return p;
  // The window sums are the pooling stage's input, which checks their binding.
  p.pool = kv::plan_pool(s, base.segments, static_cast<float>(1.0 / static_cast<double>(w)), m.pool_radius, m.pool_mode,
                         limits, m.visible_mean ? static_cast<uint32_t>(m.obs_window) : 0u);
  p.unsupported = p.pool.unsupported;
  return p;
}

}  // namespace attnbench::vulkan::snapkv
