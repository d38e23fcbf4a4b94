// Suite expansion (docs/design.md "Cases and their ids"): products, zip, {"values": ...}, skipped products, and the
// errors that stop a run before any case (exit 2).
#include <catch2/catch.hpp>

#include "attnbench/error.h"
#include "attnbench/json_schema.h"
#include "attnbench/suite.h"

using namespace attnbench;

namespace {
Suite parse(const std::string& text) { return parse_suite(Json::parse(text), "test.json", "0"); }
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("lists multiply out, zip groups vary together", "[unit]") {
  const Suite s = parse(R"({"name": "t", "cases": [
    {"method": "gqa", "phase": ["prefill", "decode"], "dtype": ["f32", "bf16"],
     "params": {"q_len": 4, "kv_len": [10, 20]},
     "zip": {"q_heads": [8, 6], "kv_heads": [2, 3]}}]})");
  REQUIRE(s.cases.size() == 2 * 2 * 2 * 2);
  int both = 0;
  for (const auto& pc : s.cases) {
    CHECK(pc.skip_reason.empty());
    const auto hq = pc.c.params.i64("q_heads"), hkv = pc.c.params.i64("kv_heads");
    CHECK(((hq == 8 && hkv == 2) || (hq == 6 && hkv == 3)));
    both += pc.c.params.i64("kv_len") == 20 && pc.c.dtype == DType::bf16;
  }
  CHECK(both == 4);
}

TEST_CASE("a product combination that breaks a rule becomes a skipped case", "[unit]") {
  const Suite s = parse(R"({"name": "t", "cases": [
    {"method": "gqa", "phase": "decode", "params": {"q_heads": 32, "kv_heads": [8, 5], "kv_len": 64}}]})");
  REQUIRE(s.cases.size() == 2);
  CHECK(s.cases[0].skip_reason.empty());
  CHECK(s.cases[1].skip_reason == "kv_heads=5 does not divide q_heads=32 (rule: q_heads % kv_heads == 0)");
}

TEST_CASE("an explicit invalid case is an error naming the suite, case and rule", "[unit]") {
  CHECK(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": 64}},
      {"method": "gqa", "phase": "decode", "params": {"q_heads": 32, "kv_heads": 5, "kv_len": 64}}]})") ==
        "test.json: case 1 (gqa): kv_heads=5 does not divide q_heads=32 (rule: q_heads % kv_heads == 0)");
}

TEST_CASE("malformed suites are errors", "[unit]") {
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "nosuch"}]})"), Catch::Contains("unknown method \"nosuch\""));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": 8, "kv_head": 2}}]})"),
             Catch::Contains("unknown parameter \"kv_head\"; known: batch, q_heads, kv_heads"));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": "long"}}]})"),
             Catch::Contains("kv_len=long is not a integer"));
  CHECK_THAT(error_of(R"({"name": "t", "cases": []})"), Catch::Contains("at /cases: needs at least 1 items"));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phasse": "decode"}]})"),
             Catch::Contains("unknown property \"phasse\""));
  CHECK_THAT(error_of(R"({"cases": [{"method": "gqa"}]})"), Catch::Contains("missing required property \"name\""));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": 8},
                          "zip": {"q_heads": [8, 16], "kv_heads": [2]}}]})"),
             Catch::Contains("zip group lists differ in length"));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": 8},
                          "zip": {"kv_len": [8, 16]}}]})"),
             Catch::Contains("parameter \"kv_len\" is given twice"));
  CHECK_THAT(error_of(R"({"name": "t", "cases": [{"method": "gqa", "phase": "decode", "params": {"kv_len": 8}},
                                                  {"method": "gqa", "phase": "decode", "params": {"kv_len": 8}}]})"),
             Catch::Contains("appears twice"));
}

TEST_CASE("labels, headlines and seeds carry through expansion", "[unit]") {
  const Suite s = parse(R"({"name": "t", "defaults": {"seed": 7}, "cases": [
    {"method": "mha", "phase": "decode", "params": {"kv_len": 8}, "label": "tiny", "headline": true},
    {"method": "mha", "phase": "decode", "params": {"kv_len": 9}, "seed": [1, 2]}]})");
  REQUIRE(s.cases.size() == 3);
  CHECK(s.cases[0].c.seed == 7);
  CHECK(s.cases[0].c.label == "tiny");
  CHECK(s.cases[0].c.headline);
  CHECK(s.cases[2].c.seed == 2);
  CHECK_FALSE(s.cases[2].c.headline);
}

TEST_CASE("the schema validator enforces what the schema says", "[unit]") {
  const Json schema = Json::parse(R"({"type": "object", "required": ["a"], "additionalProperties": false,
    "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "boolean"}}]}}})");
  CHECK(validate_json_schema(schema, Json::parse(R"({"a": 3, "b": [true]})")).empty());
  CHECK(validate_json_schema(schema, Json::parse(R"({"a": 0})")).front() == "at /a: 0 is below the minimum 1");
  CHECK(validate_json_schema(schema, Json::parse(R"({"a": 1, "b": [1]})")).front() == "at /b/0: expected boolean, found integer");
  CHECK(validate_json_schema(schema, Json::parse(R"({"a": 1, "c": 2})")).front() == "at /: unknown property \"c\"; known: a, b");
}
