#include "attnbench/thread_pool.h"

#include <algorithm>

namespace attnbench {

namespace {
thread_local bool t_in_task = false;  // a nested parallel_for runs inline instead of deadlocking
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::drain(const SlotFn& fn, int64_t n, int64_t grain, std::atomic<int64_t>& next, unsigned slot) {
  t_in_task = true;
  while (true) {
    const int64_t begin = next.fetch_add(grain, std::memory_order_relaxed);
    if (begin >= n) break;
    fn(begin, std::min(n, begin + grain), slot);
  }
  t_in_task = false;
}

void ThreadPool::worker_loop(unsigned slot) {
  uint64_t seen = 0;
  while (true) {
    const SlotFn* fn;
    int64_t n, grain;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      fn = fn_;
      n = n_;
      grain = grain_;
    }
    drain(*fn, n, grain, next_, slot);
    {
      std::lock_guard lock(mu_);
      if (++finished_ == workers_.size()) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  parallel_for_slots(n, [&fn](int64_t begin, int64_t end, unsigned) { fn(begin, end); }, grain);
}

void ThreadPool::parallel_for_slots(int64_t n, const SlotFn& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (workers_.empty() || n <= grain || t_in_task) {
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard lock(mu_);
    fn_ = &fn;
    n_ = n;
    grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain(fn, n, grain, next_, 0);
  // Every worker checks in once per generation, so none can wake later into a stale job.
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return finished_ == workers_.size(); });
  fn_ = nullptr;
}

ThreadPool& harness_pool() {
  static ThreadPool pool(0);
  return pool;
}

}  // namespace attnbench
