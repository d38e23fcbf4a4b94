// A fast, stable 64-bit content hash for tensors and cache keys. The algorithm is fixed (it is
// part of the results format): 8-byte little-endian words mixed multiplicatively, then a
// finaliser; see harness/src/hash.cpp. It is for equality of bits, not security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnbench {

uint64_t hash64(const void* data, size_t bytes, uint64_t seed = 0);
uint64_t hash64(std::string_view s, uint64_t seed = 0);
std::string hex64(uint64_t h);  // 16 lowercase hex digits
// FNV-1a, 32-bit: the stream id of a tensor or draw-site name (docs/design.md "Random numbers").
uint32_t fnv1a32(std::string_view s);

}  // namespace attnbench
