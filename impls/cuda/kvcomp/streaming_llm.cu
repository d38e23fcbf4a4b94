// streaming_llm's compaction kernel (semantics: reference/kvcomp/streaming_llm.cpp). Pure data
// movement: each CTA fills kPositionsPerCta kept positions of one row (b, g) of k_kept and v_kept,
// threads striding over the positions' words so that neighbouring threads touch neighbouring
// words (the sinks and the recent window are each contiguous in the cache, so reads coalesce as
// well as writes). Positions at or beyond `kept` get zeros and index −1.
//
// Four instances of one small template (the word type), in this one file: they compile in
// seconds, unlike the attention kernels that CMake spreads one per file.
#include <cstdint>

#include "streaming_llm_launch.h"

namespace attnbench::cuda::kv {
namespace {

constexpr int kThreads = 256;

template <typename Word>
__global__ void __launch_bounds__(kThreads) streaming_llm_kernel(const StreamingParams p, int64_t ctas_per_row) {
  const int64_t row = blockIdx.x / ctas_per_row;
  const int64_t first = (blockIdx.x % ctas_per_row) * kPositionsPerCta;
  const int count = static_cast<int>(min(static_cast<int64_t>(kPositionsPerCta), p.budget - first));
  const int words = static_cast<int>(p.row_bytes / static_cast<int64_t>(sizeof(Word)));
  const int64_t shift = p.kv_len - p.kept;  // the recent window: position r holds token r + shift

  const Word* __restrict__ k = static_cast<const Word*>(p.k) + row * p.kv_len * words;
  const Word* __restrict__ v = static_cast<const Word*>(p.v) + row * p.kv_len * words;
  Word* __restrict__ k_out = static_cast<Word*>(p.k_kept) + (row * p.budget + first) * words;
  Word* __restrict__ v_out = static_cast<Word*>(p.v_kept) + (row * p.budget + first) * words;

  for (int i = threadIdx.x; i < count * words; i += kThreads) {
    const int64_t r = first + i / words;
    Word kw{}, vw{};  // zeros beyond the kept length
    if (r < p.kept) {
      const int64_t src = (r < p.sinks ? r : r + shift) * words + i % words;
      kw = k[src];
      vw = v[src];
    }
    k_out[i] = kw;
    v_out[i] = vw;
  }
  if (threadIdx.x < count) {
    const int64_t r = first + threadIdx.x;
    p.kept_idx[row * p.budget + r] = r < p.kept ? static_cast<int32_t>(r < p.sinks ? r : r + shift) : -1;
  }
  if (first == 0 && threadIdx.x == 0) p.kept_len[row] = static_cast<int32_t>(p.kept);
}

template <typename Word>
cudaError_t launch(const StreamingParams& p, cudaStream_t stream) {
  const int64_t ctas_per_row = (p.budget + kPositionsPerCta - 1) / kPositionsPerCta;
  streaming_llm_kernel<Word><<<static_cast<unsigned>(p.rows * ctas_per_row), kThreads, 0, stream>>>(p, ctas_per_row);
  return cudaGetLastError();
}

}  // namespace

cudaError_t streaming_llm_launch(const StreamingParams& p, int word_bytes, cudaStream_t stream) {
  switch (word_bytes) {
    case 16: return launch<uint4>(p, stream);
    case 8: return launch<uint2>(p, stream);
    case 4: return launch<uint32_t>(p, stream);
    case 2: return launch<uint16_t>(p, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace attnbench::cuda::kv
