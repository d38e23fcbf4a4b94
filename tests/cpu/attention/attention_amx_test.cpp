// bf16 prefill on AMX tiles (impls/cpu/attention/attention_amx.h) against the fp64 reference, on
// the shapes a user would try: head dims off the tiles' 32 and 16, GQA group 7, one key, a key
// past a block, ragged and per-head lengths. Skipped where the CPU or its OS offers no tiles.
#include <catch2/catch.hpp>

#include "support.h"

using namespace attnbench;

namespace {

std::string gqa_id(int batch, int q_heads, int kv_heads, int head_dim, int q_len, int kv_len, bool causal, bool ragged,
                   bool head_lengths) {
  const auto b = [](bool v) { return v ? "true" : "false"; };
  return "gqa/prefill/batch=" + std::to_string(batch) + ",q_heads=" + std::to_string(q_heads) +
         ",kv_heads=" + std::to_string(kv_heads) + ",head_dim=" + std::to_string(head_dim) +
         ",q_len=" + std::to_string(q_len) + ",kv_len=" + std::to_string(kv_len) + ",causal=" + b(causal) +
         ",ragged=" + b(ragged) + ",head_lengths=" + b(head_lengths) + "/bf16/s1";
}

bool tiles_here(Backend& cpu) { return cpu.probe().device.details.value("amx_bf16", false); }

}  // namespace

TEST_CASE("bf16 prefill on AMX tiles passes the gate on the shapes a user would try", "[cpu]") {
  auto cpu = test::open_backend("cpu", {});
  if (!tiles_here(*cpu)) {
    WARN("skip: this CPU or its OS offers no AMX-BF16 tiles");
    return;
  }
  std::vector<std::string> ids;
  for (int d : {40, 72, 80, 96, 112, 128, 192, 512, 33})
    ids.push_back(gqa_id(1, 4, 2, d, 70, 70 + d % 7, true, false, false));
  ids.push_back(gqa_id(1, 14, 2, 128, 9, 4097, true, false, false));   // group 7, a key past a 64-key block
  ids.push_back(gqa_id(1, 14, 2, 64, 1, 1, true, false, false));       // one key, 7 rows a group: few rows
  ids.push_back(gqa_id(1, 28, 2, 64, 1, 1, false, false, false));      // one key, 14 rows: the tiles
  ids.push_back(gqa_id(3, 8, 2, 96, 40, 300, true, true, false));      // ragged kv_len per sequence
  ids.push_back(gqa_id(2, 8, 4, 128, 33, 129, false, false, true));    // per-head lengths, not causal
  ids.push_back(gqa_id(1, 4, 4, 128, 300, 300, true, false, false));   // several row tasks a head
  CHECK(test::rows_not_passing(ids, *cpu, " amx").empty());
}

TEST_CASE("the tile path is the one that ran: its outputs differ from the fp32-widening kernel's", "[cpu]") {
  auto tiles = test::open_backend("cpu", {});
  if (!tiles_here(*tiles)) {
    WARN("skip: this CPU or its OS offers no AMX-BF16 tiles");
    return;
  }
  auto fp32 = test::open_backend("cpu", {{"amx", "off"}});
  const Case c = test::case_from_id(gqa_id(1, 8, 2, 128, 200, 200, true, false, false));
  const auto a = test::check_case(c, *tiles), b = test::check_case(c, *fp32);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(test::status_and_reason(a[0]) == "pass ");
  CHECK(test::status_and_reason(b[0]) == "pass ");
  // Both within the gate, by different roundings (P in bf16 before P·V, products on the tiles).
  CHECK(test::output_hash(a[0]) != test::output_hash(b[0]));
}

TEST_CASE("cpu.amx with a value other than on or off is bad input: one line, exit 2", "[cpu]") {
  const test::CliResult r = test::run_cli("env --backend-opt cpu.amx=maybe");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("amx=maybe is not on or off"));
}
