// Host tensors: a name, a dtype, a shape and 64-byte-aligned row-major bytes.
//
// Inputs are generated into HostTensors once, on the host, and uploaded to every backend, so all
// backends see the same bits. The fp64 reference and the checks read them through get()/set(),
// which convert exactly to and from double.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attnbench/dtype.h"

namespace attnbench {

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);  // "[2,8,128]"

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(std::string name, DType dtype, Shape shape);  // zero-filled

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return numel_ * dtype_size(dtype_); }
  bool empty() const { return numel_ == 0; }

  std::byte* raw() { return data_.get(); }
  const std::byte* raw() const { return data_.get(); }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(data_.get()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(data_.get()); }

  // Element i (flat index) as a double: exact for every dtype.
  double get(int64_t i) const;
  // Stores v rounded to this tensor's dtype (round to nearest even; integers are truncated
  // toward zero after a range check by the caller).
  void set(int64_t i, double v);
  // Elements [offset, offset + n) as doubles / floats: exact, with the dtype switch hoisted out of
  // the loop (the reference's inner loops read rows this way).
  void get_row(int64_t offset, int64_t n, double* out) const;
  void get_row(int64_t offset, int64_t n, float* out) const;  // exact for f32/f16/bf16/i8/u8
  void fill(double v);
  // Fills every byte pattern of one element: used to poison outputs (NaN, 0xA5A5A5A5).
  void fill_bits(uint64_t pattern);

  HostTensor clone() const;
  // 64-bit content hash of dtype, shape and bytes (harness/src/hash.cpp), as 16 hex digits.
  std::string hash() const;

 private:
  struct Free { void operator()(std::byte* p) const; };
  std::string name_;
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::unique_ptr<std::byte, Free> data_;
};

// Named tensors, ordered by name so iteration (and hashing over a set) is deterministic.
using TensorMap = std::map<std::string, HostTensor>;

// A combined hash of a set of tensors (names included).
std::string hash_tensors(const TensorMap& tensors);

// Row-major strides of a shape, in elements.
Shape strides_of(const Shape& s);

}  // namespace attnbench
