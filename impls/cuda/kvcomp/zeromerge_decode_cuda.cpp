// zeromerge_decode on CUDA (variant "rows"): the input cache copied into the outputs (device to
// device), then one launch of zeromerge_decode.cu in which a CTA per row (sequence, KV head) runs
// every step in order, the cache updated in place: rows never exchange data (the ring slot is a
// function of the step), so no step waits on another row and no grid-wide barrier is needed. A
// step's phases, between the CTA's barriers: the group's logits over the filled slots and the new
// token (each key read once for the group, λ·ln w added), a warp per head for the softmax, P·V
// with the value rows split over key groups, the scores, then the append or the argmin, the
// nearest dense slot and the merge (zeromerge_decode.cu's header). The logits [group, budget + 1]
// of each row live in a device workspace, since budgets run to thousands of slots.
// Limits: a GQA group of at most 8 (a warp per head in the softmax, the CTA's 8), head_dim a
// multiple of a 16-byte chunk up to 512 (the schema's widest), the CTA's shared memory (at most
// 82 KiB: bf16 rows of 512 in a group of 8) and the workspace within the device's limits. The
// kernel is instantiated once per element type, the three in zeromerge_decode.cu.
#include <optional>
#include <string>
#include <vector>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "zeromerge_decode_launch.h"

namespace attnbench::cuda {
namespace {

// The logits workspace: [rows, group, budget + 1] floats.
size_t zeromerge_logits_bytes(const kvcomp::ZeromergeParams& s) {
  return static_cast<size_t>(s.batch) * s.kv_heads * s.group * (static_cast<size_t>(s.budget) + 1) * sizeof(float);
}

std::string zeromerge_unsupported(const Case& c, const DeviceLimits& limits) {
  const std::optional<attn::Elem> elem = elem_of(c.dtype);
  if (!elem) return cat("dtype ", dtype_name(c.dtype), ": the kernel takes f32, f16 and bf16");
  const kvcomp::ZeromergeParams s = kvcomp::zeromerge_params(c);
  if (s.group > zeromerge::kMaxGroup)
    return cat("group=", s.group, " (q_heads / kv_heads): the softmax gives each query head of the group one of the CTA's ",
               zeromerge::kWarps, " warps");
  const int chunk = zeromerge::chunk_elems(*elem);
  if (s.head_dim % chunk != 0)
    return cat("head_dim=", s.head_dim, ": rows are read in 16-byte chunks, so head_dim must be a multiple of ", chunk, " in ",
               dtype_name(c.dtype));
  if (s.head_dim > zeromerge::kMaxHeadDim)
    return cat("head_dim=", s.head_dim, ": every value group of the CTA holds a whole row, so rows up to ", zeromerge::kMaxHeadDim);
  if (int64_t{s.batch} * s.kv_heads > 0x7fffffff) return "batch·kv_heads rows are the grid's x dimension: at most 2^31 − 1";
  const size_t smem = zeromerge::smem_bytes(s, *elem);
  if (limits.shared_mem_bytes > 0 && smem > limits.shared_mem_bytes)
    return cat("the CTA's ", smem, " bytes of shared memory (queries, partial outputs) exceed the device's ", limits.shared_mem_bytes);
  if (limits.max_buffer_bytes > 0 && zeromerge_logits_bytes(s) > limits.max_buffer_bytes)
    return cat("the logits workspace of ", zeromerge_logits_bytes(s), " bytes exceeds the largest allocation, ", limits.max_buffer_bytes);
  return {};
}

class CudaZeromergeDecode final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const std::string why = zeromerge_unsupported(c, limits);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const std::string why = zeromerge_unsupported(c, DeviceLimits{});
    ATTNBENCH_ASSERT(why.empty(), "prepare() of a zeromerge_decode case the cuda impl refused: ", why);
    elem_ = *elem_of(c.dtype);
    const kvcomp::ZeromergeParams s = kvcomp::zeromerge_params(c);
    const int chunks = s.head_dim / zeromerge::chunk_elems(elem_);

    zeromerge::Args& a = args_;
    a = zeromerge::Args{};
    a.s = s;
    a.q_new = io["q_new"].ptr();
    a.k_new = io["k_new"].ptr();
    a.v_new = io["v_new"].ptr();
    a.k = io["k_final"].ptr();
    a.v = io["v_final"].ptr();
    a.w = io["w_final"].ptr<float>();
    a.score = io["s_final"].ptr<float>();
    a.out = io["out"].ptr();
    a.merged_from = io["merged_from"].ptr<int32_t>();
    a.merged_into = io["merged_into"].ptr<int32_t>();
    a.key_lanes = zeromerge::key_lanes(chunks);
    a.value_groups = zeromerge::kThreads / chunks;
    logits_ = be.allocator().allocate(zeromerge_logits_bytes(s), "zeromerge_decode.logits");
    a.logits = logits_->ptr<float>();

    smem_ = zeromerge::smem_bytes(s, elem_);
    int ctas_per_sm = 0;
    ATTNBENCH_CUDA_CHECK(zeromerge::steps_configure(elem_, smem_, &ctas_per_sm));
    ATTNBENCH_ASSERT(ctas_per_sm > 0, "zeromerge_decode: a CTA with ", smem_, " bytes of shared memory does not fit on an SM");

    copies_.clear();
    for (const char* name : {"k", "v", "w", "s"}) {
      const std::string from = std::string(name) + "_cache", to = std::string(name) + "_final";
      copies_.push_back({io[from].ptr(), io[to].ptr(), io[from].bytes()});
    }
  }

  void run() override {
    check_not_lost();
    for (const Copy& cp : copies_)  // the steps update the cache in place
      ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(cp.to, cp.from, cp.bytes, cudaMemcpyDeviceToDevice, stream_));
    ATTNBENCH_CUDA_CHECK(zeromerge::steps_launch(elem_, args_, smem_, stream_));
  }

 private:
  struct Copy {
    const void* from;
    void* to;
    size_t bytes;
  };
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f16;
  zeromerge::Args args_{};
  size_t smem_ = 0;
  std::vector<Copy> copies_;
  BufferPtr logits_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaZeromergeDecode, "zeromerge_decode", "cuda", "rows");
