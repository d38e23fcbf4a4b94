// moh on the CPU: every case of moh_checks.h at every ISA, and every head running equals gqa bit
// for bit.
#include <catch2/catch.hpp>

#include "moh_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("moh passes on the CPU with both routers at every ISA", "[cpu]") { CHECK(test::cpu_rows_not_passing(test::kMohCases).empty()); }

TEST_CASE("moh on the CPU with every head running is gqa, bit for bit", "[cpu]") {
  Backend& cpu = test::require_backend("cpu");
  CHECK(test::moh_all_heads_mismatches(cpu, "head_sparse", "blocked").empty());
}
