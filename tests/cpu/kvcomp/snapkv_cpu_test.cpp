// snapkv on the CPU backend: every variant passes the SET check on both ISAs (the x86-64-v3
// baseline forced with cpu.isa=avx2), edge cases included, and the outputs do not depend on the
// thread count.
#include <catch2/catch.hpp>

#include "support.h"

using namespace attnbench;

namespace {

const char* const kCases[] = {
    "snapkv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,obs_window=32,budget=128,pool=max/f32/s1",
    "snapkv/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=777,obs_window=16,budget=100,pool=avg/bf16/s2",
    "snapkv/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,obs_window=24,budget=64,pool_kernel=5,ties=true/f16/s3",
    "snapkv/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,obs_window=7,budget=7,pool_kernel=1/f32/s4",
    "snapkv/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,obs_window=8,budget=64/bf16/s5",
    "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=20,obs_window=32,budget=32/f16/s6",
};

std::string output_hash(const RowResult& row) { return row.record["hashes"]["outputs"].get<std::string>(); }

}  // namespace

TEST_CASE("snapkv cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing({std::begin(kCases), std::end(kCases)}) == std::vector<std::string>{});
}

TEST_CASE("snapkv cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const char* id : {kCases[0], kCases[2]}) {
    const Case c = test::case_from_id(id);
    CHECK(output_hash(test::check_case(c, *one).at(0)) == output_hash(test::check_case(c, *three).at(0)));
  }
}
