// kivi_decode on Vulkan (variant "portable"): split-KV decode attention straight from KIVI's packed
// cache (shaders/kivi_decode.comp), then shaders/kivi_decode_merge.comp when the keys are split.
//
// Work split: one workgroup per (sequence, KV head, block of RB query rows, key split). RB takes
// the whole GQA group when it has at most 8 rows (so every code is read once per KV head), else
// the group is cut into balanced blocks. A workgroup walks its split a tile of NT·P keys at a
// time: lanes over keys for the scores (P keys each, the codes of one 32-bit word per channel),
// lanes over channels for the values (8 each); the shader's header has the details. The keys are
// split as the attention kernels split them (plan_support.h split_keys): about 16 workgroups per
// compute unit on a GPU, 2 per thread on a CPU device, and never more keys per split than a
// driver's loop cap lets one invocation walk (llvmpipe ends every loop of an invocation after
// 65535 iterations in all; keys_within_loop_cap).
#include <algorithm>
#include <string>
#include <vector>

#include "../runtime/vulkan_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "kivi_decode_plan.h"
#include "runtime/plan_support.h"

namespace attnbench::vulkan::kivi {
namespace {

constexpr uint32_t kBindings = 14;  // kivi_decode.comp's buffers

struct Plan {
  std::string unsupported;          // non-empty: why this device cannot run the case
  std::vector<uint32_t> constants;  // kivi_decode.comp's specialization constants
  KiviDecodePush push{};
  uint64_t partial_ml_bytes = 0, partial_o_bytes = 0;  // with more than one split
};

// Upper bound of the loop iterations one tile costs an invocation of kivi_decode.comp, every
// inner loop counted as if none were unrolled: the key phase's longer path (codes: D/4 steps of
// RB loads and 4 channels of P/4 vec4s × RB rows; full rows: P keys of D/8 loads × RB rows),
// the softmax (the tile's maximum over `subgroups`, then p), and the value phase's tokens.
uint64_t loop_iterations_per_tile(uint32_t D, uint32_t rb, uint32_t p, uint32_t nt, uint32_t subgroups) {
  const uint64_t pv = p / 4, codes = uint64_t{D / 4} * (1 + rb + 4 * (1 + pv * (1 + rb)));
  const uint64_t full_rows = uint64_t{p} * (1 + 2 * rb + uint64_t{D / 8} * (1 + rb));
  const uint64_t softmax = uint64_t{rb} * (2 + subgroups + 8 * pv);
  const uint64_t value_groups = nt / (D / 8), values = ceil_div(uint64_t{nt} * p, value_groups) * uint64_t{1 + rb};
  return 1 + std::max(codes, full_rows) + softmax + values;
}

Plan plan_kivi_decode(const Case& c, const DeviceLimits& limits) {
  Plan p;
  const kvcomp::KiviParams s = kvcomp::kivi_params(c);
  p.push.s = s;
  if (c.dtype != DType::f16 && c.dtype != DType::bf16) {
    p.unsupported = cat("dtype ", dtype_name(c.dtype), ": KIVI's scales and windows are f16 or bf16");
    return p;
  }
  p.unsupported = missing_feature(limits, {"storage16", "subgroup_basic", "subgroup_arithmetic"}, "kivi_decode's kernels");
  if (!p.unsupported.empty()) return p;
  const DeviceView d(limits);
  const auto D = static_cast<uint32_t>(s.head_dim), rows = static_cast<uint32_t>(s.group);
  // The value phase gives each token's row D/8 lanes of one workgroup.
  const uint32_t value_lanes = D / 8, nt = d.workgroup(std::max(64u, pow2_ceil(value_lanes)));
  if (nt < value_lanes) {
    p.unsupported = cat("head_dim=", D, " needs ", value_lanes, " lanes per value row; this device's workgroups hold ", nt);
    return p;
  }
  // RB rows share every code read; q, O and the tile's p take shared memory, and a lane holds
  // RB·P scores and RB·8 accumulators, so larger blocks take fewer keys per lane.
  const auto shared = [&](uint32_t rb, uint32_t keys) { return uint64_t{4} * rb * (2 * D + uint64_t{nt} * keys + nt); };
  uint32_t rb = std::clamp(rows, 1u, 8u), keys_per_lane = rb <= 4 ? 8 : 4;
  while (shared(rb, keys_per_lane) > d.shared && keys_per_lane > 4) keys_per_lane /= 2;
  while (shared(rb, keys_per_lane) > d.shared && rb > 1) rb = ceil_div(rb, 2);
  if (shared(rb, keys_per_lane) > d.shared) {
    p.unsupported = cat("head_dim=", D, " needs ", shared(rb, keys_per_lane), " bytes of shared memory; the device has ", d.shared);
    return p;
  }
  const uint32_t row_blocks = ceil_div(std::max(rows, 1u), rb);
  rb = ceil_div(std::max(rows, 1u), row_blocks);  // balance the blocks
  const uint32_t tile = nt * keys_per_lane;
  const uint64_t base = uint64_t{static_cast<uint32_t>(s.batch)} * s.kv_heads * row_blocks;
  const uint64_t per_tile = loop_iterations_per_tile(D, rb, keys_per_lane, nt, nt / std::max(1u, d.min_sg));
  // Splits are cut in quarter tiles (a split needs only whole lane chunks, P keys, and ends in a
  // partial tile otherwise), so few (sequence, KV head) pairs still fill a GPU: split_keys keeps
  // four steps to a split, one tile. The loop cap is counted in whole tiles.
  const uint32_t granule = tile / 4;
  const KeySplits k = split_keys(static_cast<uint32_t>(s.kv_cap), base, uint64_t{d.cpu ? 2u : 16u} * d.cus, granule,
                                 d.forced_splits, keys_within_loop_cap(d, per_tile, tile));
  p.push.plan = {row_blocks, k.splits, k.split_len, static_cast<uint32_t>(base * k.splits)};
  p.constants = {nt, dtype_code(c.dtype), D, rb, keys_per_lane, static_cast<uint32_t>(s.bits)};

  const uint64_t es = dtype_size(c.dtype), B = static_cast<uint32_t>(s.batch), H = static_cast<uint32_t>(s.kv_heads);
  const uint64_t q_rows = B * static_cast<uint32_t>(s.q_heads), R = static_cast<uint32_t>(s.residual);
  const uint64_t vq = static_cast<uint32_t>(s.v_quant_cap);
  if (k.splits > 1) {
    p.partial_ml_bytes = q_rows * k.splits * 8;
    p.partial_o_bytes = q_rows * k.splits * D * 4;
  }
  p.unsupported = over_binding({{"q", q_rows * D * es, es},
                                {"O", q_rows * D * es, es},
                                {"k_codes", B * H * D * static_cast<uint64_t>(kvcomp::kivi_k_words(s)) * 4, 4},
                                {"k_scale", B * H * D * static_cast<uint64_t>(kvcomp::kivi_k_groups(s)) * es, es},
                                {"k_full", B * H * R * D * es, es},
                                {"v_codes", B * H * vq * static_cast<uint64_t>(kvcomp::kivi_v_words(s)) * 4, 4},
                                {"v_scale", B * H * vq * static_cast<uint64_t>(kvcomp::kivi_v_groups(s)) * es, es},
                                {"v_full", B * H * (R + 1) * D * es, es},
                                {"the split partials", p.partial_o_bytes, 4}},
                               d);
  return p;
}

class VulkanKiviDecode final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const Plan p = plan_kivi_decode(c, limits);
    return p.unsupported.empty() ? Support::yes() : Support::no(p.unsupported);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    plan_ = plan_kivi_decode(c, be_->probe().limits);
    ATTNBENCH_ASSERT(plan_.unsupported.empty(), "prepare() of a kivi_decode case the plan refused: ", plan_.unsupported);
    const bool split = plan_.push.plan.splits > 1;
    // Without splits the partials are never touched: a 16-byte stand-in fills their bindings.
    part_ml_ = be_->allocator().allocate(split ? plan_.partial_ml_bytes : 16, "kivi_decode.partial_ml");
    part_o_ = be_->allocator().allocate(split ? plan_.partial_o_bytes : 16, "kivi_decode.partial_o");
    decode_ = be_->bind(be_->pipeline("kivi_decode", plan_.constants, kBindings),
                        {&io["q"], &io["k_codes"], &io["k_scale"], &io["k_min"], &io["k_full"], &io["v_codes"], &io["v_scale"],
                         &io["v_min"], &io["v_full"], &io["kv_len"], &io["O"], &io["LSE"], part_ml_.get(), part_o_.get()});
    if (split) {
      const uint32_t threads = DeviceView(be_->probe().limits).workgroup(64);
      merge_ = be_->bind(be_->pipeline("kivi_decode_merge", {threads, plan_.constants[1], plan_.constants[2]}, 5),
                         {&io["kv_len"], &io["O"], &io["LSE"], part_ml_.get(), part_o_.get()});
    }
    query_rows_ = static_cast<uint64_t>(static_cast<uint32_t>(plan_.push.s.batch)) * static_cast<uint32_t>(plan_.push.s.q_heads);
  }

  void run() override {
    be_->dispatch(*decode_, plan_.push, plan_.push.plan.groups);
    if (merge_) be_->dispatch(*merge_, plan_.push, query_rows_);  // one workgroup per query row
  }

 private:
  VulkanBackend* be_ = nullptr;
  Plan plan_;
  BufferPtr part_ml_, part_o_;
  std::unique_ptr<BoundPipeline> decode_, merge_;
  uint64_t query_rows_ = 0;
};

}  // namespace
}  // namespace attnbench::vulkan::kivi

ATTNBENCH_IMPL(attnbench::vulkan::kivi::VulkanKiviDecode, "kivi_decode", "vulkan", "portable");
