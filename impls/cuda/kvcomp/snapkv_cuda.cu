// SnapKV on CUDA after the logits (snapkv_logits.cuh): the statistics' merge over key splits,
// pooling and the group mean, the top-k selection and the compaction (snapkv_launch.h).
//
// Selection, one CTA of 1024 threads per (b, g): scores become order-preserving 32-bit keys
// (float bits, sign-flipped), and an MSB-first radix select (4 passes of 8 bits, shared histogram
// with warp-aggregated atomics) finds τ, the key of the top_k-th best, and how many of the keys
// equal to τ are kept. One pass in index order then keeps every key > τ and the first `need` keys
// == τ: exactly the spec's order (larger score first, then smaller index), and the kept indices
// come out ascending by construction (two block-wide ballot scans per 1024 keys). Prefixes up to
// kSelectCachedKeys keep their keys in shared memory across the passes; longer ones reread the
// scores (L2).
#include "../runtime/entry_result.h"
#include "snapkv_logits.cuh"

namespace attnbench::cuda::snapkv {
namespace {

__global__ void __launch_bounds__(kCombineThreads) combine_kernel(const Params p) {
  const int64_t rows = static_cast<int64_t>(p.batch) * p.q_heads * p.obs_window;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kCombineThreads + threadIdx.x;
  if (row >= rows) return;
  float m = neg_inf(), l = 0.0f;
  for (int s = 0; s < p.splits; ++s) merge_stats(m, l, p.part_m[s * rows + row], p.part_l[s * rows + row]);
  // Every window query sees key 0, so l ≥ 1 (its max contributes exp(0)).
  p.row_m[row] = m;
  p.row_inv_l[row] = 1.0f / l;
}

// score[j] = (1/G)·Σ_h pool(a_h)[j] for prefix keys j0 .. j0 + kPoolThreads − 1; each head's
// window of a (with the radius on both sides) is staged in shared memory, out-of-range elements
// set to the pooling's identity (−inf for max, 0 for the sum of avg).
__global__ void __launch_bounds__(kPoolThreads) pool_kernel(const Params p) {
  extern __shared__ float window[];  // [kPoolThreads + 2·radius]
  const int P = p.prefix, r = p.pool_radius, G = p.group;
  const int tiles = (P + kPoolThreads - 1) / kPoolThreads;
  const int tile = static_cast<int>(blockIdx.x % static_cast<unsigned>(tiles));
  const int64_t bg = blockIdx.x / static_cast<unsigned>(tiles);
  const int j0 = tile * kPoolThreads, j = j0 + static_cast<int>(threadIdx.x);
  const bool is_max = p.pool == Pool::max;
  const float identity = is_max ? neg_inf() : 0.0f;
  const int span = kPoolThreads + 2 * r;
  // avg divides by the number of in-range elements.
  const float count = static_cast<float>(min(P - 1, j + r) - max(0, j - r) + 1);
  float sum = 0.0f;
  for (int hh = 0; hh < G; ++hh) {
    const float* a = p.a + (bg * G + hh) * P;
    for (int e = threadIdx.x; e < span; e += kPoolThreads) {
      const int x = j0 - r + e;
      window[e] = x >= 0 && x < P ? a[x] : identity;
    }
    __syncthreads();
    if (j < P) {
      float acc = window[threadIdx.x];
      for (int o = 1; o <= 2 * r; ++o) acc = is_max ? fmaxf(acc, window[threadIdx.x + o]) : acc + window[threadIdx.x + o];
      sum += is_max ? acc : acc / count;
    }
    __syncthreads();  // the window is restaged for the next head
  }
  if (j < P) p.score[bg * P + j] = sum * (1.0f / static_cast<float>(G));
}

// Larger score <=> larger key; −0 is +0 first (the spec compares values: they tie).
__device__ __forceinline__ uint32_t ordered_key(float score) {
  const uint32_t u = __float_as_uint(score + 0.0f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// The number of threads below this one in the block with `flag`, and (in *total) the block's
// count. All threads call it; it synchronises twice (warp_counts is free again on return).
__device__ __forceinline__ int block_rank(bool flag, int* warp_counts, int* total) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned ballot = __ballot_sync(0xffffffffu, flag);
  if (lane == 0) warp_counts[warp] = __popc(ballot);
  __syncthreads();
  int before = __popc(ballot & ((1u << lane) - 1u)), sum = 0;
  for (int w = 0; w < warps; ++w) {
    const int c = warp_counts[w];
    before += w < warp ? c : 0;
    sum += c;
  }
  *total = sum;
  __syncthreads();
  return before;
}

__global__ void __launch_bounds__(kSelectThreads) select_kernel(const Params p) {
  extern __shared__ uint32_t cached[];  // [P] when P ≤ kSelectCachedKeys
  __shared__ int hist[256];
  __shared__ int warp_counts[kSelectThreads / 32];
  __shared__ int chosen_digit, chosen_greater;
  const int64_t bg = blockIdx.x;
  const int tid = threadIdx.x, lane = tid & 31;
  int32_t* out = p.kept_idx + bg * p.budget;
  if (tid == 0) p.kept_len[bg] = p.kept;
  if (p.keep_all) {
    for (int pos = tid; pos < p.budget; pos += kSelectThreads) out[pos] = pos < p.kept ? pos : -1;
    return;
  }
  const int P = p.prefix, k = p.top_k;
  if (k > 0) {
    const float* score = p.score + bg * P;
    const bool use_cache = P <= kSelectCachedKeys;
    if (use_cache) {
      for (int j = tid; j < P; j += kSelectThreads) cached[j] = ordered_key(score[j]);
      __syncthreads();
    }
    const auto key_at = [&](int j) { return use_cache ? cached[j] : ordered_key(score[j]); };

    // MSB first: after each pass, `prefix` holds the decided high bits of τ and `remaining` how
    // many of the keys matching them are still to be taken (invariant: at least that many match).
    uint32_t prefix = 0, mask = 0;
    int remaining = k;
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int i = tid; i < 256; i += kSelectThreads) hist[i] = 0;
      __syncthreads();
      for (int base = 0; base < P; base += kSelectThreads) {  // whole warps, for __match_any_sync
        const int j = base + tid;
        int digit = 256;  // none
        if (j < P) {
          const uint32_t key = key_at(j);
          if ((key & mask) == prefix) digit = static_cast<int>((key >> shift) & 255u);
        }
        const unsigned same = __match_any_sync(0xffffffffu, digit);
        if (digit < 256 && lane == __ffs(same) - 1) atomicAdd(&hist[digit], __popc(same));
      }
      __syncthreads();
      if (tid < 32) {
        // Lane l holds bins 8l .. 8l+7; suffix[l] = keys in bins ≥ 8l, non-increasing in l. The
        // chosen digit is the largest whose bins at or above it hold at least `remaining` keys.
        int mine = 0;
#pragma unroll
        for (int e = 0; e < 8; ++e) mine += hist[8 * lane + e];
        int suffix = mine;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const int t = __shfl_down_sync(0xffffffffu, suffix, off);
          if (lane + off < 32) suffix += t;
        }
        const unsigned enough = __ballot_sync(0xffffffffu, suffix >= remaining);  // lanes 0..L
        if (lane == 31 - __clz(enough)) {
          int above = suffix - mine;  // keys in bins ≥ 8(lane + 1)
          for (int e = 7; e >= 0; --e) {
            const int h = hist[8 * lane + e];
            if (above + h >= remaining) {
              chosen_digit = 8 * lane + e;
              chosen_greater = above;
              break;
            }
            above += h;
          }
        }
      }
      __syncthreads();
      prefix |= static_cast<uint32_t>(chosen_digit) << shift;
      mask |= 255u << shift;
      remaining -= chosen_greater;
      __syncthreads();  // chosen_* and hist are rewritten by the next pass
    }
    const uint32_t tau = prefix;
    const int need = remaining;  // keys equal to τ taken, the smallest indices first

    int eq_taken = 0, written = 0;
    for (int base = 0; base < P; base += kSelectThreads) {
      const int j = base + tid;
      const uint32_t key = j < P ? key_at(j) : 0u;
      const bool gt = j < P && key > tau, eq = j < P && key == tau;
      int eq_total = 0, kept_total = 0;
      const int eq_before = block_rank(eq, warp_counts, &eq_total);
      const bool keep = gt || (eq && eq_taken + eq_before < need);
      const int kept_before = block_rank(keep, warp_counts, &kept_total);
      if (keep) out[written + kept_before] = j;
      eq_taken += eq_total;
      written += kept_total;
    }
  }
  // The window (always kept) after the selected prefix tokens; −1 beyond kept.
  for (int pos = k + tid; pos < p.budget; pos += kSelectThreads) out[pos] = pos < p.kept ? P + (pos - k) : -1;
}

// Row `pos` of k_kept and v_kept for one (b, g): a warp copies k[idx], v[idx] in units of U, or
// writes zeros beyond kept (and for an index outside the sequence, which a correct select never
// writes: the SET check reports it, and the copy stays in bounds).
template <typename U>
__device__ __forceinline__ void copy_row(const void* src, void* dst, int64_t units, int lane) {
  const U* s = static_cast<const U*>(src);
  U* d = static_cast<U*>(dst);
  for (int64_t i = lane; i < units; i += 32) d[i] = s ? s[i] : U{};
}

__global__ void __launch_bounds__(kGatherRows * 32) gather_kernel(const Params p) {
  const int blocks_per_row = (p.budget + kGatherRows - 1) / kGatherRows;
  const int64_t bg = blockIdx.x / static_cast<unsigned>(blocks_per_row);
  const int pos = static_cast<int>(blockIdx.x % static_cast<unsigned>(blocks_per_row)) * kGatherRows +
                  static_cast<int>(threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (pos >= p.budget) return;
  const int64_t row_bytes = static_cast<int64_t>(p.head_dim) * p.elem_bytes;
  const int src = pos < p.kept ? p.kept_idx[bg * p.budget + pos] : -1;
  const bool ok = src >= 0 && src < p.kv_len;
  const int64_t from = (bg * p.kv_len + src) * row_bytes, to = (bg * p.budget + pos) * row_bytes;
  const void* k_src = ok ? static_cast<const char*>(p.k) + from : nullptr;
  const void* v_src = ok ? static_cast<const char*>(p.v) + from : nullptr;
  void* k_dst = static_cast<char*>(p.k_kept) + to;
  void* v_dst = static_cast<char*>(p.v_kept) + to;
  // Buffers start 256-byte aligned, so rows are aligned to the largest unit dividing their size.
  if (row_bytes % 16 == 0) {
    copy_row<uint4>(k_src, k_dst, row_bytes / 16, lane);
    copy_row<uint4>(v_src, v_dst, row_bytes / 16, lane);
  } else if (row_bytes % 4 == 0) {
    copy_row<uint32_t>(k_src, k_dst, row_bytes / 4, lane);
    copy_row<uint32_t>(v_src, v_dst, row_bytes / 4, lane);
  } else {
    copy_row<uint16_t>(k_src, k_dst, row_bytes / 2, lane);
    copy_row<uint16_t>(v_src, v_dst, row_bytes / 2, lane);
  }
}

}  // namespace

cudaError_t combine_launch(const Params& p, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(p.batch) * p.q_heads * p.obs_window;
  combine_kernel<<<static_cast<unsigned>((rows + kCombineThreads - 1) / kCombineThreads), kCombineThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t pool_launch(const Params& p, cudaStream_t stream) {
  const int64_t tiles = (p.prefix + kPoolThreads - 1) / kPoolThreads;
  const size_t smem = static_cast<size_t>(kPoolThreads + 2 * p.pool_radius) * sizeof(float);
  pool_kernel<<<static_cast<unsigned>(static_cast<int64_t>(p.batch) * p.kv_heads * tiles), kPoolThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t select_launch(const Params& p, cudaStream_t stream) {
  const bool cache = !p.keep_all && p.top_k > 0 && p.prefix <= kSelectCachedKeys;
  const size_t smem = cache ? static_cast<size_t>(p.prefix) * sizeof(uint32_t) : 0;
  select_kernel<<<static_cast<unsigned>(static_cast<int64_t>(p.batch) * p.kv_heads), kSelectThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t gather_launch(const Params& p, cudaStream_t stream) {
  const int64_t blocks = static_cast<int64_t>(p.batch) * p.kv_heads * ((p.budget + kGatherRows - 1) / kGatherRows);
  gather_kernel<<<static_cast<unsigned>(blocks), kGatherRows * 32, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace attnbench::cuda::snapkv

// For tests/cuda/snapkv_cuda_test.cpp (found with dlsym, as philox_words.cu's entry): the select
// kernel alone on host scores [rows][prefix] with `window` window tokens after the prefix; writes
// kept [rows][top_k + window] (top_k prefix indices ascending, then the window). Returns 0, or −1
// with a message in err.
extern "C" int attnbench_cuda_snapkv_select(const float* scores, int rows, int prefix, int top_k, int window,
                                            int32_t* kept, char* err, size_t err_len) {
  using namespace attnbench::cuda;
  using namespace attnbench::cuda::snapkv;
  Params p{};
  p.batch = rows;
  p.kv_heads = 1;
  p.obs_window = window;
  p.kv_len = prefix + window;
  p.prefix = prefix;
  p.top_k = top_k;
  p.budget = p.kept = top_k + window;
  const size_t n_scores = static_cast<size_t>(rows) * prefix, n_kept = static_cast<size_t>(rows) * p.budget;
  cudaError_t e = cudaMalloc(&p.score, n_scores * sizeof(float));
  if (e == cudaSuccess) e = cudaMalloc(&p.kept_idx, n_kept * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&p.kept_len, static_cast<size_t>(rows) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMemcpy(p.score, scores, n_scores * sizeof(float), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = select_launch(p, nullptr);
  if (e == cudaSuccess) e = cudaMemcpy(kept, p.kept_idx, n_kept * sizeof(int32_t), cudaMemcpyDeviceToHost);
  (void)cudaFree(p.score);
  (void)cudaFree(p.kept_idx);
  (void)cudaFree(p.kept_len);
  return entry_result(e, err, err_len);
}
