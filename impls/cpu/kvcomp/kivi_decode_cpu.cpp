// kivi_decode on the CPU (variant "fused"): the kernel of kivi_kernel.h over (sequence, KV head,
// split) tasks, then the splits' merge. The tokens of a (sequence, KV head) are cut into about 16
// tasks per thread when the pairs alone cannot fill the threads (flash-decoding, as the attention
// stage does), each split a whole number of the kernel's blocks; every task leaves a partial
// (m, l, unnormalised O) per row, and the merge writes O and LSE.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "kivi_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuKiviDecode final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<kivi::Kernels>();
    const kvcomp::KiviParams s = kvcomp::kivi_params(c);
    p_ = {s, c.dtype, io["q"].ptr(), io["k_codes"].ptr<uint32_t>(), io["k_scale"].ptr(), io["k_min"].ptr(), io["k_full"].ptr(),
          io["v_codes"].ptr<uint32_t>(), io["v_scale"].ptr(), io["v_min"].ptr(), io["v_full"].ptr(), io["kv_len"].ptr<int32_t>()};
    o_ = io["O"].ptr();
    lse_ = io["LSE"].ptr<float>();
    pairs_ = int64_t{s.batch} * s.kv_heads;
    const int64_t threads = pool_->size(), block = kivi::block_tokens(s);
    const int64_t want = (16 * threads + pairs_ - 1) / pairs_;
    splits_ = std::clamp<int64_t>(std::min<int64_t>(want, s.kv_cap / 1024), 1, 64);
    const int64_t per_split_tokens = (s.kv_cap + splits_ - 1) / splits_;
    split_len_ = std::max<int64_t>(block, (per_split_tokens + block - 1) / block * block);
    splits_ = std::max<int64_t>(1, (s.kv_cap + split_len_ - 1) / split_len_);
    per_split_ = int64_t{s.group} * (s.head_dim + 2);
    scratch_stride_ = kivi::scratch_floats(s);
    scratch_ = cpu.allocator().allocate(scratch_stride_ * threads * sizeof(float), "kivi_decode.scratch");
    partials_ = cpu.allocator().allocate(pairs_ * splits_ * per_split_ * sizeof(float), "kivi_decode.partials");
  }

  void run() override {
    const kvcomp::KiviParams& s = p_.s;
    float* scratch = scratch_->ptr<float>();
    float* partials = partials_->ptr<float>();
    const int64_t rows = s.group;
    pool_->parallel_for_slots(pairs_ * splits_, [&](int64_t begin, int64_t end, unsigned slot) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t pair = t / splits_, split = t % splits_;
        float* part = partials + t * per_split_;
        kernels_->attend(p_, pair / s.kv_heads, pair % s.kv_heads, split * split_len_, (split + 1) * split_len_,
                         scratch + slot * scratch_stride_, part, part + rows, part + 2 * rows);
      }
    });
    pool_->parallel_for(pairs_, [&](int64_t begin, int64_t end) { merge(begin, end); });
  }

 private:
  // O = Σ_s e^(m_s − M)·o_s / Σ_s e^(m_s − M)·l_s, LSE = M + log L, M the largest m_s.
  void merge(int64_t begin, int64_t end) const {
    const kvcomp::KiviParams& s = p_.s;
    const int64_t D = s.head_dim, rows = s.group, es = static_cast<int64_t>(dtype_size(p_.dtype));
    std::vector<float> acc(D);
    for (int64_t pair = begin; pair < end; ++pair) {
      const float* base = partials_->ptr<float>() + pair * splits_ * per_split_;
      const int64_t b = pair / s.kv_heads, h = pair % s.kv_heads;
      for (int64_t r = 0; r < rows; ++r) {
        float m = -INFINITY, l = 0;
        for (int64_t sp = 0; sp < splits_; ++sp) m = std::max(m, base[sp * per_split_ + r]);
        std::fill(acc.begin(), acc.end(), 0.0f);
        if (m != -INFINITY)
          for (int64_t sp = 0; sp < splits_; ++sp) {
            const float* part = base + sp * per_split_;
            if (part[rows + r] == 0.0f) continue;
            const float w = std::exp(part[r] - m);
            l += w * part[rows + r];
            for (int64_t x = 0; x < D; ++x) acc[x] += w * part[2 * rows + r * D + x];
          }
        const int64_t row = b * s.q_heads + h * rows + r;
        for (int64_t x = 0; x < D; ++x) {
          const float v = l == 0.0f ? 0.0f : acc[x] / l;
          const uint16_t bits = p_.dtype == DType::f16 ? f32_to_f16(v) : f32_to_bf16(v);
          std::memcpy(static_cast<char*>(o_) + (row * D + x) * es, &bits, 2);
        }
        lse_[row] = l == 0.0f ? -INFINITY : m + std::log(l);
      }
    }
  }

  ThreadPool* pool_ = nullptr;
  const kivi::Kernels* kernels_ = nullptr;
  kivi::Problem p_{};
  void* o_ = nullptr;
  float* lse_ = nullptr;
  int64_t pairs_ = 0, splits_ = 1, split_len_ = 0, per_split_ = 0;
  size_t scratch_stride_ = 0;
  BufferPtr scratch_, partials_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuKiviDecode, "kivi_decode", "cpu", "fused");
