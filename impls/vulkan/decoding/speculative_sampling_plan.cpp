#include "speculative_sampling_plan.h"

#include "attnbench/error.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::speculative {

Plan plan_race(const decoding::SpeculativeParams& s, const DeviceLimits& limits) {
  const DeviceView d(limits);
  Plan p;
  p.unsupported = missing_feature(limits, {"subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle"}, "the race kernels");
  if (!p.unsupported.empty()) return p;
  const uint64_t R = static_cast<uint64_t>(s.rows), K = static_cast<uint64_t>(s.draft_len);
  const uint64_t V = static_cast<uint64_t>(s.vocab), P = static_cast<uint64_t>(s.prob_rows);
  p.unsupported = over_binding({{"target_probs", P * (K + 1) * V * 4, 4},
                                {"draft_probs", P * K * V * 4, 4},
                                {"tokens", R * (K + 1) * 4, 4},
                                {"draft_token_ids", R * K * 4, 4}},
                               d);
  if (!p.unsupported.empty()) return p;
  p.threads = d.workgroup(128);
  const uint32_t blocks = ceil_div(V, 4) + 1;  // Philox blocks a row's race touches
  const uint32_t sg = pow2_floor(std::max(1u, d.min_sg));
  if (blocks <= 4 * sg) {  // at most four blocks per lane: one subgroup's team races the row
    p.team = std::min(sg, pow2_ceil(blocks));
    p.span_len = static_cast<uint32_t>(V);
    p.race_groups = ceil_div(R, p.threads / p.team);
    return p;
  }
  p.wide = true;
  p.team = p.threads;
  // Enough (row, span) workgroups to fill the device, a few per compute unit, each span at least
  // one block per lane; vulkan.splits=N forces N spans (tests of the finalize pass).
  const uint64_t target = uint64_t{d.cpu ? 2u : 4u} * d.cus;
  const uint32_t want = d.forced_splits > 0
                            ? std::min<uint32_t>(d.forced_splits, ceil_div(V, 4))
                            : static_cast<uint32_t>(std::clamp<uint64_t>((target + R - 1) / R, 1, ceil_div(V, 4ull * p.threads)));
  p.span_len = round_up(ceil_div(V, want), 4);
  p.spans = ceil_div(V, p.span_len);
  p.race_groups = R * p.spans;
  p.unsupported = over_binding({{"the spans' winners", R * p.spans * 16, 16}}, d);
  if (!p.unsupported.empty()) return p;
  if (p.spans > 1) {
    p.finalize_threads = d.workgroup(64);
    p.finalize_team = std::min(pow2_floor(std::min(p.spans, 32u)), sg);
    p.finalize_groups = ceil_div(R, p.finalize_threads / p.finalize_team);
  }
  return p;
}

}  // namespace attnbench::vulkan::speculative
