// Golden input hashes (docs/design.md "Random numbers"): every case of the committed suites generates inputs whose
// hash is recorded in suites/golden/<suite>.inputs.json, so a change that alters generated inputs
// (a generator, a stream name, a rounding) is caught on every machine.
//
// After an intended change, regenerate with
//   ATTNBENCH_UPDATE_GOLDEN=1 ./build/default/tests/attnbench_tests "golden*"
// and commit the files with the change that explains them.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "attnbench/json.h"
#include "attnbench/method.h"
#include "attnbench/suite.h"
#include "support.h"

using namespace attnbench;

namespace {

void check_suite_hashes(const std::string& suite_name) {
  const Suite suite = load_suite(test::source_path("suites/" + suite_name + ".json"));
  const std::string golden_path = test::source_path("suites/golden/" + suite_name + ".inputs.json");
  Json computed = Json::object();
  for (const PlannedCase& pc : suite.cases) {
    if (!pc.skip_reason.empty()) continue;
    computed[pc.c.id()] = hash_tensors(pc.c.method->inputs(pc.c));
  }
  const char* update = std::getenv("ATTNBENCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(golden_path) << computed.dump(1) << "\n";
    WARN("wrote " << golden_path);
    return;
  }
  std::ifstream in(golden_path);
  REQUIRE(in.good());
  const Json golden = Json::parse(in);
  for (const auto& [id, hash] : computed.items()) {
    INFO(suite_name << ": " << id << " (regenerate: ATTNBENCH_UPDATE_GOLDEN=1, see this test's header)");
    REQUIRE(golden.contains(id));
    CHECK(golden.at(id) == hash);
  }
  for (const auto& [id, hash] : golden.items()) {
    INFO(suite_name << ": golden entry " << id << " has no case in the suite any more");
    CHECK(computed.contains(id));
  }
}

}  // namespace

TEST_CASE("golden input hashes of the smoke suite", "[unit]") { check_suite_hashes("smoke"); }
TEST_CASE("golden input hashes of the ci suite", "[unit]") { check_suite_hashes("ci"); }
