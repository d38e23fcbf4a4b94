// penalties on the CPU (variant "scatter"): rows in parallel on the backend's pool; per row the
// counts are zeroed, the history scattered into them (a row's history is one thread's, so plain
// increments), and one pass over the vocabulary applies penalised() (penalties_common.h) where the
// count is non-zero and copies the logit elsewhere, a loop the compiler vectorises.
#include <algorithm>
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/penalties_common.h"

namespace attnbench::cpu {
namespace {

class CpuPenalties final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    pool_ = &as_cpu(backend).pool();
    p_ = decoding::penalties_params(c);
    logits_ = io["logits"].ptr<float>();
    history_ = io["history"].ptr<int32_t>();
    out_ = io["logits_out"].ptr<float>();
    counts_ = io["counts"].ptr<int32_t>();
  }

  void run() override {
    const int64_t V = p_.vocab, L = p_.history;
    pool_->parallel_for(p_.batch, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        int32_t* count = counts_ + b * V;
        std::memset(count, 0, sizeof(int32_t) * static_cast<size_t>(V));
        const int32_t* h = history_ + b * L;
        for (int64_t i = 0; i < L; ++i) ++count[h[i]];
        const float* z = logits_ + b * V;
        float* o = out_ + b * V;
        for (int64_t x = 0; x < V; ++x) o[x] = decoding::penalised(p_, z[x], count[x]);
      }
    });
  }

 private:
  ThreadPool* pool_ = nullptr;
  decoding::PenaltiesParams p_{};
  const float* logits_ = nullptr;
  const int32_t* history_ = nullptr;
  float* out_ = nullptr;
  int32_t* counts_ = nullptr;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuPenalties, "penalties", "cpu", "scatter");
