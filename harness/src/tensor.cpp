#include "attnbench/tensor.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "attnbench/error.h"
#include "attnbench/hash.h"

namespace attnbench {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < s.size(); ++i) out << (i ? "," : "") << s[i];
  out << ']';
  return out.str();
}

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

void HostTensor::Free::operator()(std::byte* p) const { std::free(p); }

HostTensor::HostTensor(std::string name, DType dtype, Shape shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), numel_(attnbench::numel(shape_)) {
  for (int64_t d : shape_) ATTNBENCH_ASSERT(d >= 0, "negative dimension in ", shape_str(shape_));
  const size_t n = bytes();
  const size_t rounded = ((n + 63) / 64) * 64;
  data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded ? rounded : 64)));
  if (!data_) throw BackendError(cat("host allocation of ", n, " bytes for ", name_, " failed"));
  std::memset(data_.get(), 0, rounded ? rounded : 64);
}

double HostTensor::get(int64_t i) const {
  const std::byte* p = raw() + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::f32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::f16: { uint16_t v; std::memcpy(&v, p, 2); return f16_to_f32(v); }
    case DType::bf16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_to_f32(v); }
    case DType::i32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::i8: return static_cast<double>(static_cast<int8_t>(*p));
    case DType::u8: return static_cast<double>(static_cast<uint8_t>(*p));
  }
  return 0.0;
}

void HostTensor::set(int64_t i, double v) {
  std::byte* p = raw() + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f64: std::memcpy(p, &v, 8); break;
    case DType::f32: { float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
    case DType::f16: { uint16_t h = f64_to_f16(v); std::memcpy(p, &h, 2); break; }
    case DType::bf16: { uint16_t h = f64_to_bf16(v); std::memcpy(p, &h, 2); break; }
    case DType::i32: { int32_t x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::i8: { int8_t x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case DType::u8: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
  }
}

namespace {
const float* f16_table() {  // every f16 bit pattern as a float
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = f16_to_f32(static_cast<uint16_t>(h));
    return t;
  }();
  return table.data();
}

template <typename Out>
void convert_row(const HostTensor& t, int64_t offset, int64_t n, Out* out) {
  const std::byte* p = t.raw() + offset * dtype_size(t.dtype());
  switch (t.dtype()) {
    case DType::f64: for (int64_t i = 0; i < n; ++i) { double v; std::memcpy(&v, p + 8 * i, 8); out[i] = static_cast<Out>(v); } break;
    case DType::f32: for (int64_t i = 0; i < n; ++i) { float v; std::memcpy(&v, p + 4 * i, 4); out[i] = v; } break;
    case DType::f16: {
      const float* table = f16_table();
      for (int64_t i = 0; i < n; ++i) { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = table[v]; }
      break;
    }
    case DType::bf16: for (int64_t i = 0; i < n; ++i) { uint16_t v; std::memcpy(&v, p + 2 * i, 2); out[i] = bf16_to_f32(v); } break;
    case DType::i32: for (int64_t i = 0; i < n; ++i) { int32_t v; std::memcpy(&v, p + 4 * i, 4); out[i] = static_cast<Out>(v); } break;
    case DType::i8: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(static_cast<int8_t>(p[i])); break;
    case DType::u8: for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(static_cast<uint8_t>(p[i])); break;
  }
}
}  // namespace

void HostTensor::get_row(int64_t offset, int64_t n, double* out) const { convert_row(*this, offset, n, out); }
void HostTensor::get_row(int64_t offset, int64_t n, float* out) const { convert_row(*this, offset, n, out); }

void HostTensor::fill(double v) {
  for (int64_t i = 0; i < numel_; ++i) set(i, v);
}

void HostTensor::fill_bits(uint64_t pattern) {
  const size_t es = dtype_size(dtype_);
  for (int64_t i = 0; i < numel_; ++i) std::memcpy(raw() + i * es, &pattern, es);
}

HostTensor HostTensor::clone() const {
  HostTensor t(name_, dtype_, shape_);
  if (bytes()) std::memcpy(t.raw(), raw(), bytes());
  return t;
}

std::string HostTensor::hash() const {
  uint64_t h = hash64(dtype_name(dtype_));
  h = hash64(shape_.data(), shape_.size() * sizeof(int64_t), h);
  return hex64(hash64(raw(), bytes(), h));
}

std::string hash_tensors(const TensorMap& tensors) {
  uint64_t h = 0;
  for (const auto& [name, t] : tensors) {
    h = hash64(name, h);
    h = hash64(t.hash(), h);
  }
  return hex64(h);
}

}  // namespace attnbench
