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
//   walk  the stochastic modes: a CTA per row (the grid's CTAs take rows in turn, each with its
//         own scratch slot), every thread walking the same tree from the root with the same
//         decisions; only the V-wide work is shared out (token y to thread y mod T). At node u the
//         children are found in node index order by scanning `parents`; the first child's test is
//         speculative_sampling's, __fmul_rn(U, q(x)) < p(x) on the f32 inputs; a rejection is one
//         pass over V that forms w = max(0, r − g) in fp64, stores it, and sums it (and, without
//         replacement, stores g with g(x) = 0 and sums that), then a block reduction (warp
//         shuffles, then every thread adds the warps' sums in warp order: the same bits in every
//         thread, so every thread takes the same branches). The slot keeps w and g unnormalised
//         beside their sums z and t: r = w/z and g/t are formed where they are read (the next
//         test's two values, the next pass), the very divisions the reference stores, so the bits
//         are the reference's and a rejection costs one pass, not three; the last w is what the
//         race reads. The race is the family's stage (race.cuh) over fp32(w), or over p_u at a
//         leaf or when fp32(w) is all zero: lanes take Philox blocks in turn, warps merge by
//         shuffles, then thread 0 over the warps. Then the lowest retrieve row through the last
//         accepted node, a block minimum.
// Accurate logf/expf throughout (the project builds without fast-math).
#include <cfloat>
#include <climits>

#include "../runtime/device_math.cuh"
#include "../runtime/launch.cuh"
#include "race.cuh"
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

// The stochastic modes (semantics: the reference's "Rejection (i.i.d. drafts) and rejection_wor").

constexpr int kWalkWarps = kWalkMaxThreads / 32;

struct WalkShared {
  double z[kWalkWarps], t[kWalkWarps];  // the warps' sums of a rejection pass
  int32_t any[kWalkWarps];              // the warps' "some fp32(w) is not zero"
  int32_t low[kWalkWarps];              // the warps' lowest retrieve row through the last node
  race::Candidate race[kWalkWarps];
};

// The block's sums of z and t and OR of any, every thread getting the same bits.
__device__ __forceinline__ void block_sums(double& z, double& t, int32_t& any, WalkShared& sh) {
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  const int warps = static_cast<int>(blockDim.x >> 5);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    z += __shfl_xor_sync(kFull, z, off);
    t += __shfl_xor_sync(kFull, t, off);
  }
  any = __ballot_sync(kFull, any != 0) != 0u;
  if (lane == 0) {
    sh.z[warp] = z;
    sh.t[warp] = t;
    sh.any[warp] = any;
  }
  __syncthreads();
  z = 0.0;
  t = 0.0;
  any = 0;
  for (int i = 0; i < warps; ++i) {
    z += sh.z[i];
    t += sh.t[i];
    any |= sh.any[i];
  }
  __syncthreads();  // the partials read before the next pass's are written
}

// Node u's first child after node `after` (node index order; −1: none). Every thread scans the
// same entries (broadcast loads): n ≤ 1024, a few nodes per row.
__device__ __forceinline__ int32_t next_child(const int32_t* parents, int32_t n, int32_t u, int32_t after) {
  for (int32_t v = after + 1; v < n; ++v)
    if (parents[v] == u) return v;
  return -1;
}

// The race over fp32(w) (residual) or p, draws from `first` on: the winner, in thread 0.
__device__ int32_t walk_race(const float* p, const double* w, bool residual, const DevicePhilox& site, uint64_t first,
                             int32_t V, WalkShared& sh) {
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5, warps = static_cast<int>(blockDim.x >> 5);
  race::Candidate c = race::none();
  race::walk_blocks(site, first, 0, V, t, static_cast<int>(blockDim.x), [&](int64_t xb, uint4 words) {
    const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t x = xb + e;
      if (x < 0 || x >= V) continue;
      const float wx = residual ? static_cast<float>(w[x]) : p[x];
      race::consider(c, logf(wx), race::log_neg_log(word[e]), static_cast<int32_t>(x));
    }
  });
  race::group_merge(c, kFull, 32);
  if (lane == 0) sh.race[warp] = c;
  __syncthreads();
  if (t != 0) return 0;
  race::Candidate best = race::none();
  for (int i = 0; i < warps; ++i) race::merge(best, sh.race[i]);
  return race::winner(best);
}

__global__ void __launch_bounds__(kWalkMaxThreads) walk_kernel(const Params p) {
  __shared__ WalkShared sh;
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int32_t n = p.s.nodes, V = p.s.vocab, L = p.s.max_depth + 1;
  const bool wor = p.s.mode == decoding::kTreeRejectionWor;
  const uint64_t seed = static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo;
  const DevicePhilox accept = DevicePhilox::make(seed, p.s.accept_stream, p.domain);
  const DevicePhilox race_site = DevicePhilox::make(seed, p.s.race_stream, p.domain);
  double* w = p.scratch + static_cast<int64_t>(blockIdx.x) * 2 * V;  // this CTA's slot
  double* g = w + V;

  for (int64_t r = blockIdx.x; r < p.s.rows; r += gridDim.x) {
    const int64_t b = decoding::tree_of_row(p.s, r);
    const int32_t* parents = p.parents + b * n;
    const int32_t* tok = p.tokens + r * n;
    int32_t* out = p.tokens_out + r * L;
    int32_t* nodes = p.accepted_nodes + r * L;
    int32_t u = 0, len = 0, token = 0;
    while (true) {
      const float* pu = p.probs + (b * n + u) * V;
      const float* qu = p.draft_probs + (b * n + u) * V;
      double z = 0.0, tg = 0.0;  // Σw and (without replacement) Σg of the last pass
      int32_t any = 0, rejected = 0, ch = len + 1 < L ? next_child(parents, n, u, 0) : -1;
      bool accepted = false;
      for (; ch >= 0; ch = next_child(parents, n, u, ch)) {
        const int32_t x = tok[ch];
        const float U = DevicePhilox::uniform_of(accept.word(decoding::tree_accept_index(p.s, r, ch)));
        if (x >= 0 && x < V) {  // (a token out of range, never in valid inputs, is rejected unread)
          if (rejected == 0) {
            accepted = __fmul_rn(U, qu[x]) < pu[x];  // speculative_sampling's test, never contracted
          } else {
            const double rx = z > 0 ? w[x] / z : 0.0;
            const double gx = wor ? (tg > 0 ? g[x] / tg : 0.0) : static_cast<double>(qu[x]);
            accepted = static_cast<double>(U) * gx < rx;
          }
        }
        if (accepted) break;
        __syncthreads();  // every thread's reads of the slot (this test's, the last node's) before the pass writes it
        // The rejection pass: r = w/z, g (= g/t without replacement) from the slot, or p and q
        // at the node's first rejection; w = max(0, r − g) and its sum; without replacement g
        // with g(x) = 0 and its sum.
        double zs = 0.0, ts = 0.0;
        int32_t nz = 0;
        for (int32_t y = t; y < V; y += T) {
          double ry, gy;
          if (rejected == 0) {
            ry = pu[y];
            gy = qu[y];
          } else {
            ry = z > 0 ? w[y] / z : 0.0;
            gy = wor ? (tg > 0 ? g[y] / tg : 0.0) : static_cast<double>(qu[y]);
          }
          const double d = ry - gy, wy = d > 0 ? d : 0.0;
          w[y] = wy;
          zs += wy;
          nz |= static_cast<float>(wy) != 0.0f;
          if (wor) {
            const double gn = y == x ? 0.0 : gy;
            g[y] = gn;
            ts += gn;
          }
        }
        z = zs;
        tg = ts;
        any = nz;
        block_sums(z, tg, any, sh);
        ++rejected;
      }
      if (accepted) {
        if (t == 0) {
          out[len] = tok[ch];
          nodes[len + 1] = ch;
        }
        ++len;
        u = ch;
        continue;
      }
      // Every child rejected (the last residual), or a leaf (p_u); an all-zero fp32(w) races over p_u.
      token = walk_race(pu, w, rejected > 0 && any != 0, race_site, decoding::tree_race_index(p.s, r, u, 0), V, sh);
      break;
    }
    // best_path: the lowest retrieve row whose column len holds the last accepted node.
    const int32_t leaves = min(max(p.n_leaves[b], 0), n);
    int32_t low = INT_MAX;
    for (int32_t l = t; l < leaves; l += T)
      if (p.retrieve[(b * n + l) * L + len] == u) {
        low = l;  // a thread's rows ascend: its first hit is its lowest
        break;
      }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) low = min(low, __shfl_xor_sync(kFull, low, off));
    if (lane == 0) sh.low[warp] = low;
    __syncthreads();
    if (t == 0) {
      for (int i = 0; i < (T >> 5); ++i) low = min(low, sh.low[i]);
      nodes[0] = 0;
      out[len] = token;
      p.emitted[r] = len + 1;
      p.accept_len[r] = len;
      p.best_path[r] = low == INT_MAX ? 0 : low;  // none only in an invalid tree
    }
    for (int32_t d = len + 1 + t; d < L; d += T) {  // every element written: the outputs arrive poisoned
      out[d] = -1;
      nodes[d] = -1;
    }
    __syncthreads();  // the shared partials and the slot read before the next row's are written
  }
}

}  // namespace

cudaError_t configure_walk(int walk_threads, int* walk_ctas_per_sm) {
  return configure_kernel(walk_kernel, walk_threads, 0, walk_ctas_per_sm);
}

cudaError_t walk_launch(const Params& p, int64_t ctas, int threads, cudaStream_t stream) {
  return launch_kernel(walk_kernel, dim3(static_cast<unsigned>(ctas)), dim3(static_cast<unsigned>(threads)), 0, stream, p);
}

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
