// The Philox stream in GLSL (impls/vulkan/shaders/philox.glsl) against the host's generator
// (harness/src/rng.cpp): the first words of device-generated streams for several keys, streams
// and domains, across the 2^32 index boundary, and the fp32 uniforms made from them.
#include <catch2/catch.hpp>

#include "support.h"

#if ATTNBENCH_HAS_VULKAN

#include <cstring>

#include "attnbench/hash.h"
#include "attnbench/rng.h"
#include "impls/vulkan/runtime/vulkan_backend.h"

using namespace attnbench;

namespace {

struct Generated {
  std::vector<uint32_t> words;
  std::vector<float> uniforms;
};

Generated device_stream(vulkan::VulkanBackend& be, uint64_t seed, uint32_t stream, uint32_t domain, uint64_t first,
                        uint32_t count) {
  BufferPtr words = be.allocator().allocate(count * 4, "philox.words", BufferRole::output);
  BufferPtr uniforms = be.allocator().allocate(count * 4, "philox.uniforms", BufferRole::output);
  const vulkan::Pipeline& p = be.pipeline("philox_words", {64}, 2);
  auto k = be.bind(p, {words.get(), uniforms.get()});
  const uint32_t push[7] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), stream, domain,
                            static_cast<uint32_t>(first), static_cast<uint32_t>(first >> 32), count};
  be.dispatch(*k, push, (count + 63) / 64);
  be.synchronize();
  HostTensor w("words", DType::i32, {count}), u("uniforms", DType::f32, {count});
  be.download(*words, w);
  be.download(*uniforms, u);
  Generated g{std::vector<uint32_t>(count), std::vector<float>(count)};
  std::memcpy(g.words.data(), w.raw(), count * 4);
  std::memcpy(g.uniforms.data(), u.raw(), count * 4);
  return g;
}

}  // namespace

TEST_CASE("Philox in GLSL generates the host's streams", "[vulkan]") {
  auto& be = vulkan::as_vulkan(test::require_backend("vulkan"));
  struct Stream {
    uint64_t seed;
    const char* name;
    uint32_t domain;
    uint64_t first;
  };
  const Stream streams[] = {
      {1, "q", kDomainInputs, 0},
      {0x0123456789abcdefull, "k", kDomainInputs, 12345},
      {42, "spec_accept", kDomainDraws, 0},
      {0xffffffffffffffffull, "v", kDomainDraws, (uint64_t{1} << 32) - 700},  // crosses the 2^32 word boundary
      {7, "snapkv", kDomainDraws, (uint64_t{5} << 34) + 3},                    // block index above 2^32
  };
  constexpr uint32_t kCount = 1500;
  for (const Stream& s : streams) {
    INFO("seed " << s.seed << ", stream \"" << s.name << "\", domain " << s.domain << ", first word " << s.first);
    const PhiloxStream host(s.seed, s.name, s.domain);
    const Generated g = device_stream(be, s.seed, fnv1a32(s.name), s.domain, s.first, kCount);
    std::vector<uint32_t> expect(kCount);
    host.words(s.first, kCount, expect.data());
    uint32_t word_mismatches = 0, uniform_mismatches = 0;
    for (uint32_t i = 0; i < kCount; ++i) {
      word_mismatches += g.words[i] != expect[i];
      const float u = host.uniform_f32(s.first + i);
      uniform_mismatches += std::memcmp(&g.uniforms[i], &u, 4) != 0;
    }
    CHECK(word_mismatches == 0);
    CHECK(uniform_mismatches == 0);
    CHECK(g.words[0] == host.word(s.first));
  }
}

#else

TEST_CASE("Philox in GLSL generates the host's streams", "[vulkan]") { attnbench::test::require_backend("vulkan"); }

#endif
