// Case ids (docs/design.md "Cases and their ids"): every id of every suite formats and parses back to the same case.
#include <catch2/catch.hpp>

#include <filesystem>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/suite.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("every case id of every suite round-trips", "[unit]") {
  int suites = 0, ids = 0;
  for (const auto& dir : {"suites", "suites/models"}) {
    if (!std::filesystem::exists(test::source_path(dir))) continue;
    for (const auto& f : std::filesystem::directory_iterator(test::source_path(dir))) {
      if (f.path().extension() != ".json" || f.path().filename() == "suite.schema.json") continue;
      const Suite s = load_suite(f.path().string());
      ++suites;
      for (const auto& pc : s.cases) {
        const std::string id = pc.c.id();
        INFO(id);
        if (!pc.skip_reason.empty()) continue;  // a skipped case is not a valid case
        const Case back = parse_case_id(id);
        CHECK(back.id() == id);
        CHECK(back.method == pc.c.method);
        CHECK(back.phase == pc.c.phase);
        CHECK(back.params == pc.c.params);
        CHECK(back.dtype == pc.c.dtype);
        CHECK(back.seed == pc.c.seed);
        ++ids;
      }
    }
  }
  CHECK(suites >= 2);
  CHECK(ids > 50);
}

TEST_CASE("ids list every parameter, defaults included, in schema order", "[unit]") {
  const Case c = parse_case_id("gqa/decode/kv_len=8192,q_heads=32,batch=16/bf16/s1");
  CHECK(c.id() == "gqa/decode/batch=16,q_heads=32,kv_heads=8,head_dim=128,q_len=1,kv_len=8192,causal=true,ragged=false,head_lengths=false/bf16/s1");
}

TEST_CASE("malformed ids are rejected with the reason", "[unit]") {
  const auto message = [](const std::string& id) {
    try {
      parse_case_id(id);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("nosuch/x/f32/s1"), Catch::Contains("unknown method \"nosuch\""));
  CHECK_THAT(message("gqa/decode/kv_len=10/f32"), Catch::Contains("expected 5 segments"));
  CHECK_THAT(message("gqa/sideways/kv_len=10/f32/s1"), Catch::Contains("no phase \"sideways\""));
  CHECK_THAT(message("gqa/decode/kv_len=ten/f32/s1"), Catch::Contains("kv_len=ten is not a integer"));
  CHECK_THAT(message("gqa/decode/kv_head=2,kv_len=10/f32/s1"), Catch::Contains("unknown parameter \"kv_head\""));
  CHECK_THAT(message("gqa/decode/kv_len=10/f8/s1"), Catch::Contains("unknown dtype \"f8\""));
  CHECK_THAT(message("gqa/decode/kv_len=10/f32/seven"), Catch::Contains("must be s<seed>"));
  CHECK_THAT(message("gqa/decode/kv_len=10/f32/s1x"), Catch::Contains("seed \"1x\" is not an integer"));
  CHECK_THAT(message("gqa/decode/q_heads=32,kv_heads=5,kv_len=10/f32/s1"),
             Catch::Contains("kv_heads=5 does not divide q_heads=32 (rule: q_heads % kv_heads == 0)"));
  CHECK_THAT(message("gqa/decode/q_len=100,kv_len=10/f32/s1"), Catch::Contains("rule: decode: q_len <= 64"));
  CHECK_THAT(message("gqa/prefill/kv_len=10/f32/s1"), Catch::Contains("parameter q_len is required"));
  CHECK_THAT(message("gqa/decode/kv_len=-3/f32/s1"), Catch::Contains("out of range"));
}

TEST_CASE("numbers print in shortest round-trip form", "[unit]") {
  CHECK(value_str(Value(0.1)) == "0.1");
  CHECK(value_str(Value(1e-7)) == "1e-07");
  CHECK(value_str(Value(2.0)) == "2");
  CHECK(value_str(Value(IntList{1, 2, 3})) == "1:2:3");
  CHECK(value_str(Value(true)) == "true");
  CHECK(std::get<double>(*parse_value(ParamType::Float, "0.1")) == 0.1);
  CHECK(std::get<IntList>(*parse_value(ParamType::IntList, "4:-5")) == IntList{4, -5});
  CHECK_FALSE(parse_value(ParamType::Int, "1.5"));
  CHECK_FALSE(parse_value(ParamType::Bool, "yes"));
}

TEST_CASE("a parameter given twice in an id is refused, not the last one taken", "[unit]") {
  CHECK_THROWS_WITH(parse_case_id("gqa/decode/batch=1,batch=2/f32/s1"), Catch::Contains("parameter batch is given twice"));
  // A seed beyond 64 bits, or a batch beyond 63, is out of range, never wrapped.
  CHECK_THROWS_WITH(parse_case_id("gqa/decode/-/f32/s18446744073709551616"), Catch::Contains("is not an integer"));
  CHECK_THROWS_WITH(parse_case_id("gqa/decode/batch=9223372036854775808/f32/s1"), Catch::Contains("is not a integer"));
}
