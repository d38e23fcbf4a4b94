// kivi on the CPU (variant "packed"): KIVI's quantizer (kivi_quant_kernel.h) over (sequence·KV
// head, block) tasks on the backend's pool: the keys' token groups in blocks of about 256 tokens
// (every channel, a vector of channels at a time), the values' tokens in blocks of 256, and one
// task per (sequence, KV head) that copies its full-precision windows and writes the split's
// lengths. Every task writes its part of the layout's padding too, so the outputs are the
// reference's whole tensors, bit for bit (reference/kvcomp/kivi.cpp).
#include <algorithm>
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "kivi_quant_kernel.h"

namespace attnbench::cpu {
namespace {

constexpr int64_t kBlockTokens = 256;  // tokens of a keys or values task (a multiple of every vector width)

class CpuKivi final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.dtype != DType::f16 && c.dtype != DType::bf16)
      return Support::no(cat("dtype ", dtype_name(c.dtype), ": KIVI's scales and windows are f16 or bf16"));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<kivi_quant::Kernels>();
    const kvcomp::KiviParams s = kvcomp::kivi_params(c);
    p_ = {s,
          c.dtype,
          io["k"].ptr(),
          io["v"].ptr(),
          io["k_codes"].ptr<uint32_t>(),
          io["k_scale"].ptr(),
          io["k_min"].ptr(),
          io["v_codes"].ptr<uint32_t>(),
          io["v_scale"].ptr(),
          io["v_min"].ptr()};
    kv_len_ = io["kv_len"].ptr<int32_t>();
    k_full_ = io["k_full"].ptr<uint16_t>();
    v_full_ = io["v_full"].ptr<uint16_t>();
    k_quant_groups_ = io["k_quant_groups"].ptr<int32_t>();
    k_full_len_ = io["k_full_len"].ptr<int32_t>();
    v_quant_len_ = io["v_quant_len"].ptr<int32_t>();
    v_full_len_ = io["v_full_len"].ptr<int32_t>();
    group_block_ = std::max<int64_t>(1, kBlockTokens / s.group_size);
    key_tasks_ = (kvcomp::kivi_k_groups(s) + group_block_ - 1) / group_block_;
    value_tasks_ = (int64_t{s.v_quant_cap} + kBlockTokens - 1) / kBlockTokens;
    scratch_stride_ = kivi_quant::scratch_floats(s);
    scratch_ = cpu.allocator().allocate(scratch_stride_ * pool_->size() * sizeof(float), "kivi.scratch");
  }

  void run() override {
    const kvcomp::KiviParams& s = p_.s;
    const int64_t per_row = key_tasks_ + value_tasks_ + 1;
    float* scratch = scratch_->ptr<float>();
    pool_->parallel_for_slots(int64_t{s.batch} * s.kv_heads * per_row, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t bh = task / per_row, j = task % per_row;
        const int64_t len = std::clamp<int64_t>(kv_len_[bh / s.kv_heads], 0, s.kv_cap);
        if (j < key_tasks_) {
          kernels_->keys(p_, bh, len, j * group_block_, std::min<int64_t>(kvcomp::kivi_k_groups(s), (j + 1) * group_block_));
        } else if (j < key_tasks_ + value_tasks_) {
          const int64_t t0 = (j - key_tasks_) * kBlockTokens;
          kernels_->values(p_, bh, len, t0, std::min<int64_t>(s.v_quant_cap, t0 + kBlockTokens), scratch + slot * scratch_stride_);
        } else {
          windows(bh, len);
        }
      }
    });
  }

 private:
  // The full-precision windows of (sequence, KV head) bh, NaN rows past their lengths, and the
  // split's lengths.
  void windows(int64_t bh, int64_t len) const {
    const kvcomp::KiviParams& s = p_.s;
    const int64_t D = s.head_dim, T = s.kv_cap, R = s.residual;
    const int64_t kq = kvcomp::kivi_k_quant(s, len), kf = kvcomp::kivi_k_full(s, len);
    const int64_t vq = kvcomp::kivi_v_quant(s, len), vf = kvcomp::kivi_v_full(s, len);
    const uint16_t nan = p_.dtype == DType::f16 ? 0x7E00 : 0x7FC0;  // the reference's NaN (dtype.cpp)
    const auto* k = static_cast<const uint16_t*>(p_.k) + bh * T * D;
    const auto* v = static_cast<const uint16_t*>(p_.v) + bh * T * D;
    std::memcpy(k_full_ + bh * R * D, k + kq * D, static_cast<size_t>(kf * D) * 2);
    std::fill(k_full_ + (bh * R + kf) * D, k_full_ + (bh + 1) * R * D, nan);
    std::memcpy(v_full_ + bh * (R + 1) * D, v + vq * D, static_cast<size_t>(vf * D) * 2);
    std::fill(v_full_ + (bh * (R + 1) + vf) * D, v_full_ + (bh + 1) * (R + 1) * D, nan);
    std::fill_n(k_quant_groups_ + bh * D, D, static_cast<int32_t>(kq / s.group_size));
    k_full_len_[bh] = static_cast<int32_t>(kf);
    v_quant_len_[bh] = static_cast<int32_t>(vq);
    v_full_len_[bh] = static_cast<int32_t>(vf);
  }

  ThreadPool* pool_ = nullptr;
  const kivi_quant::Kernels* kernels_ = nullptr;
  kivi_quant::Problem p_{};
  const int32_t* kv_len_ = nullptr;
  uint16_t *k_full_ = nullptr, *v_full_ = nullptr;
  int32_t *k_quant_groups_ = nullptr, *k_full_len_ = nullptr, *v_quant_len_ = nullptr, *v_full_len_ = nullptr;
  int64_t group_block_ = 1, key_tasks_ = 0, value_tasks_ = 0;
  size_t scratch_stride_ = 0;
  BufferPtr scratch_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuKivi, "kivi", "cpu", "packed");
