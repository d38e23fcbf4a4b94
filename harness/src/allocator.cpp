#include "attnbench/allocator.h"

#include <algorithm>
#include <cstring>

#include "attnbench/error.h"

namespace attnbench {

namespace {
std::vector<unsigned char> guard_bytes() {
  std::vector<unsigned char> g(Allocator::kGuardBytes);
  for (size_t i = 0; i < g.size(); i += 8) std::memcpy(&g[i], &Allocator::kGuardPattern, 8);
  return g;
}
}  // namespace

std::string human_bytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = n;
  int u = 0;
  while (v >= 1024 && u < 6) { v /= 1024; ++u; }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, units[u]);
  return buf;
}

Buffer::~Buffer() {
  if (owner_) owner_->release(this);
}

BufferPtr Allocator::allocate(size_t bytes, std::string name, BufferRole role) {
  if (bytes > max_allocation())
    throw BackendError(cat("allocation of ", human_bytes(static_cast<double>(bytes)), " for \"", name, "\" exceeds the device's limit of ",
                           human_bytes(static_cast<double>(max_allocation()))));
  const size_t total = bytes + 2 * kGuardBytes;
  const Raw raw = raw_allocate(total);
  static const std::vector<unsigned char> guard = guard_bytes();
  try {
    raw_write(raw, 0, guard.data(), kGuardBytes);
    raw_write(raw, kGuardBytes + bytes, guard.data(), kGuardBytes);
  } catch (...) {
    raw_free(raw);
    throw;
  }
  BufferPtr b(new Buffer(this, std::move(name), bytes, role, raw.native, kGuardBytes));
  b->extra = raw.extra;
  std::lock_guard lock(mu_);
  live_.push_back(b.get());
  current_ += bytes;
  peak_ = std::max(peak_, current_);
  auto r = static_cast<size_t>(role);
  current_by_role_[r] += bytes;
  peak_by_role_[r] = std::max(peak_by_role_[r], current_by_role_[r]);
  return b;
}

void Allocator::release(Buffer* b) noexcept {
  {
    std::lock_guard lock(mu_);
    live_.erase(std::remove(live_.begin(), live_.end(), b), live_.end());
    current_ -= b->bytes_;
    current_by_role_[static_cast<size_t>(b->role_)] -= b->bytes_;
  }
  raw_free(Raw{b->native_, b->extra});
}

size_t Allocator::current_bytes() const { std::lock_guard lock(mu_); return current_; }
size_t Allocator::peak_bytes() const { std::lock_guard lock(mu_); return peak_; }
size_t Allocator::peak_bytes(BufferRole role) const {
  std::lock_guard lock(mu_);
  return peak_by_role_[static_cast<size_t>(role)];
}

void Allocator::reset_peak() {
  std::lock_guard lock(mu_);
  peak_ = current_;
  for (int r = 0; r < 3; ++r) peak_by_role_[r] = current_by_role_[r];
}

std::vector<std::string> Allocator::check_guards() {
  static const std::vector<unsigned char> guard = guard_bytes();
  std::vector<Buffer*> live;
  {
    std::lock_guard lock(mu_);
    live = live_;
  }
  std::vector<std::string> bad;
  std::vector<unsigned char> got(kGuardBytes);
  for (Buffer* b : live) {
    const Raw raw{b->native_, b->extra};
    raw_read(raw, 0, got.data(), kGuardBytes);
    if (got != guard) bad.push_back(b->name_ + " (before start)");
    raw_read(raw, kGuardBytes + b->bytes_, got.data(), kGuardBytes);
    if (got != guard) bad.push_back(b->name_ + " (after end)");
  }
  return bad;
}

}  // namespace attnbench
