// Philox4x32-10 on the device, bit-identical to harness/src/rng.cpp (docs/design.md "Random numbers"):
//   key = (seed low, seed high), counter = (index low, index high, stream, domain),
//   word n of a stream = word n mod 4 of the block at index n div 4,
//   a method's draw n is the fp32 uniform (w_n >> 8)·2^-24.
// tests/cuda/runtime/philox_cuda_test.cpp compares device words and uniforms with the CPU's.
#pragma once

#include <cstdint>

namespace attnbench::cuda {

__host__ __device__ inline uint4 philox4x32_10(uint4 c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c.x;
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c.z;
    c = make_uint4(static_cast<uint32_t>(p1 >> 32) ^ c.y ^ k0, static_cast<uint32_t>(p1),
                   static_cast<uint32_t>(p0 >> 32) ^ c.w ^ k1, static_cast<uint32_t>(p0));
  }
  return c;
}

// One named stream of one seed (stream = FNV-1a-32 of the name, computed on the host).
struct DevicePhilox {
  uint32_t key0, key1, stream, domain;

  __host__ __device__ static DevicePhilox make(uint64_t seed, uint32_t stream_id, uint32_t domain) {
    return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), stream_id, domain};
  }
  __host__ __device__ uint4 block(uint64_t index) const {
    return philox4x32_10(make_uint4(static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, domain),
                         key0, key1);
  }
  __host__ __device__ uint32_t word(uint64_t n) const {
    const uint4 b = block(n >> 2);
    switch (n & 3) {
      case 0: return b.x;
      case 1: return b.y;
      case 2: return b.z;
      default: return b.w;
    }
  }
  __host__ __device__ float uniform_f32(uint64_t n) const { return uniform_of(word(n)); }
  // The fp32 uniform of a word, for callers that take whole blocks.
  __host__ __device__ static float uniform_of(uint32_t w) { return static_cast<float>(w >> 8) * 0x1p-24f; }
};

}  // namespace attnbench::cuda
