#include "attnbench/hash.h"

#include <cstring>

namespace attnbench {

namespace {
constexpr uint64_t kMulA = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMulB = 0xBF58476D1CE4E5B9ull;
constexpr uint64_t kMulC = 0x94D049BB133111EBull;

inline uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= kMulB;
  x ^= x >> 27;
  x *= kMulC;
  x ^= x >> 31;
  return x;
}
}  // namespace

uint64_t hash64(const void* data, size_t bytes, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  // Four independent lanes so the loop is not one long dependency chain.
  uint64_t lane[4] = {seed ^ kMulA, seed + kMulB, seed ^ kMulC, seed - kMulA};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMulA;
      lane[k] ^= lane[k] >> 29;
    }
  }
  uint64_t h = mix(lane[0]) ^ (mix(lane[1]) * 3) ^ (mix(lane[2]) * 5) ^ (mix(lane[3]) * 7);
  for (; i < bytes; ++i) h = (h ^ p[i]) * kMulB;
  return mix(h ^ bytes);
}

uint64_t hash64(std::string_view s, uint64_t seed) { return hash64(s.data(), s.size(), seed); }

std::string hex64(uint64_t h) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = digits[h & 15];
  return out;
}

uint32_t fnv1a32(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

}  // namespace attnbench
