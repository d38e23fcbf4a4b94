#include "attention_stage.h"

#include <algorithm>
#include <vector>

#include "attnbench/error.h"
#include "runtime/plan_support.h"
#include "runtime/vulkan_backend.h"

namespace attnbench::vulkan::attn {

Plan plan_variant(Variant v, const attention::AttentionParams& s, DType dtype, const DeviceLimits& limits,
                  const std::string& phase) {
  Plan p = v == Variant::coopmat_nv ? plan_coopmat_nv(s, dtype, limits, phase) : plan_portable(s, dtype, limits);
  if (p.unsupported.empty() && s.rope_dim > 0 && s.key_index)  // its k copy would have the lists' kv_cap rows
    p.unsupported = "the fused rope with key_index: the rope pass rotates keys by their place in the cache, which the lists hide";
  if (p.unsupported.empty() && s.rope_dim > 0)
    p.unsupported = missing_feature(limits, {"storage16", "float64"}, "the rope pass before attention (fp64 angle reduction)");
  return p;
}

Buffers case_buffers(const attention::AttentionParams& s, const IoBuffers& io, const Buffer* row_gates) {
  Buffers b{&io["q"], &io["k"], &io["v"], &io[s.key_index ? "idx_len" : "kv_len"], &io["O"], &io["LSE"],
            s.alibi ? &io["alibi_slopes"] : nullptr, row_gates};
  add_rope_buffers(b, s, io);
  if (s.key_index) b.key_idx = &io["key_idx"];
  if (s.key_bias) b.key_bias = &io["key_bias"];
  if (s.tree_mask) b.tree_mask = &io["tree_mask"];
  return b;
}

void add_rope_buffers(Buffers& b, const attention::AttentionParams& s, const IoBuffers& io) {
  if (s.rope_dim == 0) return;
  b.q_positions = &io["q_positions"];
  b.k_positions = &io["k_positions"];
  b.inv_freq = &io["inv_freq"];
}

Stage::Stage() = default;
Stage::~Stage() = default;

void Stage::prepare(VulkanBackend& be, const Plan& plan, DType dtype, const Buffers& given) {
  ATTNBENCH_ASSERT(plan.unsupported.empty(), "prepare() of an attention the plan refused: ", plan.unsupported);
  be_ = &be;
  plan_ = plan;
  const attention::AttentionParams& s = plan_.push.s;
  Buffers io = given;
  if (s.rope_dim > 0) prepare_rope(dtype, io);
  const bool split = plan_.push.plan.splits > 1;
  groups_ = static_cast<uint32_t>(s.batch * s.kv_heads);
  part_ml_ = be.allocator().allocate(split ? partial_ml_bytes(s, plan_) : 16, "attention.partial_ml");
  part_o_ = be.allocator().allocate(split ? partial_o_bytes(s, plan_) : 16, "attention.partial_o");
  // Without ALiBi the slopes binding is never read, nor the head-sparse ones without head_sparse,
  // key_idx without key_index, key_bias without key_bias or tree_mask without tree_mask; q stands in
  // for them.
  const Buffer* slopes = s.alibi ? io.alibi_slopes : io.q;
  ATTNBENCH_ASSERT(slopes, "attention with alibi needs the slopes buffer");
  const Buffer* key_idx = s.key_index ? io.key_idx : io.q;
  ATTNBENCH_ASSERT(key_idx, "attention with key_index needs the key_idx buffer");
  const Buffer* key_bias = s.key_bias ? io.key_bias : io.q;
  ATTNBENCH_ASSERT(key_bias, "attention with key_bias needs the key_bias buffer");
  const Buffer* tree_mask = s.tree_mask ? io.tree_mask : io.q;
  ATTNBENCH_ASSERT(tree_mask, "attention with tree_mask needs the tree_mask buffer");
  const Buffer *gates = io.q, *row_map = io.q, *row_count = io.q;
  if (s.head_sparse) {
    ATTNBENCH_ASSERT(io.row_gates, "head_sparse attention needs the row_gates buffer");
    gates = io.row_gates;
    row_map_ = be.allocator().allocate(uint64_t{groups_} * plan_.push.plan.rows * 4, "attention.row_map");
    row_count_ = be.allocator().allocate(uint64_t{groups_} * 4, "attention.row_count");
    row_map = row_map_.get();
    row_count = row_count_.get();
  }
  // Every pass binds the same fifteen buffers (attention_common.glsl).
  const std::vector<const Buffer*> buffers = {io.q,      io.k,      io.v,    io.kv_len, io.o,     io.lse,
                                              part_ml_.get(), part_o_.get(), slopes, gates, row_map, row_count,
                                              key_idx,   key_bias,  tree_mask};
  const auto bindings = static_cast<uint32_t>(buffers.size());
  if (s.head_sparse) {
    // Wide: a prefill group's group · q_len rows go through one workgroup.
    const uint32_t threads = DeviceView(be.probe().limits).workgroup(256);
    row_map_pass_ = be.bind(be.pipeline("attention_row_map", {threads, dtype_code(dtype)}, bindings), buffers);
  }
  main_ = be.bind(be.pipeline(plan_.shader, plan_.constants, bindings), buffers);
  if (split) {
    const uint32_t nt = std::max(64u, be.caps().max_subgroup_size);
    const Pipeline& merge = be.pipeline(
        "attention_merge", {nt, dtype_code(dtype), static_cast<uint32_t>(s.v_head_dim), plan_.partial_stride}, bindings);
    merge_ = be.bind(merge, buffers);
  }
}

// rope.comp once for q (its tokens: q_len) and once for k (kv_cap), each pass's other tensor
// bound to its own buffers and never touched (no heads of it), then the kernels read the copies.
void Stage::prepare_rope(DType dtype, Buffers& io) {
  const attention::AttentionParams& s = plan_.push.s;
  ATTNBENCH_ASSERT(io.q_positions && io.k_positions && io.inv_freq, "rope attention without its positions");
  const size_t es = dtype_size(dtype);
  q_rot_ = be_->allocator().allocate(uint64_t{static_cast<uint32_t>(s.batch)} * s.q_heads * s.q_len * s.head_dim * es, "attention.q_rot");
  k_rot_ = be_->allocator().allocate(uint64_t{static_cast<uint32_t>(s.batch)} * s.kv_heads * s.kv_cap * s.head_dim * es, "attention.k_rot");
  const DeviceView d(be_->probe().limits);
  const Pipeline& p = be_->pipeline("rope", {d.workgroup(128), dtype_code(dtype)}, 6);
  rope_q_push_ = attention::rope_pass(s, false);
  rope_k_push_ = attention::rope_pass(s, true);
  rope_q_ = be_->bind(p, {io.q, io.q, io.q_positions, io.inv_freq, q_rot_.get(), q_rot_.get()});
  rope_k_ = be_->bind(p, {io.k, io.k, io.k_positions, io.inv_freq, k_rot_.get(), k_rot_.get()});
  io.q = q_rot_.get();
  io.k = k_rot_.get();  // V is not rotated: it keeps its own buffer
}

void Stage::run() {
  if (rope_q_) {
    be_->dispatch(*rope_q_, rope_q_push_, uint64_t{static_cast<uint32_t>(rope_q_push_.batch)} * rope_q_push_.tokens);
    be_->dispatch(*rope_k_, rope_k_push_, uint64_t{static_cast<uint32_t>(rope_k_push_.batch)} * rope_k_push_.tokens);
  }
  if (row_map_pass_) be_->dispatch(*row_map_pass_, plan_.push, groups_);
  be_->dispatch(*main_, plan_.push, plan_.push.plan.groups);
  // One merge workgroup per task position of each (batch, KV head).
  if (merge_) be_->dispatch(*merge_, plan_.push, uint64_t{groups_} * plan_.push.plan.rows);
}

}  // namespace attnbench::vulkan::attn
