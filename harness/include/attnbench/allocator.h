// The tracked allocator every impl allocates through (docs/design.md "Contracts").
//
// Each buffer is one raw allocation laid out as [guard | user bytes | guard]. Guards are filled
// with a fixed pattern when allocated and compared after each run (check_guards), so a write
// past either end fails the case, as ggml's sentinels do. Current and peak bytes count user
// bytes only. A backend implements the four raw_* hooks; the bookkeeping is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace attnbench {

// "16 TiB", "1.5 GiB": a byte count for messages.
std::string human_bytes(double bytes);

class Allocator;

enum class BufferRole { input, output, workspace };

// A device buffer. `native` is the backend's handle of the whole raw allocation (a host
// pointer, a CUDA device pointer, a VkBuffer) and `offset` the start of the user bytes in it.
class Buffer {
 public:
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  const std::string& name() const { return name_; }
  size_t bytes() const { return bytes_; }
  BufferRole role() const { return role_; }
  void* native() const { return native_; }
  size_t offset() const { return offset_; }
  // native + offset, for backends whose handle is an address (CPU, CUDA).
  template <typename T = void>
  T* ptr() const { return reinterpret_cast<T*>(static_cast<char*>(native_) + offset_); }
  // Backend-specific extra state (e.g. Vulkan device memory); owned by the allocator.
  void* extra = nullptr;

 private:
  friend class Allocator;
  Buffer(Allocator* owner, std::string name, size_t bytes, BufferRole role, void* native, size_t offset)
      : owner_(owner), name_(std::move(name)), bytes_(bytes), role_(role), native_(native), offset_(offset) {}
  Allocator* owner_;
  std::string name_;
  size_t bytes_;
  BufferRole role_;
  void* native_;
  size_t offset_;
};

using BufferPtr = std::unique_ptr<Buffer>;

class Allocator {
 public:
  static constexpr size_t kGuardBytes = 1024;  // each side; a multiple of every offset alignment
  static constexpr uint64_t kGuardPattern = 0xFDB7A5C3E1D90F4Bull;

  virtual ~Allocator() = default;

  // Throws BackendError (an `error` row) when the device cannot provide it.
  BufferPtr allocate(size_t bytes, std::string name, BufferRole role = BufferRole::workspace);

  size_t current_bytes() const;
  size_t peak_bytes() const;
  size_t peak_bytes(BufferRole role) const;
  void reset_peak();
  // Names of live buffers whose guard bytes changed, with the side ("O (after end)").
  std::vector<std::string> check_guards();
  // Largest allocation this allocator accepts; a request above it fails before touching the device.
  virtual size_t max_allocation() const = 0;

 protected:
  struct Raw {
    void* native = nullptr;
    void* extra = nullptr;
  };
  virtual Raw raw_allocate(size_t total_bytes) = 0;  // throws BackendError
  virtual void raw_free(const Raw& raw) noexcept = 0;
  virtual void raw_write(const Raw& raw, size_t offset, const void* src, size_t n) = 0;
  virtual void raw_read(const Raw& raw, size_t offset, void* dst, size_t n) = 0;

 private:
  friend class Buffer;
  void release(Buffer* b) noexcept;
  mutable std::mutex mu_;
  std::vector<Buffer*> live_;
  size_t current_ = 0, peak_ = 0;
  size_t current_by_role_[3] = {0, 0, 0}, peak_by_role_[3] = {0, 0, 0};
};

}  // namespace attnbench
