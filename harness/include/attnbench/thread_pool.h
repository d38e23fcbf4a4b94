// The project's own thread pool (std::thread, not OpenMP, so ThreadSanitizer sees every
// synchronisation). One parallel_for at a time; the calling thread works too.
//
//   pool.parallel_for(n_tasks, [&](int64_t begin, int64_t end) { for (i = begin; i < end; ++i) ... });
//
// Tasks are handed out in chunks of `grain` from a shared counter, so uneven tasks balance. Code
// whose result must not depend on the thread count (the reference) makes each task independent.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attnbench {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);  // 0: std::thread::hardware_concurrency()
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);
  // The same, also passing the running thread's slot in [0, size()) (the caller is slot 0), so
  // tasks can use per-thread scratch memory.
  using SlotFn = std::function<void(int64_t begin, int64_t end, unsigned slot)>;
  void parallel_for_slots(int64_t n, const SlotFn& fn, int64_t grain = 1);

 private:
  void worker_loop(unsigned slot);
  static void drain(const SlotFn& fn, int64_t n, int64_t grain, std::atomic<int64_t>& next, unsigned slot);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  const SlotFn* fn_ = nullptr;
  int64_t n_ = 0, grain_ = 1;
  std::atomic<int64_t> next_{0};
  size_t finished_ = 0;  // workers done with the current generation
};

// The pool the harness uses for input generation and references (every hardware thread).
ThreadPool& harness_pool();

}  // namespace attnbench
