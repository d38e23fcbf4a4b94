// The attention stage on CUDA (attention_stage.h): kernel choice, limits, splits and launches of
// one attention step, from its AttentionParams, dtype and buffers.
//
//   mma      tensor cores, f16/bf16; the window, sinks, soft-cap, ALiBi and head_sparse (not cog's
//            signed weights):
//            head_dim and v_head_dim multiples of 8 that fit a tile of 64, 128 or 256 (both padded
//            to 16; V narrower or wider than K, rows v_stride apart):
//              prefill: prefill_mma.cuh (FlashAttention-2 style, GQA-packed rows, causal skipping)
//              decode:  decode_mma.cuh (split-KV, warp-private cp.async pipelines) + split_combine
//            MLA's absorbed step (V the first v_head_dim ≤ 512 elements of K's rows, key ≤ 576):
//              both:    latent_mma.cuh (FlashMLA's decode on mma.sync, split-KV) + split_combine
//            Compute-bound rows are judged against the mma rate of their dtype (cuda_peaks.h).
//   general  CUDA cores, f32/f16/bf16, head_dim and v_head_dim up to 1024, any width and v_stride,
//            every pattern, both phases (general.cuh, split-KV when the rows alone cannot fill
//            the GPU) + split_combine. All arithmetic is fp32 FFMA whatever the dtype, so rows are
//            judged against fp32.
//
// The number of KV splits comes from the SM count, the kernel's CTAs per SM and the cache length
// (choose_splits). Partials live in a workspace allocated in prepare(); enqueue() only launches.
//
// head_sparse (moh): map_rows.cu compacts each KV head's active rows into a row map first, and
// every kernel and split_combine take their rows through it (kernel_common.cuh task_row).
//
// Gathered keys (key_index: gather_decode), a per-key logit bias (key_bias: bias_decode) and a
// tree mask (tree_mask: tree_decode) are taken by decode_mma and general, which reach each key's
// rows through attention::key_row (kernel_common.cuh KeyRows) and look a tree key's bit up inside
// the causal span (tree_hides); the prefill and latent kernels refuse them.
#include "attention_stage.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "../runtime/cuda_peaks.h"
#include "../runtime/split_rule.h"
#include "attnbench/error.h"
#include "elem_of.h"

namespace attnbench::cuda {
namespace {

using attn::Elem;

// The passes over the rows of dtype E: head_sparse's row map, and the split-KV merge.
struct RowPasses {
  cudaError_t (*map_rows)(const attn::Params&, cudaStream_t);
  cudaError_t (*split_combine)(const attn::Params&, cudaStream_t);
};
template <Elem E>
constexpr RowPasses row_passes_of() {
  return {&attn::map_rows_launch<E>, &attn::split_combine_launch<E>};
}
RowPasses row_passes(Elem e) {
  switch (e) {
    case Elem::f16: return row_passes_of<Elem::f16>();
    case Elem::bf16: return row_passes_of<Elem::bf16>();
    case Elem::f32: break;
  }
  return row_passes_of<Elem::f32>();
}

// One kernel family instance, bound for a step.
struct Kernel {
  attn::LaunchShape shape;
  cudaError_t (*configure)(int* ctas_per_sm);
  cudaError_t (*launch)(const attn::Params&, int row_blocks, cudaStream_t);
  bool splits_kv;  // the kernel can divide the keys among CTAs (and then needs split_combine)
  const char* compute_ceiling = "";  // the arithmetic path its flops run on ("": fp32 FFMA)
};

// The mma.sync instruction the tensor-core kernels of E issue (f16 or bf16 inputs).
template <Elem E>
constexpr const char* mma_ceiling() {
  static_assert(E == Elem::f16 || E == Elem::bf16, "mma kernels take f16 or bf16");
  return E == Elem::f16 ? kMmaF16Ceiling : kMmaBf16Ceiling;
}

template <Elem E, int D>
cudaError_t prefill_launch(const attn::Params& p, int, cudaStream_t s) {
  return attn::prefill_mma_launch<E, D>(p, s);
}
template <Elem E, int D>
Kernel prefill_kernel() {
  return {attn::prefill_mma_shape<E, D>(), &attn::prefill_mma_configure<E, D>, &prefill_launch<E, D>, false,
          mma_ceiling<E>()};
}
template <Elem E, int D, int MT>
Kernel decode_kernel() {
  return {attn::decode_mma_shape<E, D, MT>(), &attn::decode_mma_configure<E, D, MT>, &attn::decode_mma_launch<E, D, MT>,
          true, mma_ceiling<E>()};
}
template <Elem E, int DMAX>
Kernel general_kernel() {
  return {attn::general_shape<E, DMAX>(), &attn::general_configure<E, DMAX>, &attn::general_launch<E, DMAX>, true, ""};
}

// 16-aligned width: the mma kernels' k and n steps.
int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; }

// The tile width of the tiered tensor-core kernels for a step: the narrowest of 64, 128 and 256
// that holds both the key and the value padded to 16; 0 when none does.
int mma_tile(const attention::AttentionParams& s) {
  const int64_t w = std::max(pad16(s.head_dim), pad16(s.v_head_dim));
  for (const int d : {64, 128, 256})
    if (w <= d) return d;
  return 0;
}

// MLA's absorbed step, which latent_mma takes past the tiles: the value is the first v_head_dim
// elements of each key row (v_stride = head_dim with a narrower value: V is the K buffer, by the
// contract), key up to 576, value up to 512.
bool latent_step(const attention::AttentionParams& s) {
  return s.v_stride == s.head_dim && s.v_head_dim < s.head_dim && s.head_dim <= 576 && s.v_head_dim <= 512;
}

// Decode packs G·q_len rows per KV head; two 16-row MMA tiles per CTA when there are more than 16
// (up to the 128 tile: at 256 the second tile's accumulators would not fit in registers).
int decode_mma_tiles(const attention::AttentionParams& s, int tile) { return s.group * s.q_len > 16 && tile <= 128 ? 2 : 1; }

template <Elem E>
std::optional<Kernel> mma_kernel_of(const attention::AttentionParams& s, bool decode) {
  const int d = mma_tile(s), mt = decode_mma_tiles(s, d);
  if (d == 0) {
    if (!latent_step(s)) return std::nullopt;
    return Kernel{attn::latent_mma_shape<E>(), &attn::latent_mma_configure<E>, &attn::latent_mma_launch<E>, true,
                  mma_ceiling<E>()};
  }
  if (!decode) {
    switch (d) {
      case 64: return prefill_kernel<E, 64>();
      case 128: return prefill_kernel<E, 128>();
      case 256: return prefill_kernel<E, 256>();
    }
    return std::nullopt;
  }
  switch (d) {
    case 64: return mt == 2 ? decode_kernel<E, 64, 2>() : decode_kernel<E, 64, 1>();
    case 128: return mt == 2 ? decode_kernel<E, 128, 2>() : decode_kernel<E, 128, 1>();
    case 256: return decode_kernel<E, 256, 1>();
  }
  return std::nullopt;
}

std::optional<Kernel> mma_kernel(const attention::AttentionParams& s, DType dtype, bool decode) {
  switch (dtype) {
    case DType::f16: return mma_kernel_of<Elem::f16>(s, decode);
    case DType::bf16: return mma_kernel_of<Elem::bf16>(s, decode);
    default: return std::nullopt;
  }
}

// The general kernels' bucket: the widest of the key and the value.
template <Elem E>
std::optional<Kernel> general_kernel_of(int64_t d) {
  if (d <= 64) return general_kernel<E, 64>();
  if (d <= 128) return general_kernel<E, 128>();
  if (d <= 256) return general_kernel<E, 256>();
  if (d <= 512) return general_kernel<E, 512>();
  if (d <= 1024) return general_kernel<E, 1024>();
  return std::nullopt;
}

std::optional<Kernel> general_kernel(const attention::AttentionParams& s, DType dtype) {
  const int64_t d = std::max(s.head_dim, s.v_head_dim);
  switch (dtype) {
    case DType::f32: return general_kernel_of<Elem::f32>(d);
    case DType::f16: return general_kernel_of<Elem::f16>(d);
    case DType::bf16: return general_kernel_of<Elem::bf16>(d);
    default: return std::nullopt;
  }
}

std::optional<Kernel> kernel_for(AttentionVariant variant, const attention::AttentionParams& s, DType dtype, bool decode) {
  return variant == AttentionVariant::mma ? mma_kernel(s, dtype, decode) : general_kernel(s, dtype);
}

Support common_limits(const attention::AttentionParams& s, bool decode, const Kernel& k, const DeviceLimits& limits) {
  if (k.shape.smem_bytes > limits.shared_mem_bytes)
    return Support::no(cat("needs ", k.shape.smem_bytes, " bytes of shared memory per block; the device allows ",
                           limits.shared_mem_bytes));
  const int64_t row_blocks = (int64_t{s.group} * s.q_len + k.shape.rows_per_cta - 1) / k.shape.rows_per_cta;
  // Grid y of the prefill kernel, and x of the split kernels with up to kMaxSplits splits.
  const int64_t max_blocks = k.splits_kv ? (int64_t{1} << 31) / attn::kMaxSplits : 65535;
  if (row_blocks > max_blocks)
    return Support::no(cat(decode ? "decode" : "prefill", ": ", int64_t{s.group} * s.q_len,
                           " packed rows per KV head exceed the grid"));
  return Support::yes();
}

// Why the mma variant does not take the step, or "".
std::string mma_refusal(const attention::AttentionParams& s, DType dtype, bool decode) {
  if (dtype != DType::f16 && dtype != DType::bf16)
    return cat(dtype_name(dtype), ": the mma variant takes f16 and bf16 (tensor cores)");
  if (!decode && (s.key_index || s.key_bias || s.tree_mask))
    return "prefill with gathered keys, a key bias or a tree mask: those are decode steps (gather_decode, bias_decode, "
           "tree_decode), which decode_mma takes; the prefill kernel reads none (the general variant takes both phases)";
  if (s.signed_weights) return "signed weights (cog) are taken by the general variant; the mma kernels' softmax keeps no signs";
  if (s.head_dim % 8 != 0 || s.v_head_dim % 8 != 0 || s.v_stride % 8 != 0)
    return cat("head_dim=", s.head_dim, ", v_head_dim=", s.v_head_dim, ", v_stride=", s.v_stride,
               ": the mma kernels copy rows in 16-byte pieces and need multiples of 8; the general variant takes any width");
  if (mma_tile(s) > 0) return "";
  if (!latent_step(s))
    return cat("head_dim=", s.head_dim, ", v_head_dim=", s.v_head_dim,
               ": the mma tiles hold widths up to 256, and the latent kernel keys up to 576 whose first 512 or fewer "
               "elements are the value (v_stride = head_dim); the general variant takes the rest");
  if (s.window > 0 || s.sinks > 0 || attention::modifies_logits(s) || s.head_sparse || s.rope_dim > 0 || s.key_index ||
      s.tree_mask)
    return "the latent kernel (MLA's absorbed key and value widths) masks causally only: the window, sinks, soft-cap, ALiBi, "
           "key bias, head_sparse, the fused rope, gathered keys and tree masks are taken by the general variant";
  return "";
}

}  // namespace

AttentionBuffers case_buffers(const attention::AttentionParams& s, const IoBuffers& io, const float* row_gates) {
  AttentionBuffers b;
  b.q = io["q"].ptr();
  b.k = io["k"].ptr();
  b.v = io["v"].ptr();
  // Gathered keys: the positions are the lists', so their lengths are what the kernels count.
  b.kv_len = io[s.key_index ? "idx_len" : "kv_len"].ptr<int32_t>();
  b.key_idx = s.key_index ? io["key_idx"].ptr<int32_t>() : nullptr;
  b.key_bias = s.key_bias ? io["key_bias"].ptr<float>() : nullptr;
  b.tree_mask = s.tree_mask ? io["tree_mask"].ptr<int32_t>() : nullptr;
  b.o = io["O"].ptr();
  b.lse = io["LSE"].ptr<float>();
  b.alibi_slopes = s.alibi ? io["alibi_slopes"].ptr<float>() : nullptr;
  b.row_gates = row_gates;
  add_rope_buffers(b, s, io);
  return b;
}

void add_rope_buffers(AttentionBuffers& b, const attention::AttentionParams& s, const IoBuffers& io) {
  if (s.rope_dim == 0) return;
  b.q_positions = io["q_positions"].ptr<int32_t>();
  b.k_positions = io["k_positions"].ptr<int32_t>();
  b.inv_freq = io["inv_freq"].ptr<float>();
}

Support AttentionStage::supports(AttentionVariant variant, const attention::AttentionParams& s, DType dtype, bool decode,
                                 const DeviceLimits& limits) {
  // The rope pass rotates kv_cap rows by their place in the cache, which a list position is not.
  if (s.key_index && s.rope_dim > 0) return Support::no("gathered keys with the fused rope: the keys a list reads arrive rotated");
  if (variant == AttentionVariant::mma) {
    const std::string why = mma_refusal(s, dtype, decode);
    if (!why.empty()) return Support::no(why);
  }
  const std::optional<Kernel> k = kernel_for(variant, s, dtype, decode);
  if (!k)
    return Support::no(cat(dtype_name(dtype), " head_dim=", s.head_dim, " v_head_dim=", s.v_head_dim,
                           ": the general variant takes f32, f16 or bf16 with head_dim and v_head_dim up to 1024"));
  return common_limits(s, decode, *k, limits);
}

void AttentionStage::prepare(AttentionVariant variant, const attention::AttentionParams& s, DType dtype, bool decode,
                             CudaBackend& be, const AttentionBuffers& buffers, const std::string& name) {
  const std::optional<Kernel> k = kernel_for(variant, s, dtype, decode);
  ATTNBENCH_ASSERT(k, "prepare() of an attention step supports() refused: head_dim=", s.head_dim,
                   " v_head_dim=", s.v_head_dim);
  ATTNBENCH_ASSERT(!s.head_sparse || buffers.row_gates, "head_sparse attention takes row_gates");
  ATTNBENCH_ASSERT(!s.key_index || buffers.key_idx, "gathered attention takes key_idx");
  ATTNBENCH_ASSERT(!s.key_bias || buffers.key_bias, "key-bias attention takes key_bias");
  ATTNBENCH_ASSERT(!s.tree_mask || buffers.tree_mask, "tree attention takes tree_mask");
  ATTNBENCH_ASSERT(variant == AttentionVariant::general || mma_tile(s) > 0 || buffers.v == buffers.k,
                   "the latent kernel reads V inside K's rows: v must be the K buffer");
  launch_ = k->launch;
  ceiling_ = k->compute_ceiling;
  const RowPasses passes = row_passes(*elem_of(dtype));
  map_rows_ = passes.map_rows;
  split_combine_ = passes.split_combine;
  int ctas_per_sm = 0;
  ATTNBENCH_CUDA_CHECK(k->configure(&ctas_per_sm));
  if (ctas_per_sm < 1)
    throw BackendError(cat("cuda: the ", decode ? "decode" : "prefill", " kernel for head_dim=", s.head_dim,
                           " v_head_dim=", s.v_head_dim, " cannot be resident on an SM"));

  attn::Params& p = params_;
  p.q = buffers.q;
  p.k = buffers.k;
  elem_ = *elem_of(dtype);
  q_rot_.reset();
  k_rot_.reset();
  if (s.rope_dim > 0) {
    // rope.cu once for q (its tokens: q_len) and once for k (kv_cap); the other tensor of each
    // pass has no heads, so it is never read or written.
    ATTNBENCH_ASSERT(buffers.q_positions && buffers.k_positions && buffers.inv_freq, "rope attention without its positions");
    const size_t es = dtype_size(dtype);
    q_rot_ = be.allocator().allocate(size_t{static_cast<uint32_t>(s.batch)} * s.q_heads * s.q_len * s.head_dim * es, name + ".q_rot");
    k_rot_ = be.allocator().allocate(size_t{static_cast<uint32_t>(s.batch)} * s.kv_heads * s.kv_cap * s.head_dim * es, name + ".k_rot");
    rope_q_ = {attention::rope_pass(s, false), buffers.q, buffers.q, buffers.q_positions, buffers.inv_freq, q_rot_->ptr(), q_rot_->ptr()};
    rope_k_ = {attention::rope_pass(s, true), buffers.k, buffers.k, buffers.k_positions, buffers.inv_freq, k_rot_->ptr(), k_rot_->ptr()};
    p.q = q_rot_->ptr();
    p.k = k_rot_->ptr();  // V is not rotated: it keeps its own buffer
  }
  p.v = buffers.v;
  p.kv_len = buffers.kv_len;
  p.o = buffers.o;
  p.lse = buffers.lse;
  p.alibi_slopes = s.alibi ? buffers.alibi_slopes : nullptr;
  p.key_idx = s.key_index ? buffers.key_idx : nullptr;
  p.key_bias = s.key_bias ? buffers.key_bias : nullptr;
  p.tree_mask = s.tree_mask ? buffers.tree_mask : nullptr;
  p.s = s;
  p.scale_log2 = static_cast<float>(static_cast<double>(s.scale) * 1.4426950408889634074);  // scale·log2(e)

  const int64_t rows = int64_t{s.group} * s.q_len;
  row_blocks_ = static_cast<int>((rows + k->shape.rows_per_cta - 1) / k->shape.rows_per_cta);
  p.splits = 1;
  if (k->splits_kv) {
    const int64_t base = int64_t{s.batch} * s.kv_heads * row_blocks_;
    const int64_t slots = static_cast<int64_t>(be.props().multiProcessorCount) * ctas_per_sm;
    // Splits cut the keys the rows see (a window's, not the cache's).
    const int64_t max_splits =
        std::clamp<int64_t>(attention::split_span(s) / std::max(1, k->shape.min_keys_per_split), 1, attn::kMaxSplits);
    p.splits = choose_splits(base, slots, max_splits);
  }
  p.part_o = nullptr;
  p.part_lse = nullptr;
  part_o_.reset();
  part_lse_.reset();
  if (p.splits > 1) {
    const size_t partial_rows = static_cast<size_t>(p.splits) * s.batch * s.q_heads * s.q_len;
    part_o_ = be.allocator().allocate(partial_rows * s.v_head_dim * sizeof(float), name + ".split_o");
    part_lse_ = be.allocator().allocate(partial_rows * sizeof(float), name + ".split_lse");
    p.part_o = part_o_->ptr<float>();
    p.part_lse = part_lse_->ptr<float>();
  }
  p.row_gates = nullptr;
  p.row_map = nullptr;
  p.row_count = nullptr;
  row_map_.reset();
  row_count_.reset();
  if (s.head_sparse) {
    const size_t heads = static_cast<size_t>(s.batch) * s.kv_heads;
    row_map_ = be.allocator().allocate(heads * static_cast<size_t>(rows) * sizeof(int32_t), name + ".row_map");
    row_count_ = be.allocator().allocate(heads * sizeof(int32_t), name + ".row_count");
    p.row_gates = buffers.row_gates;
    p.row_map = row_map_->ptr<int32_t>();
    p.row_count = row_count_->ptr<int32_t>();
  }
}

void AttentionStage::enqueue(cudaStream_t stream) const {
  if (q_rot_)
    for (const rope_kernel::Args* a : {&rope_q_, &rope_k_})
      if (int64_t{a->s.batch} * a->s.tokens > 0) ATTNBENCH_CUDA_CHECK(rope_kernel::rotate_launch(elem_, *a, stream));
  if (params_.s.head_sparse) ATTNBENCH_CUDA_CHECK(map_rows_(params_, stream));
  ATTNBENCH_CUDA_CHECK(launch_(params_, row_blocks_, stream));
  if (params_.splits > 1) ATTNBENCH_CUDA_CHECK(split_combine_(params_, stream));
}

}  // namespace attnbench::cuda
