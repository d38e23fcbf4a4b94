// The KV-selection family's stages on CUDA (kv_stages.h).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../attention/kernel_common.cuh"
#include "../runtime/device_math.cuh"
#include "../runtime/entry_result.h"
#include "../runtime/launch.cuh"
#include "kv_stages.h"

namespace attnbench::cuda::kv {
namespace {

// score[j] = (1/n)·Σ_h pool(raw_h)[j] over the score row's n heads (raw rows row·n .. row·n + n − 1)
// for candidates j0 .. j0 + kPoolThreads − 1; each head's window of raw (with the radius on both
// sides) is staged in shared memory, out-of-range elements set to the pooling's identity (−inf
// for max, 0 for the sums of the averages).
__global__ void __launch_bounds__(kPoolThreads) pool_kernel(const StageArgs p) {
  ATTNBENCH_DYNAMIC_SMEM(float, window);  // [kPoolThreads + 2·radius]
  const int P = p.sel.candidates, r = p.pool_radius, n = kvcomp::heads_per_score_row(p.sel);
  const int tiles = (P + kPoolThreads - 1) / kPoolThreads;
  const int tile = static_cast<int>(blockIdx.x % static_cast<unsigned>(tiles));
  const int64_t row = blockIdx.x / static_cast<unsigned>(tiles);
  const int j0 = tile * kPoolThreads, j = j0 + static_cast<int>(threadIdx.x);
  const bool is_max = p.pool_mode == kvcomp::pool_max;
  const float identity = is_max ? neg_inf() : 0.0f;
  const int span = kPoolThreads + 2 * r;
  // avg divides by the number of in-range elements, avg_padded by the kernel (its padding counted
  // as zeros: torch's avg_pool1d); max divides by nothing.
  const float count = p.pool_mode == kvcomp::pool_avg_padded ? static_cast<float>(2 * r + 1)
                                                             : static_cast<float>(min(P - 1, j + r) - max(0, j - r) + 1);
  float sum = 0.0f;
  for (int hh = 0; hh < n; ++hh) {
    const float* a = p.raw + (row * n + hh) * P;
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
  if (j < P) p.scores[row * P + j] = sum * (1.0f / static_cast<float>(n));
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

// The row's length: the uniform budget, or its own, clamped.
__device__ __forceinline__ int row_kept(const StageArgs& a, int64_t row) {
  return a.sel.row_budgets ? kvcomp::clamp_row_budget(a.sel, a.row_budget[row]) : a.sel.kept;
}

__global__ void __launch_bounds__(kSelectThreads) select_kernel(const StageArgs a) {
  ATTNBENCH_DYNAMIC_SMEM(uint32_t, cached);  // [P] when P ≤ kSelectCachedKeys
  __shared__ int hist[256];
  __shared__ int warp_counts[kSelectThreads / 32];
  __shared__ int chosen_digit, chosen_greater;
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t bg = blockIdx.x;
  const int tid = threadIdx.x, lane = tid & 31;
  const int kept = row_kept(a, bg);
  int32_t* out = a.kept_idx + bg * s.capacity;
  if (tid == 0) a.kept_len[bg] = kept;
  const int P = s.candidates, k = kvcomp::top_k_of(s, kept);
  if (k == P) {  // every candidate, in order: no ranking, no score read
    for (int j = tid; j < P; j += kSelectThreads) out[s.sinks + j] = s.sinks + j;
  } else if (k > 0) {
    const float* score = a.scores + kvcomp::score_row_of(s, bg) * P;
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
      if (keep) out[s.sinks + written + kept_before] = s.sinks + j;
      eq_taken += eq_total;
      written += kept_total;
    }
  }
  // The forced tokens around the selected ones; −1 beyond the row's length. (The length is read
  // again rather than kept live through the radix passes: that spilled a register.)
  const int n = row_kept(a, bg);
  for (int pos = tid; pos < s.capacity; pos += kSelectThreads) {
    if (pos < s.sinks) out[pos] = pos;
    else if (pos >= s.sinks + kvcomp::top_k_of(s, n)) out[pos] = pos < n ? kvcomp::forced_token(s, n, pos) : -1;
  }
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

__global__ void __launch_bounds__(kGatherRows * 32) gather_kernel(const StageArgs a) {
  const kvcomp::SelectionParams& s = a.sel;
  const int blocks_per_row = (s.capacity + kGatherRows - 1) / kGatherRows;
  const int64_t bg = blockIdx.x / static_cast<unsigned>(blocks_per_row);
  const int pos = static_cast<int>(blockIdx.x % static_cast<unsigned>(blocks_per_row)) * kGatherRows +
                  static_cast<int>(threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (pos >= s.capacity) return;
  const int64_t row_bytes = static_cast<int64_t>(s.head_dim) * s.elem_bytes;
  const int src = pos < a.kept_len[bg] ? a.kept_idx[bg * s.capacity + pos] : -1;
  const bool ok = src >= 0 && src < s.kv_len;
  const int64_t from = (bg * s.kv_len + src) * row_bytes, to = (bg * s.capacity + pos) * row_bytes;
  const void* k_src = ok ? static_cast<const char*>(a.k) + from : nullptr;
  const void* v_src = ok ? static_cast<const char*>(a.v) + from : nullptr;
  void* k_dst = static_cast<char*>(a.k_kept) + to;
  void* v_dst = static_cast<char*>(a.v_kept) + to;
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

// The first index of the ascending idx[0, n) not below v (n if none).
__device__ __forceinline__ int64_t lower_bound(const int32_t* idx, int64_t n, int64_t v) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (idx[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The across stage's boost: boosted = scores, with each row's floor (floor_idx, ascending,
// candidate-relative) at +inf, so the choice across heads takes the floors first. One thread per
// element: a binary search in its row's floor rather than a scatter after a copy, so one launch.
__global__ void __launch_bounds__(kAcrossThreads) boost_kernel(const StageArgs a, const AcrossArgs w) {
  const int64_t C = a.sel.candidates, f = a.sel.floor;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * kAcrossThreads + threadIdx.x;
  if (e >= kvcomp::cache_rows(a.sel) * C) return;
  const int64_t row = e / C, j = e % C;
  const int32_t* floor_row = w.floor_idx + row * f;
  const int64_t at = lower_bound(floor_row, f, j);
  w.boosted[e] = at < f && floor_row[at] == j ? -neg_inf() : a.scores[e];
}

// The across stage's count: row (b, g) keeps its forced tokens and the chosen flat indices of its
// sequence in [g·C, (g + 1)·C), which the select wrote ascending.
__global__ void __launch_bounds__(kAcrossThreads) count_kernel(const StageArgs a, const AcrossArgs w) {
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kAcrossThreads + threadIdx.x;
  if (row >= kvcomp::cache_rows(s)) return;
  const int64_t C = s.candidates, g = row % s.kv_heads, n = int64_t{s.kv_heads} * s.top_k;
  const int32_t* chosen = w.across_idx + (row / s.kv_heads) * n;
  const int64_t mine = lower_bound(chosen, n, (g + 1) * C) - lower_bound(chosen, n, g * C);
  a.row_budget[row] = s.sinks + s.recent + static_cast<int32_t>(mine);
}

// --- the selection cache (selection_cache.h) ----------------------------------------------------

// The warp's sum in lane 0, by a fixed tree (lane l adds lane l + o for o = 16, 8, …, 1).
__device__ __forceinline__ float cache_warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// One CTA per score row: its three fp32 sums, each thread's values tid, tid + kCacheThreads, … in
// order, then each warp's tree and warp 0's tree over the warps' sums: one order, the same bits
// every run. The rounding of that order is far inside the check's band (n + 8 ulp of the cosine).
__global__ void __launch_bounds__(kCacheThreads) cache_hit_kernel(const StageArgs a, const CacheArgs c) {
  constexpr int kWarps = kCacheThreads / 32;
  __shared__ float sums[3][kWarps];
  const int64_t row = blockIdx.x, n = int64_t{kvcomp::heads_per_score_row(a.sel)} * a.sel.head_dim, base = row * n;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  float dot = 0.0f, na = 0.0f, nb = 0.0f;
  for (int64_t i = tid; i < n; i += kCacheThreads) {
    const float x = attn::load_elem(c.q, c.elem, base + i), y = attn::load_elem(c.q_cached, c.elem, base + i);
    dot = fmaf(x, y, dot);
    na = fmaf(x, x, na);
    nb = fmaf(y, y, nb);
  }
  dot = cache_warp_sum(dot);
  na = cache_warp_sum(na);
  nb = cache_warp_sum(nb);
  if (lane == 0) {
    sums[0][warp] = dot;
    sums[1][warp] = na;
    sums[2][warp] = nb;
  }
  __syncthreads();
  if (warp != 0) return;
  dot = cache_warp_sum(lane < kWarps ? sums[0][lane] : 0.0f);
  na = cache_warp_sum(lane < kWarps ? sums[1][lane] : 0.0f);
  nb = cache_warp_sum(lane < kWarps ? sums[2][lane] : 0.0f);
  if (lane == 0) {
    const float cosine = na > 0.0f && nb > 0.0f ? dot / sqrtf(na * nb) : 0.0f;  // IEEE √ and ÷ (no fast math)
    c.cache_hit[row] = cosine >= c.threshold ? 1 : 0;
  }
}

// One CTA per cache row: where its score row hit, the cached selection around the step's forced
// tokens (the CTA's decision is uniform: one flag).
__global__ void __launch_bounds__(kCacheThreads) cache_take_kernel(const StageArgs a, const CacheArgs c) {
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t row = blockIdx.x, sr = kvcomp::score_row_of(s, row);
  if (c.cache_hit[sr] == 0) return;
  const int32_t* cached = c.topk_cached + sr * s.top_k;
  int32_t* out = a.kept_idx + row * s.capacity;
  for (int pos = threadIdx.x; pos < s.capacity; pos += kCacheThreads) {
    int32_t v = -1;
    if (pos < s.sinks) v = pos;
    else if (pos < s.sinks + s.top_k) v = cached[pos - s.sinks];
    else if (pos < s.kept) v = kvcomp::forced_token(s, s.kept, pos);
    out[pos] = v;
  }
  if (threadIdx.x == 0) a.kept_len[row] = s.kept;
}

// --- merge: the evicted tokens' means (merged_slots.h) -------------------------------------------

// The evicted token of rank e (0-based, ascending) of a row keeping idx[0, n) (ascending, in
// [0, kv_len)): kept entry i has idx[i] − i evicted tokens before it, non-decreasing in i, so the
// kept tokens below the wanted one are those with idx[i] − i ≤ e, a prefix found by binary search.
__device__ __forceinline__ int evicted_token(const int32_t* idx, int n, int e) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (idx[mid] - mid <= e) lo = mid + 1;
    else hi = mid;
  }
  return e + lo;
}

// N consecutive elements of type T as f32, and back (round to nearest even). N = 1: one element;
// otherwise one 16-byte word (src, dst 16-byte aligned), the lower half of a 32-bit word the
// element with the smaller index.
__device__ __forceinline__ float merge_elem_f32(float x) { return x; }
__device__ __forceinline__ float merge_elem_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float merge_elem_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void merge_elem_store(float* dst, float x) { *dst = x; }
__device__ __forceinline__ void merge_elem_store(__half* dst, float x) { *dst = __float2half_rn(x); }
__device__ __forceinline__ void merge_elem_store(__nv_bfloat16* dst, float x) { *dst = __float2bfloat16_rn(x); }
__device__ __forceinline__ float merge_half_f32(__half*, uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
}
__device__ __forceinline__ float merge_half_f32(__nv_bfloat16*, uint32_t bits) {
  return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(bits)));
}
__device__ __forceinline__ uint32_t merge_half_bits(__half*, float x) { return __half_as_ushort(__float2half_rn(x)); }
__device__ __forceinline__ uint32_t merge_half_bits(__nv_bfloat16*, float x) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(x));
}

template <typename T, int N>
__device__ __forceinline__ void merge_add(const T* src, float (&acc)[N]) {
  if constexpr (N == 1) {
    acc[0] += merge_elem_f32(src[0]);
  } else {
    static_assert(N * sizeof(T) == 16, "merge_add: one element or one 16-byte word");
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(src));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < N; ++e) {
      if constexpr (sizeof(T) == 4) acc[e] += __uint_as_float(w[e]);
      else acc[e] += merge_half_f32(static_cast<T*>(nullptr), e % 2 == 0 ? w[e / 2] & 0xffffu : w[e / 2] >> 16);
    }
  }
}

template <typename T, int N>
__device__ __forceinline__ void merge_store(T* dst, const float (&v)[N]) {
  if constexpr (N == 1) {
    merge_elem_store(dst, v[0]);
  } else {
    uint32_t w[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if constexpr (sizeof(T) == 4) w[e] = __float_as_uint(v[e]);
      else w[e] = merge_half_bits(static_cast<T*>(nullptr), v[2 * e]) | merge_half_bits(static_cast<T*>(nullptr), v[2 * e + 1]) << 16;
    }
    *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// One (row, slot) task at a time per CTA (tasks taken in turn: any rows·slots fits the grid). The
// group of slot m is the evicted tokens of ranks [first, first + len). Units of N elements: units
// [0, U) of the K row, [U, 2U) of the V row (U = head_dim / N), a thread per unit, in passes when
// 2U exceeds the CTA. Per pass the group's tokens come a chunk of blockDim at a time through shared
// memory (each thread finds one), then every thread adds their rows in order.
template <typename T, int N>
__global__ void __launch_bounds__(kMergeThreads) merge_slots_kernel(const StageArgs a, const MergeArgs mg) {
  __shared__ int tokens[kMergeThreads];
  const kvcomp::SelectionParams& s = a.sel;
  const int d = s.head_dim, units = d / N, M = mg.slots, threads = static_cast<int>(blockDim.x);
  const int64_t tasks = kvcomp::cache_rows(s) * M;
  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x) {
    const int64_t row = task / M;
    const int m = static_cast<int>(task % M);
    const int n = min(a.kept_len[row], s.capacity);
    const int32_t* idx = a.kept_idx + row * s.capacity;
    const int evicted = s.kv_len - n, q = evicted / M, rem = evicted % M;
    const int len = q + (m < rem ? 1 : 0), first = m * q + min(m, rem);
    const float count = static_cast<float>(len);
    if (threadIdx.x == 0 && mg.w_merged) mg.w_merged[task] = static_cast<float>(len);
    for (int base = 0; base < 2 * units; base += threads) {
      const int u = base + static_cast<int>(threadIdx.x);
      const bool is_v = u >= units, active = u < 2 * units;
      const int x = (is_v ? u - units : u) * N;  // the unit's first dim
      const T* src = static_cast<const T*>(is_v ? a.v : a.k) + row * s.kv_len * d + x;
      float acc[N];
#pragma unroll
      for (int e = 0; e < N; ++e) acc[e] = 0.0f;
      for (int c0 = 0; c0 < len; c0 += threads) {
        __syncthreads();  // the previous chunk's tokens are read
        if (c0 + static_cast<int>(threadIdx.x) < len)
          tokens[threadIdx.x] = evicted_token(idx, n, first + c0 + static_cast<int>(threadIdx.x));
        __syncthreads();
        const int chunk = min(threads, len - c0);
        if (active) {
#pragma unroll 4
          for (int i = 0; i < chunk; ++i) merge_add<T, N>(src + static_cast<int64_t>(tokens[i]) * d, acc);  // in order
        }
      }
      if (active) {
        float mean[N];
#pragma unroll
        for (int e = 0; e < N; ++e) mean[e] = len > 0 ? acc[e] / count : 0.0f;
        T* dst = static_cast<T*>(is_v ? mg.v_merged : mg.k_merged) + task * d + x;
        merge_store<T, N>(dst, mean);
      }
    }
    __syncthreads();  // `tokens` is rewritten by the next task
  }
}

template <typename T>
cudaError_t merge_launch_typed(const StageArgs& a, const MergeArgs& m, cudaStream_t stream) {
  constexpr int kVec = static_cast<int>(16 / sizeof(T));
  // Rows start on 16 bytes when head_dim is a multiple of kVec (buffers are 256-byte aligned).
  const bool vec = a.sel.head_dim % kVec == 0;
  const int units = vec ? a.sel.head_dim / kVec : a.sel.head_dim;
  const int whole_warps = (2 * units + 31) / 32 * 32;
  const int threads = whole_warps < kMergeThreads ? whole_warps : kMergeThreads;
  const int64_t tasks = kvcomp::cache_rows(a.sel) * m.slots;
  const unsigned grid = static_cast<unsigned>(tasks < (int64_t{1} << 31) - 1 ? tasks : (int64_t{1} << 31) - 1);
  if (vec) return launch_kernel(merge_slots_kernel<T, kVec>, dim3(grid), dim3(threads), 0, stream, a, m);
  return launch_kernel(merge_slots_kernel<T, 1>, dim3(grid), dim3(threads), 0, stream, a, m);
}

}  // namespace

cudaError_t pool_launch(const StageArgs& a, cudaStream_t stream) {
  const int64_t tiles = (a.sel.candidates + kPoolThreads - 1) / kPoolThreads;
  const size_t smem = static_cast<size_t>(kPoolThreads + 2 * a.pool_radius) * sizeof(float);
  return launch_kernel(pool_kernel, dim3(static_cast<unsigned>(kvcomp::score_rows(a.sel) * tiles)), dim3(kPoolThreads), smem,
                       stream, a);
}

cudaError_t across_launch(const StageArgs& a, const AcrossArgs& w, cudaStream_t stream) {
  const kvcomp::SelectionParams& s = a.sel;
  const int64_t rows = kvcomp::cache_rows(s);
  cudaError_t e = cudaSuccess;
  // Uniform selections with no forced tokens and no per-row budgets: the select kernel's plain top-k.
  const auto plain = [](kvcomp::SelectionParams& p, int32_t k) {
    p.sinks = p.recent = 0;
    p.top_k = p.kept = p.capacity = k;
    p.row_budgets = p.shared_scores = p.across_heads = 0;
  };
  float* ranked = a.scores;  // floor = 0: nothing to boost
  if (s.floor > 0) {
    // floors: each row's best `floor`, candidate-relative (no sinks).
    StageArgs f = a;
    plain(f.sel, s.floor);
    f.kept_idx = w.floor_idx;
    f.kept_len = w.lens;
    e = select_launch(f, stream);
    if (e != cudaSuccess) return e;
    e = launch_kernel(boost_kernel, dim3(static_cast<unsigned>((rows * s.candidates + kAcrossThreads - 1) / kAcrossThreads)),
                      dim3(kAcrossThreads), 0, stream, a, w);
    if (e != cudaSuccess) return e;
    ranked = w.boosted;
  }
  // across: a sequence's rows are consecutive in the scores, so [rows, C] is [batch, kv_heads·C]
  // read as one row per sequence, flat index g·C + j; top_k is the mean per row.
  StageArgs x = a;
  x.sel.kv_heads = 1;
  x.sel.group = s.q_heads;
  x.sel.candidates = s.kv_heads * s.candidates;
  plain(x.sel, s.kv_heads * s.top_k);
  x.scores = ranked;
  x.kept_idx = w.across_idx;
  x.kept_len = w.lens;
  e = select_launch(x, stream);
  if (e != cudaSuccess) return e;
  return launch_kernel(count_kernel, dim3(static_cast<unsigned>((rows + kAcrossThreads - 1) / kAcrossThreads)),
                       dim3(kAcrossThreads), 0, stream, a, w);
}

cudaError_t select_launch(const StageArgs& a, cudaStream_t stream) {
  const bool cache = a.sel.candidates <= kSelectCachedKeys;
  const size_t smem = cache ? static_cast<size_t>(a.sel.candidates) * sizeof(uint32_t) : 0;
  return launch_kernel(select_kernel, dim3(static_cast<unsigned>(kvcomp::cache_rows(a.sel))), dim3(kSelectThreads), smem,
                       stream, a);
}

cudaError_t gather_launch(const StageArgs& a, cudaStream_t stream) {
  const int64_t blocks = kvcomp::cache_rows(a.sel) * ((a.sel.capacity + kGatherRows - 1) / kGatherRows);
  return launch_kernel(gather_kernel, dim3(static_cast<unsigned>(blocks)), dim3(kGatherRows * 32), 0, stream, a);
}

cudaError_t cache_hit_launch(const StageArgs& a, const CacheArgs& c, cudaStream_t stream) {
  const int64_t rows = kvcomp::score_rows(a.sel);
  if (rows == 0) return cudaSuccess;
  return launch_kernel(cache_hit_kernel, dim3(static_cast<unsigned>(rows)), dim3(kCacheThreads), 0, stream, a, c);
}

cudaError_t cache_take_launch(const StageArgs& a, const CacheArgs& c, cudaStream_t stream) {
  const int64_t rows = kvcomp::cache_rows(a.sel);
  if (rows == 0) return cudaSuccess;
  return launch_kernel(cache_take_kernel, dim3(static_cast<unsigned>(rows)), dim3(kCacheThreads), 0, stream, a, c);
}

cudaError_t merge_launch(const StageArgs& a, const MergeArgs& m, cudaStream_t stream) {
  if (m.slots <= 0 || kvcomp::cache_rows(a.sel) == 0) return cudaSuccess;
  switch (m.elem) {
    case attn::Elem::f32: return merge_launch_typed<float>(a, m, stream);
    case attn::Elem::f16: return merge_launch_typed<__half>(a, m, stream);
    case attn::Elem::bf16: return merge_launch_typed<__nv_bfloat16>(a, m, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::kv

// For tests/cuda/kvcomp/scored_selection_cuda_test.cpp (found with dlsym, as philox_words.cu's entry): the
// select kernel alone on host scores [score rows, candidates] and, with per-row budgets, host
// row_budget [rows]; writes kept_idx [rows, capacity] and kept_len [rows]. Returns 0, or −1 with a
// message in err.
extern "C" int attnbench_cuda_kv_select(const attnbench::kvcomp::SelectionParams* s, const float* scores,
                                        const int32_t* row_budget, int32_t* kept_idx, int32_t* kept_len, char* err,
                                        size_t err_len) {
  using namespace attnbench;
  using namespace attnbench::cuda;
  kv::StageArgs a{};
  a.sel = *s;
  const size_t n_scores = static_cast<size_t>(kvcomp::score_rows(*s)) * s->candidates;
  const size_t rows = static_cast<size_t>(kvcomp::cache_rows(*s)), n_kept = rows * s->capacity;
  float* d_scores = nullptr;
  int32_t *d_budget = nullptr, *d_idx = nullptr, *d_len = nullptr;
  cudaError_t e = cudaMalloc(&d_scores, (n_scores + 1) * sizeof(float));
  if (e == cudaSuccess) e = cudaMalloc(&d_budget, rows * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_idx, n_kept * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_len, rows * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMemcpy(d_scores, scores, n_scores * sizeof(float), cudaMemcpyHostToDevice);
  if (e == cudaSuccess && s->row_budgets) e = cudaMemcpy(d_budget, row_budget, rows * sizeof(int32_t), cudaMemcpyHostToDevice);
  a.scores = d_scores;
  a.row_budget = d_budget;
  a.kept_idx = d_idx;
  a.kept_len = d_len;
  if (e == cudaSuccess) e = kv::select_launch(a, nullptr);
  if (e == cudaSuccess) e = cudaMemcpy(kept_idx, d_idx, n_kept * sizeof(int32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(kept_len, d_len, rows * sizeof(int32_t), cudaMemcpyDeviceToHost);
  (void)cudaFree(d_scores);
  (void)cudaFree(d_budget);
  (void)cudaFree(d_idx);
  (void)cudaFree(d_len);
  return entry_result(e, err, err_len);
}

// For tests/cuda/kvcomp/scored_selection_cuda_test.cpp, as attnbench_cuda_kv_select: the across
// stage alone (s->across_heads) on host scores [rows, candidates]; writes row_budget [rows].
extern "C" int attnbench_cuda_kv_across(const attnbench::kvcomp::SelectionParams* s, const float* scores,
                                        int32_t* row_budget, char* err, size_t err_len) {
  using namespace attnbench;
  using namespace attnbench::cuda;
  kv::StageArgs a{};
  a.sel = *s;
  const size_t rows = static_cast<size_t>(kvcomp::cache_rows(*s)), n_scores = rows * s->candidates;
  float *d_scores = nullptr, *d_boosted = nullptr;
  int32_t *d_budget = nullptr, *d_floor = nullptr, *d_across = nullptr, *d_lens = nullptr;
  cudaError_t e = cudaMalloc(&d_scores, (n_scores + 1) * sizeof(float));
  if (e == cudaSuccess) e = cudaMalloc(&d_boosted, (n_scores + 1) * sizeof(float));
  if (e == cudaSuccess) e = cudaMalloc(&d_budget, rows * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_floor, (rows * s->floor + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_across, (rows * s->top_k + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_lens, rows * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMemcpy(d_scores, scores, n_scores * sizeof(float), cudaMemcpyHostToDevice);
  a.scores = d_scores;
  a.row_budget = d_budget;
  const kv::AcrossArgs w{d_floor, d_boosted, d_across, d_lens};
  if (e == cudaSuccess) e = kv::across_launch(a, w, nullptr);
  if (e == cudaSuccess) e = cudaMemcpy(row_budget, d_budget, rows * sizeof(int32_t), cudaMemcpyDeviceToHost);
  (void)cudaFree(d_scores);
  (void)cudaFree(d_boosted);
  (void)cudaFree(d_budget);
  (void)cudaFree(d_floor);
  (void)cudaFree(d_across);
  (void)cudaFree(d_lens);
  return entry_result(e, err, err_len);
}

// For tests/cuda/kvcomp/scored_selection_cuda_test.cpp, as attnbench_cuda_kv_select: the selection
// cache's two kernels alone. q and q_cached [batch, q_heads, 1, head_dim] of element type `elem`
// (attn::Elem's order: 0 f32, 1 f16, 2 bf16), topk_cached [score rows, top_k]; kept_idx
// [rows, capacity] and kept_len [rows] are read as the select left them and written back after the
// take; cache_hit [score rows] written.
extern "C" int attnbench_cuda_kv_cache(const attnbench::kvcomp::SelectionParams* s, int elem, float threshold,
                                       const void* q, const void* q_cached, const int32_t* topk_cached,
                                       int32_t* cache_hit, int32_t* kept_idx, int32_t* kept_len, char* err,
                                       size_t err_len) {
  using namespace attnbench;
  using namespace attnbench::cuda;
  kv::StageArgs a{};
  a.sel = *s;
  kv::CacheArgs c{};
  c.threshold = threshold;
  c.elem = static_cast<attn::Elem>(elem);
  const size_t score_rows = static_cast<size_t>(kvcomp::score_rows(*s)), rows = static_cast<size_t>(kvcomp::cache_rows(*s));
  const size_t q_bytes = static_cast<size_t>(s->batch) * s->q_heads * s->head_dim * (elem == 0 ? 4 : 2);
  const size_t n_topk = score_rows * s->top_k, n_kept = rows * s->capacity;
  void *d_q = nullptr, *d_qc = nullptr;
  int32_t *d_topk = nullptr, *d_hit = nullptr, *d_idx = nullptr, *d_len = nullptr;
  cudaError_t e = cudaMalloc(&d_q, q_bytes + 4);
  if (e == cudaSuccess) e = cudaMalloc(&d_qc, q_bytes + 4);
  if (e == cudaSuccess) e = cudaMalloc(&d_topk, (n_topk + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_hit, (score_rows + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_idx, (n_kept + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_len, (rows + 1) * sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMemcpy(d_q, q, q_bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_qc, q_cached, q_bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_topk, topk_cached, n_topk * sizeof(int32_t), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_idx, kept_idx, n_kept * sizeof(int32_t), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_len, kept_len, rows * sizeof(int32_t), cudaMemcpyHostToDevice);
  c.q = d_q;
  c.q_cached = d_qc;
  c.topk_cached = d_topk;
  c.cache_hit = d_hit;
  a.kept_idx = d_idx;
  a.kept_len = d_len;
  if (e == cudaSuccess) e = kv::cache_hit_launch(a, c, nullptr);
  if (e == cudaSuccess) e = kv::cache_take_launch(a, c, nullptr);
  if (e == cudaSuccess) e = cudaMemcpy(cache_hit, d_hit, score_rows * sizeof(int32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(kept_idx, d_idx, n_kept * sizeof(int32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(kept_len, d_len, rows * sizeof(int32_t), cudaMemcpyDeviceToHost);
  (void)cudaFree(d_q);
  (void)cudaFree(d_qc);
  (void)cudaFree(d_topk);
  (void)cudaFree(d_hit);
  (void)cudaFree(d_idx);
  (void)cudaFree(d_len);
  return entry_result(e, err, err_len);
}
