// quest on the CPU (variant "pages"): every KV head's page bounds from its summaries and its
// group's queries (quest_kernel.h), one score per candidate token; then the family's select and
// the decode step over the kept pages (scored_selection_cpu.h, selection-only).
#include <algorithm>

#include "quest_kernel.h"
#include "scored_selection_cpu.h"

namespace attnbench::cpu {
namespace {

class CpuQuest final : public CpuScoredSelection {
  void prepare_scores(const Case& c, CpuBackend& cpu, const IoBuffers& io) override {
    kernels_ = &cpu.kernels<quest::Kernels>();
    q_ = io["q"].ptr();
    kmin_ = io["kmin"].ptr();
    kmax_ = io["kmax"].ptr();
    dtype_ = c.dtype;
    page_size_ = c.i64("page_size");
    const kvcomp::SelectionParams& s = selection();
    dp_ = (s.head_dim + kernels_->vector_width - 1) / kernels_->vector_width * kernels_->vector_width;
    // The queries widened once per run: [batch·q_heads, dp] fp32.
    q32_ = cpu.allocator().allocate(int64_t{s.batch} * s.q_heads * dp_ * sizeof(float), "quest.q_f32");
  }

  void score() override {
    const kvcomp::SelectionParams& s = selection();
    const int64_t pages_all = (s.kv_len + page_size_ - 1) / page_size_, pages = s.candidates / page_size_;
    const size_t es = static_cast<size_t>(s.elem_bytes), row_bytes = static_cast<size_t>(s.head_dim) * es;
    float* q32 = q32_->ptr<float>();
    for (int64_t r = 0; r < int64_t{s.batch} * s.q_heads; ++r)
      kernels_->widen(static_cast<const char*>(q_) + r * row_bytes, dtype_, s.head_dim, dp_, q32 + r * dp_);
    // Tasks: (row, chunk of pages), so one sequence's few KV heads still spread over the threads.
    constexpr int64_t kPagesPerTask = 256;
    const int64_t chunks = (pages + kPagesPerTask - 1) / kPagesPerTask, rows = kvcomp::cache_rows(s);
    pool().parallel_for(rows * chunks, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t row = t / chunks, p0 = t % chunks * kPagesPerTask, n = std::min(kPagesPerTask, pages - p0);
        const int64_t b = row / s.kv_heads, g = row % s.kv_heads;
        const size_t summary = static_cast<size_t>(row * pages_all + p0) * row_bytes;
        kernels_->bounds(q32 + (b * s.q_heads + g * s.group) * dp_, s.group, dp_, static_cast<const char*>(kmin_) + summary,
                         static_cast<const char*>(kmax_) + summary, dtype_, s.head_dim, n, page_size_,
                         scores() + row * s.candidates + p0 * page_size_);
      }
    });
  }

  const quest::Kernels* kernels_ = nullptr;
  const void *q_ = nullptr, *kmin_ = nullptr, *kmax_ = nullptr;
  DType dtype_ = DType::f32;
  int64_t page_size_ = 16, dp_ = 0;
  BufferPtr q32_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuQuest, "quest", "cpu", "pages");
