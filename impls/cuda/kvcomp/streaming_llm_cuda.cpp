// streaming_llm on CUDA (variant "gather"): one launch of a word-copy kernel (streaming_llm.cu)
// that writes the kept indices, the lengths and the compacted K and V, padding included.
#include <cstdint>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "reference/kvcomp/streaming_llm_common.h"
#include "streaming_llm_launch.h"

namespace attnbench::cuda {
namespace {

// The widest word that divides the row and every buffer's address.
int word_bytes(int64_t row_bytes, const IoBuffers& io) {
  for (int w : {16, 8, 4}) {
    bool fits = row_bytes % w == 0;
    for (const char* name : {"k", "v", "k_kept", "v_kept"})
      fits = fits && reinterpret_cast<uintptr_t>(io[name].ptr()) % w == 0;
    if (fits) return w;
  }
  return 2;  // every dtype here is at least 2 bytes
}

class CudaStreamingLlm final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    const kvcomp::StreamingShape s = kvcomp::streaming_shape(c);
    const int64_t ctas = s.batch * s.kv_heads * ((s.budget + kv::kPositionsPerCta - 1) / kv::kPositionsPerCta);
    if (ctas > INT32_MAX) return Support::no(cat(ctas, " CTAs exceed the grid's 2^31 − 1"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    stream_ = as_cuda(backend).stream();
    const kvcomp::StreamingShape s = kvcomp::streaming_shape(c);
    p_.k = io["k"].ptr();
    p_.v = io["v"].ptr();
    p_.k_kept = io["k_kept"].ptr();
    p_.v_kept = io["v_kept"].ptr();
    p_.kept_idx = io["kept_idx"].ptr<int32_t>();
    p_.kept_len = io["kept_len"].ptr<int32_t>();
    p_.rows = s.batch * s.kv_heads;
    p_.kv_len = s.kv_len;
    p_.budget = s.budget;
    p_.kept = s.kept();
    p_.sinks = s.sinks();
    p_.row_bytes = s.head_dim * static_cast<int64_t>(dtype_size(c.dtype));
    word_bytes_ = word_bytes(p_.row_bytes, io);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(kv::streaming_llm_launch(p_, word_bytes_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  kv::StreamingParams p_{};
  int word_bytes_ = 2;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaStreamingLlm, "streaming_llm", "cuda", "gather");
