// Philox4x32-10 on the CUDA device against the CPU's (docs/design.md "Random numbers"): the first words and fp32
// uniforms of device-generated streams must equal harness/src/rng.cpp's, bit for bit.
//
// The device side is impls/cuda/runtime/philox_words.cu, reached with dlsym so this file builds
// whether or not the CUDA backend is compiled in (without it, require_backend skips).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cstdint>
#include <vector>

#include "attnbench/hash.h"
#include "attnbench/rng.h"
#include "support.h"

using namespace attnbench;

namespace {
using PhiloxWordsFn = int (*)(uint64_t seed, uint32_t stream_id, uint32_t domain, uint64_t first, uint64_t count,
                              uint32_t* words, float* uniforms, char* err, size_t err_len);

PhiloxWordsFn device_philox() {
  test::require_backend("cuda");  // selects the device, or skips (exit 77)
  auto fn = reinterpret_cast<PhiloxWordsFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_philox_words"));
  REQUIRE(fn != nullptr);
  return fn;
}
}  // namespace

TEST_CASE("device Philox reproduces Random123's known answer", "[cuda]") {
  const PhiloxWordsFn fn = device_philox();
  uint32_t words[4];
  float uniforms[4];
  char err[256] = {};
  // Seed 0, stream 0, domain 0, block 0: key (0, 0), counter (0, 0, 0, 0).
  REQUIRE(fn(0, 0, 0, 0, 4, words, uniforms, err, sizeof err) == 0);
  CHECK(words[0] == 0x6627e8d5u);
  CHECK(words[1] == 0xe169c58du);
  CHECK(words[2] == 0xbc57ac4cu);
  CHECK(words[3] == 0x9b00dbd8u);
}

TEST_CASE("device Philox words and uniforms equal the CPU's", "[cuda]") {
  const PhiloxWordsFn fn = device_philox();
  struct Stream {
    uint64_t seed;
    const char* name;
    uint32_t domain;
    uint64_t first;
  };
  // Unaligned starts, a high seed word, and an index past 2^32 blocks (the counter's high word).
  const Stream streams[] = {{1, "q", kDomainInputs, 0},
                            {0x0123456789abcdefull, "spec.accept", kDomainDraws, 1000003},
                            {~0ull, "sample", kDomainDraws, (1ull << 34) - 7}};
  for (const Stream& st : streams) {
    CAPTURE(st.seed, st.name, st.domain, st.first);
    const uint64_t count = 4099;
    std::vector<uint32_t> words(count), expect(count);
    std::vector<float> uniforms(count);
    char err[256] = {};
    REQUIRE(fn(st.seed, fnv1a32(st.name), st.domain, st.first, count, words.data(), uniforms.data(), err, sizeof err) == 0);
    const PhiloxStream cpu(st.seed, st.name, st.domain);
    cpu.words(st.first, count, expect.data());
    uint64_t word_mismatches = 0, uniform_mismatches = 0;
    for (uint64_t i = 0; i < count; ++i) {
      word_mismatches += words[i] != expect[i];
      uniform_mismatches += uniforms[i] != cpu.uniform_f32(st.first + i);
    }
    CHECK(word_mismatches == 0);
    CHECK(uniform_mismatches == 0);
  }
}
