// eagle2_tree on CUDA (semantics: reference/decoding/eagle2_tree.cpp): the Vulkan shaders'
// algorithm (shaders/eagle2_rows.comp, eagle2_select.comp, eagle2_radix.glsl), in two kernels.
//   rows    a CTA per row of draft logits (CTAs take rows in turn), two passes over the row: the
//           threads' maxima give m and a floor (their k-th largest: at least k logits reach it);
//           then S = Σ expf(z − m) (2 ulp) summed in fp64 (a fixed tree) while the few logits at
//           or above the floor are gathered; the top k are the gathered of rank < k under 52-bit
//           keys (the logit's order key, then 2^20 − 1 − index: unique, so ties go to the lower
//           index exactly). When planted ties put more than kCap at the floor, a radix selection
//           over the row's keys (shared-memory histograms of 11, 11, 10, 10, 10 bits that stop at
//           the first digit whose bin holds exactly the rank still needed) finds the k. ℓ_r =
//           (z_r − m) − logf(fl32(S)).
//   select  a CTA per tree: each level's frontier by ranks in merged sorted lists (a slot's
//           children are in order already), the best n − 1 of C by the same radix selection over
//           scores recomputed from the frontiers, a bitset of the kept and its popcount scan for
//           each kept candidate's node and its parent's.
// One file, two kernels, one small template (the radix selection over its key function).
#include "../runtime/launch.cuh"
#include "eagle2_tree_launch.h"

namespace attnbench::cuda::eagle2 {
namespace {

constexpr int T = kThreads;
constexpr uint32_t kMaxK = kMaxTopK, kMaxD = kMaxDepth, kWords = (kMaxK + (kMaxD - 1) * kMaxK * kMaxK + 31) / 32;  // C/32
constexpr uint32_t kCap = 256;  // logits at or above a row's floor kept in shared memory; more: the radix path

struct Radix {
  uint32_t hist[2048];
  uint32_t csum[T];
  uint32_t found[3];
};

__device__ uint32_t order_key(float z) {
  uint32_t u = __float_as_uint(z);
  if (u == 0x80000000u) u = 0u;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ uint32_t digit_of(uint32_t level, uint32_t hi, uint32_t lo) {
  switch (level) {
    case 0: return hi >> 21;
    case 1: return (hi >> 10) & 0x7ffu;
    case 2: return hi & 0x3ffu;
    case 3: return (lo >> 10) & 0x3ffu;
    default: return lo & 0x3ffu;
  }
}

__device__ void mask_of(uint32_t level, uint32_t& mh, uint32_t& ml) {
  const uint32_t his[6] = {0u, 0xffe00000u, 0xfffffc00u, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  const uint32_t los[6] = {0u, 0u, 0u, 0u, 0xffc00u, 0xfffffu};
  mh = his[level];
  ml = los[level];
}

struct Threshold {
  uint32_t phi, plo, mh, ml;
  __device__ bool selected(uint32_t hi, uint32_t lo) const {
    hi &= mh;
    lo &= ml;
    return hi > phi || (hi == phi && lo >= plo);
  }
};

// The `need` largest keys of items [0, count): every thread of the CTA calls it.
// Items whose hi is below floor_hi are not counted (a caller that knows `need` items at or above it).
template <typename Key>
__device__ Threshold select_top(Radix& r, uint32_t count, uint32_t need, uint32_t floor_hi, const Key& key) {
  const uint32_t t = threadIdx.x;
  uint32_t phi = 0, plo = 0, level = 0;
  while (true) {
    const uint32_t bins = level < 2 ? 2048u : 1024u, per = bins / T;
    for (uint32_t j = t; j < bins; j += T) r.hist[j] = 0;
    __syncthreads();
    uint32_t mh, ml;
    mask_of(level, mh, ml);
    for (uint32_t i = t; i < count; i += T) {
      uint32_t hi, lo;
      key(i, hi, lo);
      if (hi >= floor_hi && (hi & mh) == phi && (lo & ml) == plo) atomicAdd(&r.hist[digit_of(level, hi, lo)], 1u);
    }
    __syncthreads();
    uint32_t s = 0;
    for (uint32_t j = t * per; j < t * per + per; ++j) s += r.hist[j];
    r.csum[t] = s;
    __syncthreads();
    for (uint32_t off = 1; off < T; off <<= 1) {  // inclusive suffix sums over the threads' runs
      const uint32_t add = t + off < T ? r.csum[t + off] : 0u;
      __syncthreads();
      r.csum[t] += add;
      __syncthreads();
    }
    const uint32_t incl = r.csum[t], above = incl - s;
    if (above < need && need <= incl) {
      uint32_t acc = above;
      for (uint32_t j = t * per + per; j-- > t * per;) {
        const uint32_t h = r.hist[j];
        if (acc + h >= need) {
          r.found[0] = j;
          r.found[1] = acc;
          r.found[2] = h;
          break;
        }
        acc += h;
      }
    }
    __syncthreads();
    const uint32_t d = r.found[0], in_d = r.found[2];
    need -= r.found[1];
    if (level < 3) phi |= d << (level == 0 ? 21 : (level == 1 ? 10 : 0));
    else plo |= d << (level == 3 ? 10 : 0);
    ++level;
    __syncthreads();  // every thread has read found and csum before the next round writes them
    if (in_d == need || level == 5) {
      Threshold th{phi, plo, 0, 0};
      mask_of(level, th.mh, th.ml);
      return th;
    }
  }
}

struct RowKey {
  const float* z;
  __device__ void operator()(uint32_t i, uint32_t& hi, uint32_t& lo) const {
    hi = order_key(z[i]);
    lo = 0xfffffu - i;
  }
};

__global__ void __launch_bounds__(T) rows_kernel(const Params p) {
  __shared__ Radix radix;
  __shared__ uint32_t n_sel, sel_hi[kCap], sel_lo[kCap], tok[kMaxK];
  __shared__ float zs[kMaxK];
  __shared__ double sums[T];
  __shared__ uint32_t maxima[T], floor_key, top_key;
  const uint32_t t = threadIdx.x, V = static_cast<uint32_t>(p.s.vocab), k = static_cast<uint32_t>(p.s.top_k);
  const int64_t rows = int64_t{p.s.batch} * p.s.slots;
  for (int64_t q = blockIdx.x; q < rows; q += gridDim.x) {
    const float* z = p.logits + q * V;
    if (t == 0) n_sel = 0;
    // The threads' maxima (each a distinct logit): the largest, and the k-th largest as the floor
    // at least k logits reach.
    uint32_t best = 0;
    for (uint32_t i = t; i < V; i += T) best = max(best, order_key(z[i]));
    maxima[t] = best;
    __syncthreads();
    uint32_t above = 0, reach = 0;
    for (uint32_t j = 0; j < T; ++j) {
      above += maxima[j] > best ? 1u : 0u;
      reach += maxima[j] >= best ? 1u : 0u;
    }
    if (above < k && k <= reach) floor_key = best;  // the k-th largest (threads holding it agree)
    if (above == 0) top_key = best;                 // the largest
    __syncthreads();
    const uint32_t fk = floor_key, tk = top_key;
    const float m = __uint_as_float((tk & 0x80000000u) ? (tk & 0x7fffffffu) : ~tk);
    // One pass sums the exps (fp32 terms in fp64) and gathers the logits at or above the floor.
    double s = 0;
    for (uint32_t i = t; i < V; i += T) {
      const float x = z[i];
      s += static_cast<double>(expf(x - m));
      const uint32_t hi = order_key(x);
      if (hi < fk) continue;
      const uint32_t j = atomicAdd(&n_sel, 1u);
      if (j < kCap) {
        sel_hi[j] = hi;
        sel_lo[j] = 0xfffffu - i;
      }
    }
    sums[t] = s;
    __syncthreads();
    uint32_t count = n_sel;
    if (count > kCap) {
      // Too many tie at the floor (planted ties): the radix selection over the row, then a pass
      // that gathers exactly the k.
      __syncthreads();  // every thread has read n_sel
      if (t == 0) n_sel = 0;
      const Threshold th = select_top(radix, V, k, fk, RowKey{z});  // its first barrier orders the reset
      for (uint32_t i = t; i < V; i += T) {
        uint32_t hi, lo;
        RowKey{z}(i, hi, lo);
        if (hi < fk || !th.selected(hi, lo)) continue;  // the uncounted share the last bin's bits
        const uint32_t j = atomicAdd(&n_sel, 1u);
        if (j < kCap) {
          sel_hi[j] = hi;
          sel_lo[j] = lo;
        }
      }
      __syncthreads();
      count = k;
    }
    // Each gathered key's rank among them (keys are unique); the first k in order.
    uint32_t rank[kCap / 32];  // at most kCap / T items a thread
    for (uint32_t j = t, u = 0; j < count; j += T, ++u) {
      rank[u] = 0;
      for (uint32_t o = 0; o < count && rank[u] < k; ++o)
        if (sel_hi[o] > sel_hi[j] || (sel_hi[o] == sel_hi[j] && sel_lo[o] > sel_lo[j])) ++rank[u];
    }
    for (uint32_t j = t, u = 0; j < count; j += T, ++u) {
      if (rank[u] >= k) continue;
      const uint32_t x = 0xfffffu - sel_lo[j];
      tok[rank[u]] = x;
      zs[rank[u]] = z[x];
    }
    for (uint32_t half = T / 2; half > 0; half >>= 1) {  // its first barrier orders tok, zs
      __syncthreads();
      if (t < half) sums[t] += sums[t + half];
    }
    __syncthreads();
    if (t < k) {
      const float lse = logf(static_cast<float>(sums[0]));
      const float d = zs[t] - m, ell = d - lse;  // no multiply: nothing to contract
      p.top[(q * k + t) * 2] = tok[t];
      p.top[(q * k + t) * 2 + 1] = __float_as_uint(ell);
    }
    __syncthreads();  // this row's shared arrays are read before the next row's writes
  }
}

struct Tree {
  const uint32_t* top;  // this tree's [slots, k, 2]
  const float* fr_score;
  uint32_t k;
  __device__ float ell(uint32_t c) const { return __uint_as_float(top[c * 2 + 1]); }
  __device__ uint32_t level(uint32_t c) const { return c < k ? 1u : 2u + (c - k) / (k * k); }
  __device__ uint32_t slot(uint32_t c) const { return ((c - k) % (k * k)) / k; }
  __device__ float score(uint32_t c) const {
    const uint32_t l = level(c);
    if (l == 1) return fminf(0.0f, ell(c));
    const float P = fr_score[(l - 2) * k + slot(c)];
    return fminf(P, P + ell(c));
  }
  __device__ void operator()(uint32_t i, uint32_t& hi, uint32_t& lo) const {
    hi = order_key(score(i));
    lo = 0xfffffu - i;
  }
};

__global__ void __launch_bounds__(T) select_kernel(const Params p) {
  __shared__ Radix radix;
  __shared__ float fr_score[kMaxD * kMaxK], sc[kMaxK * kMaxK];
  __shared__ uint32_t fr_cand[kMaxD * kMaxK], bits[kWords], before[kWords];
  const uint32_t t = threadIdx.x, k = static_cast<uint32_t>(p.s.top_k), D = static_cast<uint32_t>(p.s.depth);
  const uint32_t C = static_cast<uint32_t>(p.s.candidates), n = static_cast<uint32_t>(p.s.nodes);
  for (int64_t b = blockIdx.x; b < p.s.batch; b += gridDim.x) {
    const Tree tree{p.top + b * C * 2, fr_score, k};
    for (uint32_t s = t; s < k; s += T) {
      fr_cand[s] = s;
      fr_score[s] = fminf(0.0f, tree.ell(s));
    }
    __syncthreads();
    for (uint32_t level = 2; level < D; ++level) {
      const uint32_t start = k + (level - 2) * k * k;
      for (uint32_t i = t; i < k * k; i += T) sc[i] = tree.score(start + i);
      __syncthreads();
      for (uint32_t i = t; i < k * k; i += T) {
        const uint32_t s = i / k, r = i % k;
        const float v = sc[i];
        uint32_t rank = r;
        for (uint32_t o = 0; o < k && rank < k; ++o) {
          if (o == s) continue;
          uint32_t lo = 0, hi = k;  // list o's first child that does not beat v
          while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2;
            const float x = sc[o * k + mid];
            if (o > s ? x > v : x >= v) lo = mid + 1;
            else hi = mid;
          }
          rank += lo;
        }
        if (rank < k) {
          fr_cand[(level - 1) * k + rank] = start + i;
          fr_score[(level - 1) * k + rank] = v;
        }
      }
      __syncthreads();
    }

    const uint32_t words = (C + 31) / 32;
    const Threshold th = select_top(radix, C, n - 1, 0u, tree);
    // A warp's 32 items are one word (T is a multiple of 32): its ballot, whole warps going round.
    for (uint32_t base = 0; base < C; base += T) {
      const uint32_t i = base + t;
      uint32_t hi = 0, lo = 0;
      if (i < C) tree(i, hi, lo);
      const unsigned word = __ballot_sync(0xffffffffu, i < C && th.selected(hi, lo));
      if ((t & 31) == 0 && i < C) bits[i >> 5] = word;
    }
    __syncthreads();
    const uint32_t per = (words + T - 1) / T, w0 = min(t * per, words), w1 = min(w0 + per, words);
    uint32_t own = 0;
    for (uint32_t w = w0; w < w1; ++w) own += __popc(bits[w]);
    radix.csum[t] = own;
    __syncthreads();
    for (uint32_t off = 1; off < T; off <<= 1) {
      const uint32_t add = t >= off ? radix.csum[t - off] : 0u;
      __syncthreads();
      radix.csum[t] += add;
      __syncthreads();
    }
    uint32_t run = radix.csum[t] - own;
    for (uint32_t w = w0; w < w1; ++w) {
      before[w] = run;
      run += __popc(bits[w]);
    }
    __syncthreads();
    const auto node_of = [&](uint32_t c) {
      const uint32_t w = c >> 5;
      return 1u + before[w] + __popc(bits[w] & ((1u << (c & 31)) - 1u));
    };
    int32_t* tokens = p.tokens + b * n;
    int32_t* parents = p.parents + b * n;
    if (t == 0) {
      tokens[0] = p.root_token[b];
      parents[0] = -1;
    }
    for (uint32_t c = t; c < C; c += T) {
      if ((bits[c >> 5] & (1u << (c & 31))) == 0) continue;
      const uint32_t node = node_of(c), l = tree.level(c);
      tokens[node] = static_cast<int32_t>(tree.top[c * 2]);
      parents[node] = l == 1 ? 0 : static_cast<int32_t>(node_of(fr_cand[(l - 2) * k + tree.slot(c)]));
    }
    __syncthreads();  // this tree's shared arrays are read before the next tree's writes
  }
}

}  // namespace

cudaError_t configure(int* rows_per_sm, int* select_per_sm) {
  const cudaError_t e = configure_kernel(rows_kernel, T, 0, rows_per_sm);
  if (e != cudaSuccess) return e;
  return configure_kernel(select_kernel, T, 0, select_per_sm);
}

cudaError_t launch(const Params& p, int64_t row_ctas, int64_t tree_ctas, cudaStream_t stream) {
  const cudaError_t e = launch_kernel(rows_kernel, dim3(static_cast<unsigned>(row_ctas)), dim3(T), 0, stream, p);
  if (e != cudaSuccess) return e;
  return launch_kernel(select_kernel, dim3(static_cast<unsigned>(tree_ctas)), dim3(T), 0, stream, p);
}

}  // namespace attnbench::cuda::eagle2
