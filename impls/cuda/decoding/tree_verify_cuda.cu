// tree_verify on CUDA (semantics: reference/decoding/tree_verify.cpp), two kernels on one stream:
//   node  a CTA per (tree, node) row of target_probs, the CTAs of the grid taking rows in turn: the
//         row is read once, float4 loads from its first 16-byte boundary (scalar head and tail),
//         four in flight per thread; each thread keeps its (max, lowest index) and, for typical
//         acceptance, its fp64 sum of the fp32 terms p·logf(max(p, FLT_MIN)) (the accuracy the
//         check's boundary gate assumes); warp shuffles, then shared memory, reduce them. One
//         thread writes the node's argmax and τ = min(ε, δ·expf(−H)) (as the CPU: H rounded to
//         f32 first) to the workspace.
//   path  a CTA per tree: a thread per leaf path walks it root first, as the CPU's choose() does
//         (the prefix stops at the first rejection; typical sums logf p(x) in fp32 in path order),
//         then a block reduction keeps the best (longest, then highest score, then lowest index;
//         the same choice as the CPU's sequential strict compares) and the block writes every
//         output element, −1 past `emitted`.
// Accurate logf/expf throughout (the project builds without fast-math).
#include <cfloat>
#include <climits>

#include "../runtime/device_math.cuh"
#include "../runtime/launch.cuh"
#include "tree_verify_launch.h"

namespace attnbench::cuda::tree_verify {
namespace {

constexpr unsigned kFull = 0xffffffffu;

// (value, index) a beats (best, arg): greater, or equal at a lower index.
__device__ __forceinline__ void keep_max(float v, int32_t i, float& best, int32_t& arg) {
  if (v > best || (v == best && i < arg)) {
    best = v;
    arg = i;
  }
}

struct RowAcc {
  float best;
  int32_t arg;
  double sum;  // Σ p·ln p, each term rounded in fp32, summed in fp64
};

template <bool kEntropy>
__device__ __forceinline__ void take(RowAcc& a, float v, int32_t i) {
  keep_max(v, i, a.best, a.arg);
  if (kEntropy) a.sum += static_cast<double>(v * logf(fmaxf(v, FLT_MIN)));  // 0·ln 0 counts 0
}

template <bool kEntropy>
__device__ __forceinline__ void take4(RowAcc& a, const float4 v, int32_t i) {
  take<kEntropy>(a, v.x, i);
  take<kEntropy>(a, v.y, i + 1);
  take<kEntropy>(a, v.z, i + 2);
  take<kEntropy>(a, v.w, i + 3);
}

// The warp's accumulators combined into every lane's: the greater value, the lower index among
// equals (so the row's first maximum whatever the order), the entropy sums added.
__device__ __forceinline__ void warp_combine(RowAcc& a) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float ob = __shfl_xor_sync(kFull, a.best, off);
    const int32_t oa = __shfl_xor_sync(kFull, a.arg, off);
    keep_max(ob, oa, a.best, a.arg);
    a.sum += __shfl_xor_sync(kFull, a.sum, off);
  }
}

template <bool kEntropy>
__device__ void node_row(const Params& p, int64_t r, RowAcc& a) {
  const int32_t V = p.s.vocab;
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const float* row = p.probs + r * V;
  // Elements before the first 16-byte boundary (a row starts unaligned when V % 4 != 0).
  const int32_t skew = static_cast<int32_t>((reinterpret_cast<uintptr_t>(row) >> 2) & 3u);
  const int32_t head = min(V, (4 - skew) & 3);
  const int32_t body = (V - head) >> 2;  // float4s
  if (t < head) take<kEntropy>(a, row[t], t);
  const float4* q = reinterpret_cast<const float4*>(row + head);
  int32_t i = t;
  for (; i + 3 * T < body; i += 4 * T) {  // four loads in flight before any use
    const float4 v0 = q[i], v1 = q[i + T], v2 = q[i + 2 * T], v3 = q[i + 3 * T];
    take4<kEntropy>(a, v0, head + 4 * i);
    take4<kEntropy>(a, v1, head + 4 * (i + T));
    take4<kEntropy>(a, v2, head + 4 * (i + 2 * T));
    take4<kEntropy>(a, v3, head + 4 * (i + 3 * T));
  }
  for (; i < body; i += T) take4<kEntropy>(a, q[i], head + 4 * i);
  for (int32_t x = head + 4 * body + t; x < V; x += T) take<kEntropy>(a, row[x], x);
}

__global__ void __launch_bounds__(kNodeMaxThreads) node_kernel(const Params p) {
  __shared__ float best_s[kNodeMaxThreads / 32];
  __shared__ int32_t arg_s[kNodeMaxThreads / 32];
  __shared__ double sum_s[kNodeMaxThreads / 32];
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const bool typical = p.s.mode == decoding::kTreeTypical;
  const int64_t rows = static_cast<int64_t>(p.s.batch) * p.s.nodes;

  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    RowAcc a{neg_inf(), INT_MAX, 0.0};
    if (typical)
      node_row<true>(p, r, a);
    else
      node_row<false>(p, r, a);
    // Warp, then block (warp_combine at both levels).
    warp_combine(a);
    if (lane == 0) {
      best_s[warp] = a.best;
      arg_s[warp] = a.arg;
      sum_s[warp] = a.sum;
    }
    __syncthreads();
    if (warp == 0) {
      const int warps = T >> 5;
      RowAcc w{neg_inf(), INT_MAX, 0.0};
      if (lane < warps) w = RowAcc{best_s[lane], arg_s[lane], sum_s[lane]};
      warp_combine(w);
      if (lane == 0) {
        NodeStat st{w.arg == INT_MAX ? 0 : w.arg, 0.0f};  // no maximum only for an all-NaN row
        if (typical) {
          const float H = static_cast<float>(-w.sum);
          st.tau = fminf(p.s.epsilon, p.s.delta * expf(-H));
        }
        p.stats[r] = st;
      }
    }
    __syncthreads();  // the shared partials read before the next row's are written
  }
}

// A path's outcome; a beats b: longer, then (typical) higher score, then lower index.
struct PathKey {
  int32_t len;
  float score;
  int32_t index;
};

__device__ __forceinline__ bool beats(const PathKey& a, const PathKey& b) {
  if (a.len != b.len) return a.len > b.len;
  if (a.score != b.score) return a.score > b.score;
  return a.index < b.index;
}

__device__ __forceinline__ PathKey shfl_key(const PathKey& k, int off) {
  return PathKey{__shfl_xor_sync(kFull, k.len, off), __shfl_xor_sync(kFull, k.score, off),
                 __shfl_xor_sync(kFull, k.index, off)};
}

__global__ void __launch_bounds__(kPathMaxThreads) path_kernel(const Params p) {
  __shared__ PathKey key_s[kPathMaxThreads / 32];
  __shared__ PathKey best_s;
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int32_t n = p.s.nodes, V = p.s.vocab, L = p.s.max_depth + 1;
  const bool typical = p.s.mode == decoding::kTreeTypical;
  const PathKey none{-1, 0.0f, INT_MAX};

  for (int64_t b = blockIdx.x; b < p.s.batch; b += gridDim.x) {
    const int64_t row0 = b * n;
    const NodeStat* st = p.stats + row0;
    const int32_t* tok = p.tokens + row0;
    const int32_t leaves = min(max(p.n_leaves[b], 0), n);
    PathKey mine = none;
    for (int32_t l = t; l < leaves; l += T) {
      const int32_t* path = p.retrieve + (row0 + l) * L;
      PathKey k{0, 0.0f, l};
      for (int32_t d = 1; d < L; ++d) {
        const int32_t v = path[d], u = path[d - 1];
        // Out-of-range nodes or tokens (never in a valid tree) end the prefix, so no read strays.
        if (v < 0 || v >= n || u < 0 || u >= n) break;
        const int32_t x = tok[v];
        if (x < 0 || x >= V) break;
        if (typical) {
          const float px = p.probs[(row0 + u) * V + x];
          if (!(px > st[u].tau)) break;
          k.score += logf(px);
        } else if (x != st[u].argmax) {
          break;
        }
        ++k.len;
      }
      if (beats(k, mine)) mine = k;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const PathKey o = shfl_key(mine, off);
      if (beats(o, mine)) mine = o;
    }
    if (lane == 0) key_s[warp] = mine;
    __syncthreads();
    if (warp == 0) {
      PathKey w = lane < (T >> 5) ? key_s[lane] : none;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        const PathKey o = shfl_key(w, off);
        if (beats(o, w)) w = o;
      }
      if (lane == 0) {
        if (w.len < 0) w = PathKey{0, 0.0f, 0};  // no leaves (never in a valid tree): the root alone
        best_s = w;
        p.emitted[b] = w.len + 1;
        p.accept_len[b] = w.len;
        p.best_path[b] = w.index;
      }
    }
    __syncthreads();
    const PathKey w = best_s;
    const int32_t* path = p.retrieve + (row0 + w.index) * L;
    const int32_t last = w.len > 0 ? path[w.len] : 0;  // the node the bonus token follows
    int32_t* out = p.tokens_out + b * L;
    int32_t* nodes = p.accepted_nodes + b * L;
    for (int32_t d = t; d < L; d += T) {  // every element written: the outputs arrive poisoned
      nodes[d] = d == 0 ? 0 : (d <= w.len ? path[d] : -1);
      out[d] = d < w.len ? tok[path[d + 1]] : (d == w.len ? st[last].argmax : -1);
    }
    __syncthreads();  // best_s read by every thread before the next tree's
  }
}

}  // namespace

cudaError_t configure(int node_threads, int path_threads, int* node_ctas_per_sm, int* path_ctas_per_sm) {
  const cudaError_t e = configure_kernel(node_kernel, node_threads, 0, node_ctas_per_sm);
  if (e != cudaSuccess) return e;
  return configure_kernel(path_kernel, path_threads, 0, path_ctas_per_sm);
}

cudaError_t node_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream) {
  return launch_kernel(node_kernel, dim3(static_cast<unsigned>(ctas)), dim3(static_cast<unsigned>(threads)), 0, stream, p);
}

cudaError_t path_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream) {
  return launch_kernel(path_kernel, dim3(static_cast<unsigned>(ctas)), dim3(static_cast<unsigned>(threads)), 0, stream, p);
}

}  // namespace attnbench::cuda::tree_verify
