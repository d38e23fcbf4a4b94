// tree_mask on CUDA (semantics: reference/decoding/tree_mask.cpp): a CTA per tree, the CTAs of the
// grid taking trees in turn, the tree in shared memory. Stages, each after a barrier:
//   0. the parents into shared memory, the child counts zeroed;
//   1. a thread per node (i = t, t + T, ...) walks its ancestor chain once: the indices fall along
//      it, so the row's mask words come out highest first, each written once (no read-modify-write
//      of global memory), and the steps count the depth (→ depth, position_ids, shared depth);
//      the node's parent gets a child (one shared atomic per distinct parent of a warp);
//   2. the leaf flags as one ballot word per 32 nodes, then warp 0's exclusive scan of their
//      popcounts: each word's first leaf index, and n_leaves;
//   3. a leaf's retrieve row is its word's base plus the leaves below it in the word; its thread
//      writes its path (depth down to the root) and the −1 tail; then the block writes −1 over the
//      rows l ≥ n_leaves, contiguous, so consecutive threads take consecutive elements.
#include "../runtime/launch.cuh"
#include "tree_mask_launch.h"

namespace attnbench::cuda::tree_mask {
namespace {

constexpr unsigned kFull = 0xffffffffu;

__global__ void __launch_bounds__(kMaxThreads) tree_mask_kernel(const Params p) {
  ATTNBENCH_DYNAMIC_SMEM(int32_t, smem);
  __shared__ int32_t leaves_s;
  const int n = p.s.nodes, W = p.s.mask_words, L = p.s.max_depth + 1, words = (n + 31) / 32;
  int32_t* par = smem;                                             // [n]
  int32_t* depth = par + n;                                        // [n]
  int32_t* children = depth + n;                                   // [n]
  uint32_t* leaf_bits = reinterpret_cast<uint32_t*>(children + n);  // [words]: bit i%32 set iff i is a leaf
  int32_t* leaf_base = reinterpret_cast<int32_t*>(leaf_bits + words);  // [words]: leaves before the word
  const int T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x), lane = t & 31;

  for (int64_t b = blockIdx.x; b < p.s.batch; b += gridDim.x) {
    const int64_t row0 = b * n;
    // 0. A parent that is not below its child (never in a valid tree) is read as the root's −1, so
    // every walk strictly descends and ends: a bad input cannot hang the device.
    for (int i = t; i < n; i += T) {
      const int32_t q = p.parents[row0 + i];
      par[i] = q >= 0 && q < i ? q : -1;
      children[i] = 0;
    }
    __syncthreads();

    // 1. Rows, depths, child counts. Whole warps go round (the loop bound is uniform) for the
    // match below.
    uint32_t* mask = p.mask + row0 * W;
    for (int base = 0; base < n; base += T) {
      const int i = base + t;
      int32_t q = -1;
      if (i < n) {
        q = par[i];
        uint32_t* row = mask + static_cast<int64_t>(i) * W;
        int j = i, d = -1;
        for (int w = W - 1; w >= 0; --w) {  // words past i's get no bit: written 0
          const int lo = w * 32;
          uint32_t bits = 0;
          for (; j >= lo; j = par[j], ++d) bits |= 1u << (j & 31);
          row[w] = bits;
        }
        depth[i] = d;
        p.depth[row0 + i] = d;
        p.position_ids[row0 + i] = p.s.prefix + d;
      }
      // Siblings are often neighbours (a star's are all): one atomic per distinct parent of a warp.
      const unsigned same = __match_any_sync(kFull, q);
      if (q >= 0 && lane == __ffs(static_cast<int>(same)) - 1) atomicAdd(&children[q], 1);
    }
    __syncthreads();

    // 2. Leaf bits (T is a multiple of 32, so a warp's nodes are one word), then their scan.
    for (int base = 0; base < n; base += T) {
      const int i = base + t;
      const unsigned leaves = __ballot_sync(kFull, i < n && children[i] == 0);
      if (lane == 0 && i < n) leaf_bits[i >> 5] = leaves;
    }
    __syncthreads();
    if (t < 32) {
      int carry = 0;
      for (int m0 = 0; m0 < words; m0 += 32) {
        const int m = m0 + lane;
        const int c = m < words ? __popc(leaf_bits[m]) : 0;
        int incl = c;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
          const int v = __shfl_up_sync(kFull, incl, off);
          if (lane >= off) incl += v;
        }
        if (m < words) leaf_base[m] = carry + incl - c;
        carry += __shfl_sync(kFull, incl, 31);
      }
      if (lane == 0) {
        leaves_s = carry;
        p.n_leaves[b] = carry;
      }
    }
    __syncthreads();

    // 3. Retrieve rows.
    const int n_leaves = leaves_s;
    int32_t* retrieve = p.retrieve + row0 * L;
    for (int i = t; i < n; i += T) {
      const uint32_t bits = leaf_bits[i >> 5];
      const int k = i & 31;
      if (((bits >> k) & 1u) == 0) continue;
      const int l = leaf_base[i >> 5] + __popc(bits & ((1u << k) - 1u));
      int32_t* path = retrieve + static_cast<int64_t>(l) * L;
      const int d = depth[i];
      int s = 0;
      if (d < L) {  // always, in a tree within max_depth; a deeper path is not written past its row
        for (int j = i, u = d; j >= 0; j = par[j]) path[u--] = j;
        s = d + 1;
      }
      for (; s < L; ++s) path[s] = -1;
    }
    const int64_t end = static_cast<int64_t>(n) * L;
    for (int64_t e = static_cast<int64_t>(n_leaves) * L + t; e < end; e += T) retrieve[e] = -1;
    __syncthreads();  // every read of this tree's shared arrays before the next tree's stage 0
  }
}

}  // namespace

cudaError_t configure(int threads, size_t smem, int* ctas_per_sm) {
  return configure_kernel(tree_mask_kernel, threads, smem, ctas_per_sm);
}

cudaError_t launch(const Params& p, int64_t ctas, int threads, size_t smem, cudaStream_t stream) {
  return launch_kernel(tree_mask_kernel, dim3(static_cast<unsigned>(ctas)), dim3(static_cast<unsigned>(threads)), smem,
                       stream, p);
}

}  // namespace attnbench::cuda::tree_mask
