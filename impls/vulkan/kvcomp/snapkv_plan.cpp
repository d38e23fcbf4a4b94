#include "snapkv_plan.h"

#include <algorithm>
#include <cmath>

#include "attnbench/error.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::snapkv {

namespace {

struct Tile {
  uint32_t br, bc, dk;
};

uint64_t scores_shared_bytes(const Tile& t) {
  const uint64_t stage = 16ull * t.dk * (t.br / 4 + t.bc / 4);
  const uint64_t stats = uint64_t{t.br} * (t.bc / 4) * 8;             // MODE 0: per-thread (m, l)
  const uint64_t sums = uint64_t{t.br} * (t.bc + 1) * 4 + t.br * 8ull;  // MODE 1: P tile, row (m, 1/l)
  return stage + std::max(stats, sums);
}

// Keys per split so that about `target` workgroups run, each split a multiple of `step` keys
// and at least four steps long; `forced` (vulkan.splits) overrides.
void split_keys(uint32_t keys, uint64_t base, uint64_t target, uint32_t step, uint32_t forced, uint32_t& splits,
                uint32_t& split_len) {
  uint32_t n = 1;
  if (forced > 0) n = forced;
  else if (base < target) n = std::clamp<uint32_t>(ceil_div(target, base), 1, std::max(1u, keys / (4 * step)));
  split_len = round_up(std::max(1u, ceil_div(keys, n)), step);
  splits = std::max(1u, ceil_div(keys, split_len));
}

}  // namespace

std::string Plan::describe() const {
  std::string s = "snapkv";
  if (score) {
    s += cat(" scores[");
    for (size_t i = 0; i < scores_spec.size(); ++i) s += cat(i ? "," : "", scores_spec[i]);
    s += cat("] rows ", stats.heads_per_block, "x", stats.rows_per_head, " stats splits=", stats.splits,
             " sums splits=", sums.splits, " shared=", scores_shared);
  }
  return cat(s, " select[", select_spec[0], "] gather[", gather.spec[1], "B x", gather.spec[2], "]");
}

Plan make_plan(const kvcomp::SnapkvShape& s, DType dtype, const DeviceLimits& limits) {
  const DeviceView d(limits);
  Plan p;
  p.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_arithmetic"}, "the snapkv kernels");
  if (!p.unsupported.empty()) return p;
  const uint64_t es = dtype_size(dtype), B = s.batch, Hq = s.q_heads, Hkv = s.kv_heads, D = s.head_dim;
  const uint64_t T = s.kv_len, w = s.obs_window, P = s.prefix(), G = s.group();
  p.score = !s.keep_all() && s.top_k() > 0;

  // Scoring: the largest tile that fits, with no more rows than a (batch, KV head) has.
  static const Tile kTiles[] = {{64, 64, 32}, {64, 32, 32}, {32, 32, 32}, {32, 16, 32}, {16, 16, 16}, {16, 8, 16}};
  const uint64_t rows = G * w;
  if (p.score) {
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
    ScoresPush base{};
    base.batch = static_cast<uint32_t>(B);
    base.q_heads = static_cast<uint32_t>(Hq);
    base.kv_heads = static_cast<uint32_t>(Hkv);
    base.group = static_cast<uint32_t>(G);
    base.kv_len = static_cast<uint32_t>(T);
    base.window = static_cast<uint32_t>(w);
    base.prefix = static_cast<uint32_t>(P);
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
    base.row_blocks = ceil_div(G, base.heads_per_block) * base.segments;
    base.scale = static_cast<float>(s.scale());
    const uint64_t blocks = B * Hkv * base.row_blocks, target = uint64_t{d.cpu ? 2u : 4u} * d.cus;
    p.stats = p.sums = base;
    split_keys(static_cast<uint32_t>(T), blocks, target, t.bc, d.forced_splits, p.stats.splits, p.stats.split_len);
    split_keys(static_cast<uint32_t>(P), blocks, target, t.bc, d.forced_splits, p.sums.splits, p.sums.split_len);
    p.stats.stat_splits = p.sums.stat_splits = p.stats.splits;
    p.stats.groups = static_cast<uint32_t>(blocks * p.stats.splits);
    p.sums.groups = static_cast<uint32_t>(blocks * p.sums.splits);
    p.scores_spec = {nt, dtype_code(dtype), static_cast<uint32_t>(D), t.dk, t.br, t.bc, 0, (D * es) % 16 == 0 ? 1u : 0u};
    p.scores_shared = scores_shared_bytes(t);
    p.part_ml_bytes = B * Hq * w * p.stats.splits * 8;
    p.a_part_bytes = B * Hq * base.segments * P * 4;
    p.scores_bytes = B * Hkv * P * 4;

    const uint32_t radius = static_cast<uint32_t>((s.pool_kernel - 1) / 2);
    const uint32_t npool = d.workgroup(128);
    if ((uint64_t{npool} + 2 * radius) * 4 > d.shared) {
      p.unsupported = cat("pool_kernel=", s.pool_kernel, " needs ", (npool + 2 * radius) * 4,
                          " bytes of shared memory; the device has ", d.shared);
      return p;
    }
    p.pool_spec = {npool, radius, s.pool == kvcomp::Pool::max ? 1u : 0u};
    p.pool = {static_cast<uint32_t>(G), static_cast<uint32_t>(P), base.segments, ceil_div(P, npool), 0,
              static_cast<float>(1.0 / static_cast<double>(w)), static_cast<float>(1.0 / static_cast<double>(G))};
    p.pool.groups = static_cast<uint32_t>(B * Hkv * p.pool.chunks);
  }

  const uint32_t nsel = d.workgroup(256);
  p.select_spec = {nsel, 4};
  p.select = {static_cast<uint32_t>(B * Hkv), static_cast<uint32_t>(T), static_cast<uint32_t>(w),
              static_cast<uint32_t>(s.budget), static_cast<uint32_t>(P), static_cast<uint32_t>(s.top_k()),
              s.keep_all() ? 1u : 0u};

  p.gather = make_gather_plan(B * Hkv, T, s.budget, s.kept(), D * es, d);

  p.unsupported = over_binding({{"q_obs", B * Hq * w * D * es, es},
                                {"k/v", B * Hkv * T * D * es, es},
                                {"k_kept/v_kept", B * Hkv * static_cast<uint64_t>(s.budget) * D * es, es},
                                {"the window sums", p.a_part_bytes, 4},
                                {"the softmax partials", p.part_ml_bytes, 8}},
                               d);
  return p;
}

}  // namespace attnbench::vulkan::snapkv
