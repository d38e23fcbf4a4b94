// Which cases each CUDA variant (attention, snapkv, speculative_sampling) takes, and the reasons it
// gives for the others. Needs no GPU: supports() reads only the case and the device limits (here an
// H200's and an sm_86's).
#include <catch2/catch.hpp>

#include <string>

#include "attnbench/registry.h"
#include "support.h"

using namespace attnbench;

namespace {
DeviceLimits limits_with_shared(uint64_t shared) {
  DeviceLimits l;
  l.shared_mem_bytes = shared;
  l.compute_units = 132;
  return l;
}
const DeviceLimits kH200 = limits_with_shared(227 * 1024);
const DeviceLimits kSm86 = limits_with_shared(99 * 1024);

// The variant's answer for the case, or nullopt when the CUDA backend is not compiled in.
std::optional<Support> ask(const std::string& variant, const std::string& id, const DeviceLimits& limits) {
  const Case c = test::case_from_id(id);
  for (const ImplEntry* e : registry().impls(c.method_name(), "cuda"))
    if (e->variant == variant) return e->make()->supports(c, limits);
  return std::nullopt;
}
// Why the variant refuses the case (it must be compiled in and refuse it).
std::string refusal(const std::string& variant, const std::string& id, const DeviceLimits& limits) {
  const auto s = ask(variant, id, limits);
  REQUIRE(s);
  CHECK_FALSE(s->ok);
  return s->reason;
}
}  // namespace

TEST_CASE("the cuda mma variant takes f16/bf16 at every width in multiples of 8 up to 256, and MLA's 576/512",
          "[unit]") {
  if (!registry().find_backend("cuda")) return;  // not compiled in: nothing to ask
  for (const char* id : {"gqa/decode/batch=16,q_heads=32,kv_heads=8,head_dim=128,kv_len=8192/bf16/s1",
                         "mha/prefill/batch=2,q_heads=32,head_dim=128,q_len=4096,kv_len=4096/bf16/s1",
                         "mqa/decode/batch=2,q_heads=16,head_dim=256,kv_len=2049/bf16/s1",
                         "mqa/prefill/batch=1,q_heads=8,head_dim=64,q_len=300,kv_len=300/f16/s1",
                         "mha/prefill/batch=2,q_heads=4,head_dim=256,q_len=197,kv_len=197/f16/s1",
                         // The widths models use, each in the narrowest tile that holds it.
                         "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=40,q_len=65,kv_len=90/f16/s1",
                         "gqa/decode/batch=2,q_heads=7,kv_heads=1,head_dim=72,kv_len=4097/bf16/s1",
                         "mqa/decode/batch=2,q_heads=8,head_dim=80,kv_len=777/f16/s1",
                         "mha/prefill/batch=1,q_heads=4,head_dim=96,q_len=50,kv_len=50,softcap=30/bf16/s1",
                         "swa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=112,kv_len=700,window=100,sinks=2/f16/s1",
                         "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=192,q_len=70,kv_len=77/f16/s1",
                         "swa/prefill/batch=1,q_heads=4,kv_heads=4,head_dim=64,q_len=300,kv_len=300,window=50,sinks=8,"
                         "softcap=25,alibi=true/f16/s1"}) {
    CAPTURE(id);
    const auto s = ask("mma", id, kH200);
    REQUIRE(s);
    CHECK(s->reason.empty());
    CHECK(s->ok);
  }
  CHECK(refusal("mma", "mha/prefill/batch=1,q_heads=4,head_dim=64,q_len=100,kv_len=100/f32/s1", kH200) ==
        "f32: the mma variant takes f16 and bf16 (tensor cores)");
  CHECK(refusal("mma", "mqa/decode/batch=2,q_heads=8,head_dim=36,kv_len=777/f16/s1", kH200)
            .find("head_dim=36, v_head_dim=36, v_stride=36: the mma kernels copy rows in 16-byte pieces") == 0);
  // 576 with its own V (not inside the key rows): neither the tiles nor the latent kernel.
  CHECK(refusal("mma", "mqa/decode/batch=1,q_heads=16,head_dim=576,kv_len=1500/bf16/s1", kH200)
            .find("head_dim=576, v_head_dim=576: the mma tiles hold widths up to 256") == 0);
  const auto cog = ask("mma", "cog/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,kv_len=4097/f16/s1", kH200);
  CHECK_FALSE(cog);  // cog registers no mma impl: its signed weights are the general kernel's
  // 192 KiB of shared memory for the 256-wide prefill tile: more than an sm_86 block may have.
  for (const char* id : {"mha/prefill/batch=2,q_heads=4,head_dim=256,q_len=197,kv_len=197/f16/s1",
                         "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=192,q_len=70,kv_len=77/f16/s1"}) {
    CAPTURE(id);
    CHECK(refusal("mma", id, kSm86).find("shared memory") != std::string::npos);
  }
}

TEST_CASE("the cuda general variant takes every dtype and head dim", "[unit]") {
  if (!registry().find_backend("cuda")) return;
  for (const char* id : {"gqa/prefill/batch=2,q_heads=8,kv_heads=2,head_dim=64,q_len=50,kv_len=0/f32/s1",
                         "mha/decode/batch=2,q_heads=8,head_dim=80,kv_len=1500,ragged=true/f16/s1",
                         "mha/prefill/batch=1,q_heads=2,head_dim=512,q_len=33,kv_len=70/bf16/s1",
                         "gqa/decode/batch=3,q_heads=32,kv_heads=8,head_dim=1,kv_len=9/f32/s1"}) {
    CAPTURE(id);
    const auto s = ask("general", id, kSm86);
    REQUIRE(s);
    CHECK(s->ok);
  }
  // Past 512 the 1024-wide tiles (161 KiB of shared memory) fit an H200's block, not an sm_86's.
  for (const char* id : {"mqa/decode/batch=1,q_heads=16,head_dim=576,kv_len=1500/bf16/s1",
                         "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=1024,q_len=20,kv_len=33/f32/s1"}) {
    CAPTURE(id);
    const auto s = ask("general", id, kH200);
    REQUIRE(s);
    CHECK(s->ok);
    CHECK(refusal("general", id, kSm86).find("shared memory") != std::string::npos);
  }
}

TEST_CASE("cuda snapkv and speculative_sampling take every schema dtype; snapkv refuses oversized workspaces", "[unit]") {
  if (!registry().find_backend("cuda")) return;
  for (const char* id : {"snapkv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=2048,obs_window=32,budget=256/f32/s1",
                         "snapkv/batch=1,q_heads=32,kv_heads=8,head_dim=128,kv_len=4096,obs_window=64,budget=512/bf16/s1",
                         "snapkv/batch=1,q_heads=14,kv_heads=2,head_dim=1,kv_len=1000,obs_window=16,budget=100,pool=avg/f16/s1",
                         "snapkv/batch=2,q_heads=8,kv_heads=2,head_dim=64,kv_len=20,obs_window=32,budget=48/f32/s1"}) {
    CAPTURE(id);
    const auto s = ask("radix", id, kSm86);
    REQUIRE(s);
    CHECK(s->ok);
  }
  for (const char* id : {"speculative_sampling/batch=4,draft_len=4,vocab=152064/f32/s1",
                         "speculative_sampling/batch=1,draft_len=3,vocab=16,draws=40000/f32/s1"}) {
    CAPTURE(id);
    const auto s = ask("race", id, kH200);
    REQUIRE(s);
    CHECK(s->ok);
  }
  // The window's scores of every prefix key: batch·q_heads·(kv_len − obs_window) floats.
  DeviceLimits small = kH200;
  small.max_buffer_bytes = 1 << 20;
  const auto big = ask("radix", "snapkv/batch=4,q_heads=32,kv_heads=8,head_dim=128,kv_len=8192,obs_window=32,budget=512/bf16/s1",
                       small);
  REQUIRE(big);
  CHECK_FALSE(big->ok);
  CHECK(big->reason.find("workspace of 4177920 bytes") != std::string::npos);
}
