// mla on the CPU: both forms on every case of mla_checks.h, at every ISA, with and without AMX.
#include <catch2/catch.hpp>

#include "mla_checks.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("mla passes on the CPU in both forms at every ISA", "[cpu]") { CHECK(test::cpu_rows_not_passing(test::kMlaCases).empty()); }
