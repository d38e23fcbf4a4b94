// streaming_llm on the CPU (variant "gather"). The selection is positional, so each row (b, g) is
// two contiguous ranges of the cache — the sinks and the recent window — copied with memcpy, and
// the copy is the whole cost: bandwidth-bound. Tasks are (row, K or V) pairs on the backend's
// pool, twice the rows, so a small batch still spreads over the threads; the K task of a row
// also writes its indices and length. Below kParallelBytes of cache written the caller copies
// alone: waking the pool costs more than it saves (25 µs alone against 235 µs, cv 124%, for a
// 256 KiB cache on a busy 2-thread machine).
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "reference/kvcomp/streaming_llm_common.h"

namespace attnbench::cpu {
namespace {

constexpr size_t kParallelBytes = size_t{1} << 20;

class CpuStreamingLlm final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    pool_ = &as_cpu(backend).pool();
    s_ = kvcomp::streaming_shape(c);
    row_bytes_ = static_cast<size_t>(s_.head_dim) * dtype_size(c.dtype);
    src_[0] = static_cast<const char*>(io["k"].ptr());
    src_[1] = static_cast<const char*>(io["v"].ptr());
    dst_[0] = static_cast<char*>(io["k_kept"].ptr());
    dst_[1] = static_cast<char*>(io["v_kept"].ptr());
    idx_ = io["kept_idx"].ptr<int32_t>();
    len_ = io["kept_len"].ptr<int32_t>();
  }

  void run() override {
    const int64_t tasks = 2 * s_.batch * s_.kv_heads;
    if (static_cast<size_t>(tasks * s_.budget) * row_bytes_ < kParallelBytes) {
      for (int64_t task = 0; task < tasks; ++task) compact(task / 2, static_cast<int>(task % 2));
      return;
    }
    pool_->parallel_for(tasks, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) compact(task / 2, static_cast<int>(task % 2));
    });
  }

 private:
  // Row bg of tensor t (0: K, 1: V): sinks [0, S) and the window [T − (n − S), T) into [0, n),
  // zeros in [n, budget).
  void compact(int64_t bg, int t) {
    const int64_t n = s_.kept(), sinks = s_.sinks();
    const char* src = src_[t] + bg * s_.kv_len * row_bytes_;
    char* dst = dst_[t] + bg * s_.budget * row_bytes_;
    std::memcpy(dst, src, sinks * row_bytes_);
    std::memcpy(dst + sinks * row_bytes_, src + s_.source(sinks) * row_bytes_, (n - sinks) * row_bytes_);
    std::memset(dst + n * row_bytes_, 0, (s_.budget - n) * row_bytes_);
    if (t != 0) return;
    int32_t* idx = idx_ + bg * s_.budget;
    for (int64_t r = 0; r < n; ++r) idx[r] = static_cast<int32_t>(s_.source(r));
    for (int64_t r = n; r < s_.budget; ++r) idx[r] = -1;
    len_[bg] = static_cast<int32_t>(n);
  }

  ThreadPool* pool_ = nullptr;
  kvcomp::StreamingShape s_{};
  size_t row_bytes_ = 0;
  const char* src_[2] = {};
  char* dst_[2] = {};
  int32_t *idx_ = nullptr, *len_ = nullptr;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuStreamingLlm, "streaming_llm", "cpu", "gather");
