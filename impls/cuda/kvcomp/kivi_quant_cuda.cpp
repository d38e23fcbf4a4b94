// kivi on CUDA (variant "packed"): KIVI's quantizer in one launch of kivi_quant.cu, one thread per
// key group, value group or window row (kivi_quant_launch.h). Every output is written whole,
// padding included, so the outputs are the reference's tensors bit for bit.
#include <string>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "kivi_quant_launch.h"

namespace attnbench::cuda {
namespace {

std::string kivi_quant_unsupported(const Case& c) {
  if (c.dtype != DType::f16 && c.dtype != DType::bf16)
    return cat("dtype ", dtype_name(c.dtype), ": KIVI's scales and windows are f16 or bf16");
  const kvcomp::KiviParams s = kvcomp::kivi_params(c);
  const int64_t items = int64_t{s.batch} * s.kv_heads *
                        (kvcomp::kivi_k_groups(s) * s.head_dim + int64_t{s.v_quant_cap} * kvcomp::kivi_v_groups(s) + 2 * s.residual + 1);
  if ((items + kivi_quant::kThreads - 1) / kivi_quant::kThreads >= (int64_t{1} << 31))
    return "the quantizer needs more than 2^31 − 1 CTAs";
  return {};
}

class CudaKivi final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    const std::string why = kivi_quant_unsupported(c);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const std::string why = kivi_quant_unsupported(c);
    ATTNBENCH_ASSERT(why.empty(), "prepare() of a kivi case the cuda impl refused: ", why);
    elem_ = *elem_of(c.dtype);
    const kvcomp::KiviParams s = kvcomp::kivi_params(c);
    kivi_quant::Args& a = args_;
    a = kivi_quant::Args{};
    a.s = s;
    a.k = io["k"].ptr();
    a.v = io["v"].ptr();
    a.kv_len = io["kv_len"].ptr<int32_t>();
    a.k_codes = io["k_codes"].ptr<uint32_t>();
    a.k_scale = io["k_scale"].ptr();
    a.k_min = io["k_min"].ptr();
    a.k_full = io["k_full"].ptr();
    a.v_codes = io["v_codes"].ptr<uint32_t>();
    a.v_scale = io["v_scale"].ptr();
    a.v_min = io["v_min"].ptr();
    a.v_full = io["v_full"].ptr();
    a.k_quant_groups = io["k_quant_groups"].ptr<int32_t>();
    a.k_full_len = io["k_full_len"].ptr<int32_t>();
    a.v_quant_len = io["v_quant_len"].ptr<int32_t>();
    a.v_full_len = io["v_full_len"].ptr<int32_t>();
    const int64_t rows = int64_t{s.batch} * s.kv_heads;
    a.key_items = rows * kvcomp::kivi_k_groups(s) * s.head_dim;
    a.value_items = rows * s.v_quant_cap * kvcomp::kivi_v_groups(s);
    a.items = a.key_items + a.value_items + rows * (2 * int64_t{s.residual} + 1);
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(kivi_quant::quant_launch(elem_, args_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f16;
  kivi_quant::Args args_{};
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaKivi, "kivi", "cuda", "packed");
