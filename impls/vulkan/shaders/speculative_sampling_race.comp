#version 450
// The chain verification stage (reference/decoding/chain_verify.h; the host side in
// decoding/chain_verify_stage.cpp): speculative_sampling's verification, and specdecpp's after its
// stopping rule. A team of TEAM lanes per (row, span of the vocabulary). Row r verifies its first
// n_r drafts: lengths[r] when LENGTHS (clamped to [0, K]), else K; draw indices keep the stride K.
//   1. The n_r acceptance tests of the row, u·q(x) < p(x) in fp32, spread over the team: the
//      accepted count (every position, FlashInfer's accepted_token_num) and the first rejection
//      (team sum and min). Every span's team repeats them (n_r gathers), so no pass is needed
//      between the tests and the race.
//   2. The race at the stop position t over the span's tokens: w = max(0, p_t − q_t) after a
//      rejection, p_{n_r} for the bonus; key = log w − log(−log u) with accurate logs; the larger
//      key wins, then the smaller index; tokens with w = 0 never take part, and a token with
//      w > 0 and key −inf (u = 0) still beats no token. Whether the residual has mass is decided
//      per span first: a span without residual mass races over p, and the finalize pass takes
//      the spans' residual winners if any span had mass, else their p winners, which is the
//      spec's all-zero fallback for the row.
//   3. The span-0 team writes the accepted drafts, −1 beyond the emitted token, and the three
//      counts; the race's winner goes straight to `tokens` with one span, else to span_best for
//      speculative_sampling_finalize.
// Uniforms: U("spec.accept", row·K + i) and U("spec.race", (row·(K+1) + t)·V + x), Philox words
// in whole blocks per lane (speculative_sampling_draws.glsl; the race itself: race.glsl).
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint TEAM = 4u;       // lanes per (row, span): a power of two
layout(constant_id = 2) const bool WIDE = false;     // the team is the workgroup (else within a subgroup)
layout(constant_id = 3) const bool LENGTHS = false;  // per-row lengths in binding 8 (else every row K)

#include "param_struct.glsl"
#include "reference/decoding/speculative_sampling_common.h"
#include "decoding/speculative_sampling_plan.h"
#include "speculative_sampling_draws.glsl"
#include "team_reduce.glsl"

ATTNBENCH_PARAM_STRUCT(SpeculativeParams, ATTNBENCH_SPECULATIVE_FIELDS)
ATTNBENCH_PARAM_STRUCT(SpeculativeRacePlan, ATTNBENCH_SPECULATIVE_RACE_PLAN)

layout(binding = 0) readonly buffer Target { float target[]; };      // [P, K+1, V]
layout(binding = 1) readonly buffer Draft { float draft[]; };        // [P, K, V]
layout(binding = 2) readonly buffer Ids { int draft_ids[]; };        // [R, K]
layout(binding = 3) writeonly buffer Tokens { int tokens[]; };       // [R, K+1]
layout(binding = 4) writeonly buffer Emitted { int emitted[]; };     // [R]
layout(binding = 5) writeonly buffer Accepted { int accepted_num[]; };   // [R]
layout(binding = 6) writeonly buffer EmittedDraft { int emitted_drafts[]; };  // [R]
layout(binding = 7) writeonly buffer SpanBest { uvec4 span_best[]; };  // [R, spans]: key bits, index, residual
layout(binding = 8) readonly buffer Lengths { int lengths[]; };      // [R] (LENGTHS; else a stand-in)

layout(push_constant) uniform Push {
  SpeculativeParams s;
  SpeculativeRacePlan plan;
} pc;

const uint NO_TOKEN = 0xffffffffu;

// The race's weights at the stop position: max(0, p − q) after a rejection (residual), else p.
uint g_prow, g_qrow;
bool g_residual;
float race_log_weight(uint x) {
  const float p = target[g_prow + x];
  const float w = g_residual ? max(p - draft[g_qrow + x], 0.0) : p;
  return w > 0.0 ? accurate_log(w) : ACC_NEG_INF;
}

void main() {
  const uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (wg >= pc.plan.groups) return;
  const uint team = wg * (gl_WorkGroupSize.x / TEAM) + team_of_lane();
  const uint lane = team_lane();
  const uint row = team / pc.plan.spans, span = team % pc.plan.spans;
  if (row >= uint(pc.s.rows)) return;  // whole teams (WIDE: the whole workgroup)
  const uint K = uint(pc.s.draft_len), V = uint(pc.s.vocab);
  const uint pr = pc.s.distribution != 0 ? 0u : row;
  const uvec2 key = uvec2(pc.s.seed_lo, pc.s.seed_hi);
  const uint n = LENGTHS ? uint(clamp(lengths[row], 0, int(K))) : K;  // the row's drafts

  uint accepted = 0u, first_reject = n;
  for (uint i0 = 0u; i0 < K; i0 += TEAM) {  // K: a trip count uniform across the rows of a subgroup
    const uint i = i0 + lane;
    if (i >= n) continue;
    const uint x = uint(draft_ids[row * K + i]);
    const float p = target[(pr * (K + 1u) + i) * V + x];
    const float q = draft[(pr * K + i) * V + x];
    const bool ok = accept_uniform(key, pc.s.accept_stream, row, K, i) * q < p;
    if (ok) accepted += 1u;
    else first_reject = min(first_reject, i);
  }
  accepted = team_add(accepted);
  const uint drafts = team_min(first_reject);  // the stop position t

  const uint x0 = span * pc.plan.span_len, len = min(pc.plan.span_len, V - x0);
  const uint prow = (pr * (K + 1u) + drafts) * V;
  const uint qrow = (pr * K + min(drafts, K - 1u)) * V;
  uint has_mass = 0u;
  if (drafts < n) {
    for (uint base = 0u; base < len; base += TEAM) {  // team-uniform trip count before the shuffles
      const uint x = x0 + base + lane;
      if (base + lane < len && target[prow + x] > draft[qrow + x]) has_mass = 1u;
    }
  }
  const bool residual = team_max(has_mass) != 0u;

  g_prow = prow;
  g_qrow = qrow;
  g_residual = residual;
  float best_key = ACC_NEG_INF;
  uint best = NO_TOKEN;
  race_span(key, pc.s.race_stream, speculative_race_first(row, K, drafts, V), x0, len, lane, TEAM, best_key, best);
  team_best(best_key, best);

  if (span == 0u) {
    for (uint t0 = 0u; t0 <= K; t0 += TEAM) {
      const uint t = t0 + lane;
      if (t > K || (t == drafts && pc.plan.spans > 1u)) continue;
      int v = -1;
      if (t < drafts) v = draft_ids[row * K + t];
      else if (t == drafts) v = best == NO_TOKEN ? 0 : int(best);
      tokens[row * (K + 1u) + t] = v;
    }
    if (lane == 0u) {
      emitted[row] = int(drafts + 1u);
      emitted_drafts[row] = int(drafts);
      accepted_num[row] = int(accepted);
    }
  }
  if (pc.plan.spans > 1u && lane == 0u)
    span_best[row * pc.plan.spans + span] = uvec4(floatBitsToUint(best_key), best, residual ? 1u : 0u, 0u);
}
