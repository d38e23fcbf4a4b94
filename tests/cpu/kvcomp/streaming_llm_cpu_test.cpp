// streaming_llm on the CPU backend: passes the EXACT checks on both ISAs, edge cases included, and
// its outputs do not depend on the thread count.
#include <catch2/catch.hpp>

#include "support.h"

using namespace attnbench;

namespace {

const char* const kCases[] = {
    "streaming_llm/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,budget=128/f32/s1",
    "streaming_llm/batch=3,q_heads=14,kv_heads=2,head_dim=80,kv_len=777,budget=100,n_sink=7/f16/s2",
    "streaming_llm/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,budget=4,n_sink=4/bf16/s3",
    "streaming_llm/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,budget=64/bf16/s4",
    "streaming_llm/batch=1,q_heads=2,kv_heads=1,head_dim=1,kv_len=9,budget=3,n_sink=0/f32/s5",
};

std::string output_hash(const RowResult& row) { return row.record["hashes"]["outputs"].get<std::string>(); }

}  // namespace

TEST_CASE("streaming_llm cpu: passes on the best ISA and on the AVX2 baseline", "[cpu]") {
  test::require_backend("cpu");
  CHECK(test::cpu_rows_not_passing({std::begin(kCases), std::end(kCases)}) == std::vector<std::string>{});
}

TEST_CASE("streaming_llm cpu: outputs do not depend on the thread count", "[cpu]") {
  test::require_backend("cpu");
  auto one = test::open_backend("cpu", {{"threads", "1"}});
  auto three = test::open_backend("cpu", {{"threads", "3"}});
  for (const char* id : {kCases[0], kCases[1]}) {
    const Case c = test::case_from_id(id);
    CHECK(output_hash(test::check_case(c, *one).at(0)) == output_hash(test::check_case(c, *three).at(0)));
  }
}
