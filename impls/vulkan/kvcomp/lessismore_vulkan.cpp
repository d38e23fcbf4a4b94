// lessismore on Vulkan (variant "ranks"): each KV head's group logits over the candidates
// (shaders/lessismore_logits.comp), each query head's top k by the family's kv_select over them,
// ranked by a bitonic sort whose last pass records each head's ranks, merged into one key per
// candidate per sequence and scored −key (shaders/lessismore_ranks.comp; the steps:
// lessismore_common.h); then the family's select and the decode step over the kept set
// (scored_selection_vulkan.h, selection-only).
//
// The sort covers each head's k best rather than every candidate: the radix select finds them in
// a few linear passes, and a segment of k ≤ the shared tile (2048 pairs) sorts in one dispatch; a
// longer one adds, per doubling of the segment past the tile, a global step per stride ≥ the tile
// and a local pass (for k = 5000: 3 local passes and 3 global steps).
#include <algorithm>

#include "attnbench/error.h"
#include "reference/kvcomp/lessismore_common.h"
#include "runtime/plan_support.h"
#include "scored_selection_vulkan.h"

namespace attnbench::vulkan::lessismore {
namespace {

struct RanksPush {
  kvcomp::SelectionParams sel;
  kvcomp::LessismorePass pass;
};
static_assert(sizeof(RanksPush) <= 128, "Vulkan guarantees 128 bytes of push constants");

enum RanksMode : uint32_t { local_pass = 0, global_step = 1, final_scores = 2 };

struct Plan {
  std::string unsupported;
  std::vector<uint32_t> logits_constants;  // {threads, dtype, head_dim, lanes, staged heads, vec}
  kv::ScorePush logits{};
  std::vector<uint32_t> select_constants;  // kv_select's, over batch·q_heads rows of logits
  kv::SelectPush select{};
  uint64_t heads = 0;                      // batch·q_heads
  uint32_t threads = 0, tile = 0;          // the rank passes' workgroup and shared tile
  std::vector<kvcomp::LessismoreStep> steps;
  uint64_t pairs = 0;                      // the sort workspace's elements (0: every segment fits a tile)
};

// The scorer's shapes on a device. The logits: a key's lanes one per 8-element chunk of its row,
// up to the workgroup; the staged heads take what shared memory allows beside their sums (at most
// 16 KiB, at most 8 heads). The ranks: local passes over tiles of up to 2048 pairs.
Plan plan(const Case& c, const DeviceLimits& limits) {
  Plan p;
  const kvcomp::SelectionParams s = kvcomp::selection_params(c);
  const DeviceView d(limits);
  p.unsupported = kvcomp::lessismore_unsupported(s);
  if (!p.unsupported.empty()) return p;
  const uint32_t threads = d.workgroup(128), chunks = ceil_div(s.head_dim, 8);
  // On a GPU a key's lanes read neighbouring words of its row; on a CPU device (lavapipe) the
  // invocations are SIMD lanes of one core, where the lanes' reduction (shared memory, a barrier per
  // head stage) costs more than the dot products, so one invocation walks a key's row (the logits
  // 4.4 times faster at 32k keys, q_heads 32, kv_heads 8) — unless splits are forced, as the tests
  // force them, so that lavapipe runs the GPU layout too.
  const uint32_t lanes = d.cpu && d.forced_splits == 0 ? 1 : std::min(threads, pow2_ceil(chunks));
  const uint64_t per_head = uint64_t{chunks} * 32 + uint64_t{threads} * 4;  // a staged query row and its sums
  const uint64_t heads = std::min<uint64_t>({static_cast<uint64_t>(s.group), 8, std::min<uint64_t>(16384, d.shared) / per_head});
  if (heads == 0) {
    p.unsupported = cat("lessismore_logits stages a query row and its sums in ", per_head,
                        " bytes of shared memory; this device has ", d.shared);
    return p;
  }
  p.logits_constants = {threads, dtype_code(c.dtype), static_cast<uint32_t>(s.head_dim), lanes, static_cast<uint32_t>(heads),
                        vec16(s.head_dim, s.elem_bytes)};
  const uint64_t groups = uint64_t{ceil_div(static_cast<uint64_t>(s.candidates), threads / lanes)} * kvcomp::cache_rows(s);
  if (groups >= (uint64_t{1} << 32)) {
    p.unsupported = cat("lessismore_logits needs ", groups, " workgroups; it counts them in 32 bits");
    return p;
  }
  p.logits = {s, {static_cast<uint32_t>(groups)}};
  // The heads' top k: only kv_select's constants are read here (the family's plan checks its
  // bindings for the case's own selection; the logits are checked below).
  const kvcomp::SelectionParams top = kvcomp::lessismore_head_selection(s);
  p.select_constants = kv::plan_stages(top, limits).select_constants;
  p.select = {top};
  p.heads = static_cast<uint64_t>(s.batch) * s.q_heads;
  p.threads = d.workgroup(256);
  p.tile = pow2_floor(static_cast<uint32_t>(std::clamp<uint64_t>(d.shared / 8, 1, 2048)));  // 8-byte pairs in shared memory
  p.steps = kvcomp::lessismore_passes(s, p.tile);
  const uint64_t width = kvcomp::lessismore_width(s);
  p.pairs = width > p.tile ? p.heads * width : 0;
  p.unsupported = over_binding({{"the logits and ranks", p.heads * s.candidates * 4, 4}, {"the sort workspace", p.pairs * 4, 4}}, d);
  return p;
}

class VulkanLessismore final : public VulkanScoredSelection {
  std::string unsupported(const Case& c, const DeviceLimits& limits) const override { return plan(c, limits).unsupported; }

  void prepare_scores(const Case& c, const IoBuffers& io) override {
    plan_ = plan(c, backend().probe().limits);
    const kvcomp::SelectionParams& s = selection();
    const auto allocate = [&](uint64_t n, const char* name) { return backend().allocator().allocate(std::max<uint64_t>(16, n * 4), name); };
    logits_ = allocate(plan_.heads * s.candidates, "lessismore.logits");
    top_ = allocate(plan_.heads * s.top_k, "lessismore.top");
    top_len_ = allocate(plan_.heads, "lessismore.top_len");
    sort_key_ = allocate(plan_.pairs, "lessismore.sort_key");
    sort_idx_ = allocate(plan_.pairs, "lessismore.sort_idx");
    ranks_ = allocate(plan_.heads * s.candidates, "lessismore.ranks");
    logits_k_ = backend().bind(backend().pipeline("lessismore_logits", plan_.logits_constants, 4),
                               {&io["q"], &io["k"], logits_.get(), ranks_.get()});
    select_ = backend().bind(backend().pipeline("kv_select", plan_.select_constants, 4),
                             {logits_.get(), &row_budget(), top_.get(), top_len_.get()});
    const std::vector<const Buffer*> buffers = {logits_.get(), top_.get(), sort_key_.get(), sort_idx_.get(), ranks_.get(), &scores()};
    const auto ranks = [&](RanksMode mode, uint32_t tile) {
      return backend().bind(backend().pipeline("lessismore_ranks", {plan_.threads, mode, tile}, 6), buffers);
    };
    local_ = ranks(local_pass, plan_.tile);
    if (plan_.pairs) global_ = ranks(global_step, 1);
    scores_k_ = ranks(final_scores, 1);
  }

  void score() override {
    const kvcomp::SelectionParams& s = selection();
    backend().dispatch(*logits_k_, plan_.logits, plan_.logits.plan.groups);
    backend().dispatch(*select_, plan_.select, plan_.heads);
    for (const kvcomp::LessismoreStep& step : plan_.steps) {
      const RanksPush push{s, step.pass};
      if (step.global)
        backend().dispatch(*global_, push, ceil_div(plan_.heads * (step.pass.width / 2), plan_.threads));
      else
        backend().dispatch(*local_, push, plan_.heads * (step.pass.width / step.pass.tile));
    }
    backend().dispatch(*scores_k_, RanksPush{s, {}}, ceil_div(static_cast<uint64_t>(s.batch) * s.candidates, plan_.threads));
  }

  Plan plan_;
  BufferPtr logits_, top_, top_len_, sort_key_, sort_idx_, ranks_;
  std::unique_ptr<BoundPipeline> logits_k_, select_, local_, global_, scores_k_;
};

}  // namespace
}  // namespace attnbench::vulkan::lessismore

ATTNBENCH_IMPL(attnbench::vulkan::lessismore::VulkanLessismore, "lessismore", "vulkan", "ranks");
