// zeromerge_decode on Vulkan (variant "rows"): every decode step of a case in one dispatch of
// shaders/zeromerge_decode.comp, one workgroup per row (sequence, KV head) walking the row's steps
// in order; the shader's header has the phases of a step. Rows never exchange data (the ring
// slot is a function of the step), so no step waits on another row and no host round trip sits
// between steps. The cache is updated in place in the outputs k_final, v_final, w_final, s_final,
// which the first dispatch fills from the inputs; each row's logits (G heads × budget + 1) live in
// a device workspace, since a budget of a few thousand slots does not fit in shared memory.
//
// Work split inside a workgroup (sizes from the device): T lanes per key (a power of two up to 16
// that divides the smallest subgroup, so a key's dot is summed with shuffles), NT/T lane groups
// over the keys, U keys per group per iteration on a GPU (more loads in flight); lanes over slots
// for the scores, over the head dimension for the merge and moves.
//
// llvmpipe ends an invocation's loops after 65535 iterations in all (gallivm's loop limiter), and
// a row's steps are one invocation's loops: there the steps are cut into several dispatches, each
// within the cap by an upper bound of the iterations one step costs (loop_iterations_per_step),
// each starting from the cache the previous one left in the outputs. A step that alone would pass
// the cap is refused with the reason.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "runtime/plan_support.h"
#include "zeromerge_decode_plan.h"

namespace attnbench::vulkan::zeromerge {
namespace {

constexpr uint32_t kZeromergeBindings = 15;  // zeromerge_decode.comp's buffers
constexpr uint32_t kZeromergeMaxGroup = 16;  // the group's queries and O are held in registers
constexpr uint32_t kZeromergeMaxHeadDim = 512;
constexpr uint64_t kZeromergeStepsPerCappedDispatch = 16;  // under a loop cap: enough that dispatches stay few

struct ZeromergePlan {
  std::string unsupported;          // non-empty: why this device cannot run the case
  std::vector<uint32_t> constants;  // zeromerge_decode.comp's specialization constants
  ZeromergeDecodePush push{};       // step_begin and step_end set per dispatch
  std::vector<std::pair<uint32_t, uint32_t>> step_ranges;  // the dispatches' [step_begin, step_end)
  uint64_t logits_bytes = 0;
};

uint32_t log2_of(uint32_t pow2) {
  uint32_t k = 0;
  while ((1u << k) < pow2) ++k;
  return k;
}

// Upper bound of the loop iterations one step costs an invocation of zeromerge_decode.comp, every
// loop counted as if none were unrolled, both the appending and the merging branch, at a full
// cache (n = budget): the queries, the key loop, the lane groups' merge and the output, the
// scores, the two argmins, the dense slots and the merge. `fallback` is the per-element loop of
// an 8-element load that is not whole 16-byte words (load8.glsl).
uint64_t loop_iterations_per_step(uint32_t D, uint32_t B, uint32_t M, uint32_t G, uint32_t nt, uint32_t t, uint32_t cpl,
                                  uint32_t u, uint32_t min_sg, bool whole_words) {
  const uint64_t ng = nt / t, cv = 2ull * cpl, shuffles = log2_of(t), fallback = whole_words ? 0 : 8;
  const uint64_t load = 1 + fallback;
  const uint64_t queries = G * (1 + cpl * load);
  const uint64_t key_iteration = 1 + u * (1 + cpl * 2 * load) + G * (1 + u * (1 + cv + shuffles) + cv + u * (1 + cv));
  const uint64_t keys = ceil_div(uint64_t{B} + 1, ng * u) * key_iteration;
  const uint64_t merge_groups = G * (1 + 2 * ng + cv) + ng * (1 + G * (1 + cpl)) + G * (1 + ceil_div(D, nt));
  const uint64_t scores = ceil_div(uint64_t{B} + 1, nt) * (1 + G);
  const uint64_t argmins = 2 * (1 + nt / std::max(1u, min_sg));
  const uint64_t dense = cpl * load + ceil_div(M, ng) * (1 + cpl * load + shuffles);
  const uint64_t moves = ceil_div(D, nt) * (2 + 2 * 3);  // the append's, or the merge's with two corrected quotients
  return 1 + queries + keys + merge_groups + scores + argmins + dense + moves;
}

ZeromergePlan plan_zeromerge_decode(const Case& c, const DeviceLimits& limits) {
  ZeromergePlan p;
  const kvcomp::ZeromergeParams s = kvcomp::zeromerge_params(c);
  p.push.s = s;
  if (c.dtype != DType::f32 && c.dtype != DType::f16 && c.dtype != DType::bf16) {
    p.unsupported = cat("dtype ", dtype_name(c.dtype), ": the kernel stores f32, f16 or bf16");
    return p;
  }
  p.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle"},
                                  "zeromerge_decode's kernel");
  if (!p.unsupported.empty()) return p;
  const auto D = static_cast<uint32_t>(s.head_dim), G = static_cast<uint32_t>(s.group), B = static_cast<uint32_t>(s.budget);
  const auto M = static_cast<uint32_t>(s.dense), rows = static_cast<uint32_t>(s.batch) * static_cast<uint32_t>(s.kv_heads);
  if (G > kZeromergeMaxGroup) {
    p.unsupported = cat("a GQA group of ", G, " query heads: the kernel holds at most ", kZeromergeMaxGroup,
                        " heads' queries and outputs in registers");
    return p;
  }
  if (D > kZeromergeMaxHeadDim) {
    p.unsupported = cat("head_dim=", D, ": the kernel holds rows of at most ", kZeromergeMaxHeadDim, " elements in registers");
    return p;
  }
  const DeviceView d(limits);
  const uint32_t nch = ceil_div(D, 8);
  const uint32_t t = pow2_floor(std::min({16u, std::max(1u, d.min_sg), nch}));
  const uint32_t cpl = ceil_div(nch, t), u = d.cpu ? 1u : 2u;
  const uint64_t es = dtype_size(c.dtype), S = static_cast<uint32_t>(s.steps);
  const bool whole_words = vec16(D, es) != 0 && D % 8 == 0;
  const uint64_t row_bytes = uint64_t{B} * D * es;
  const uint32_t copy_word = row_bytes % 16 == 0 ? 16 : row_bytes % 4 == 0 ? 4 : 2;
  const auto copy_words = static_cast<uint32_t>(row_bytes / copy_word);

  // The workgroup and the steps per dispatch. A GPU: 256 lanes, every step in one dispatch. Under
  // a loop cap (llvmpipe): the smallest workgroup from 64 lanes up whose invocations walk
  // kZeromergeStepsPerCappedDispatch steps (or all of them) within the cap, else the one that walks
  // the most. Fewer lanes are faster on a CPU device (fewer to switch at each barrier); more lanes
  // walk fewer keys each, so a large budget still fits.
  uint32_t nt = d.workgroup(d.cpu ? 64 : 256), per_dispatch = static_cast<uint32_t>(S);
  if (d.loop_cap > 0) {
    const uint64_t budget = d.loop_cap - d.loop_cap / 8;
    uint64_t best_steps = 0;
    uint32_t best_nt = 0;
    for (uint32_t want = 64;; want *= 2) {
      const uint32_t lanes = d.workgroup(want);
      if (lanes < want && want > 64) break;  // the device's largest workgroup was tried already
      const uint64_t per_step = loop_iterations_per_step(D, B, M, G, lanes, t, cpl, u, d.min_sg, whole_words);
      const uint64_t copy = 2 + ceil_div(copy_words, lanes) + ceil_div(B, lanes);
      const uint64_t steps = budget > copy ? std::min<uint64_t>(S, (budget - copy) / per_step) : 0;
      if (steps > best_steps) {
        best_steps = steps;
        best_nt = lanes;
      }
      if (steps >= std::min<uint64_t>(S, kZeromergeStepsPerCappedDispatch)) break;
    }
    if (best_steps == 0) {
      p.unsupported = cat("budget=", B, ", head_dim=", D, " and a group of ", G, ": one step costs an invocation more loop iterations than the ",
                          budget, " this device's loop cap leaves to one dispatch, with any workgroup size");
      return p;
    }
    nt = best_nt;
    per_dispatch = static_cast<uint32_t>(best_steps);
  }
  // Shared memory: the lane groups' (m, l) per head, O of the group, the argmin's per-subgroup pairs.
  const uint64_t shared = uint64_t{8} * (nt / t) * G + uint64_t{32} * G * nch + uint64_t{8} * nt + 16;
  if (shared > d.shared) {
    p.unsupported = cat("head_dim=", D, " and a group of ", G, " need ", shared, " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  p.constants = {nt, dtype_code(c.dtype), D, nch, t, cpl, G, u, vec16(D, es), copy_word};
  p.logits_bytes = uint64_t{rows} * G * (uint64_t{B} + 1) * 4;
  const uint64_t q_rows = uint64_t{static_cast<uint32_t>(s.batch)} * static_cast<uint32_t>(s.q_heads);
  p.unsupported = over_binding({{"q_new", q_rows * S * D * es, es},
                                {"out", q_rows * S * D * es, es},
                                {"k_new", uint64_t{rows} * S * D * es, es},
                                {"k_cache", rows * row_bytes, es},
                                {"the logits workspace", p.logits_bytes, 4}},
                               d);
  if (!p.unsupported.empty()) return p;
  p.push.plan = {rows, 0, 0, copy_words};
  for (uint32_t begin = 0; begin < S; begin += per_dispatch)
    p.step_ranges.emplace_back(begin, std::min<uint32_t>(static_cast<uint32_t>(S), begin + per_dispatch));
  return p;
}

class VulkanZeromergeDecode final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const ZeromergePlan p = plan_zeromerge_decode(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    plan_ = plan_zeromerge_decode(c, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a zeromerge_decode case the plan refused: ", plan_.unsupported);
    logits_ = be_->allocator().allocate(plan_.logits_bytes, "zeromerge_decode.logits");
    steps_ = be_->bind(be_->pipeline("zeromerge_decode", plan_.constants, kZeromergeBindings),
                       {&io["q_new"], &io["k_new"], &io["v_new"], &io["k_cache"], &io["v_cache"], &io["w_cache"], &io["s_cache"],
                        &io["out"], &io["k_final"], &io["v_final"], &io["w_final"], &io["s_final"], &io["merged_from"],
                        &io["merged_into"], logits_.get()});
  }

  void run() override {
    ZeromergeDecodePush push = plan_.push;
    for (const auto& [begin, end] : plan_.step_ranges) {
      push.plan.step_begin = begin;
      push.plan.step_end = end;
      be_->dispatch(*steps_, push, push.plan.rows);
    }
  }

 private:
  VulkanBackend* be_ = nullptr;
  ZeromergePlan plan_;
  BufferPtr logits_;
  std::unique_ptr<BoundPipeline> steps_;
};

}  // namespace
}  // namespace attnbench::vulkan::zeromerge

ATTNBENCH_IMPL(attnbench::vulkan::zeromerge::VulkanZeromergeDecode, "zeromerge_decode", "vulkan", "rows");
