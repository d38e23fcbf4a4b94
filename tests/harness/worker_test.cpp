// Runs that survive their impls (docs/design.md "Running"): a suite mixing fault injections with real cases,
// in worker processes. Every real case passes; every fault gets exactly its status.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "attnbench/json.h"
#include "support.h"

using namespace attnbench;

namespace {

// Status by case id, from the rows that carry the full record.
std::map<std::string, Json> records(const std::string& path) {
  std::ifstream f(path);
  const Json doc = Json::parse(f);
  std::map<std::string, Json> out;
  for (const auto& row : doc["benchmarks"])
    if (row["attnbench"].contains("params")) out[row["attnbench"]["case_id"]] = row["attnbench"];
  return out;
}

std::string kind_of(const std::string& id) {
  const auto p = id.find("kind=");
  return p == std::string::npos ? "" : id.substr(p + 5, id.find(',', p) - p - 5);
}

}  // namespace

TEST_CASE("each fault gets exactly its status and every real case passes", "[fault]") {
  const std::string dir = test::scratch_dir("faults");
  const auto r = test::run_cli("check tests/fault/faults.json --backends cpu --timeout 3 --no-related --out " + dir +
                                   "/faults.json",
                               "tests/attnbench_faulty");
  CHECK(r.exit_code == 1);  // failures present
  const std::map<std::string, std::string> expect = {{"none", "pass"},          {"wrong", "fail"},
                                                     {"overrun", "fail"},       {"huge_alloc", "error"},
                                                     {"segfault", "crashed"},   {"abort", "crashed"},
                                                     {"hang", "timeout"}};
  const auto rows = records(dir + "/faults.json");
  REQUIRE(rows.size() == 10);
  int real = 0;
  for (const auto& [id, rec] : rows) {
    INFO(id << ": " << rec["status"] << " " << rec["reason"]);
    if (rec["method"] != "fault_injection") {
      CHECK(rec["status"] == "pass");
      ++real;
      continue;
    }
    CHECK(rec["status"] == expect.at(kind_of(id)));
    const std::string reason = rec["reason"];
    if (kind_of(id) == "segfault") CHECK_THAT(reason, Catch::Contains("signal 11"));
    if (kind_of(id) == "abort") CHECK_THAT(reason, Catch::Contains("signal 6"));
    if (kind_of(id) == "hang") CHECK_THAT(reason, Catch::Contains("process group was killed"));
    if (kind_of(id) == "overrun") CHECK_THAT(reason, Catch::Contains("guard region overwritten: y (after end)"));
    if (kind_of(id) == "huge_alloc") CHECK_THAT(reason, Catch::Contains("1 PiB"));
    if (kind_of(id) == "wrong") CHECK_THAT(reason, Catch::Contains("y: max_abs 1 > gate"));
  }
  CHECK(real == 2);
}

TEST_CASE("--no-isolate takes the same path in-process", "[fault]") {
  const std::string dir = test::scratch_dir("faults_inprocess");
  const auto r = test::run_cli("check tests/fault/faults.json --backends cpu --no-related --no-isolate --filter "
                               "'kind=(none|wrong|overrun|huge_alloc)|gqa|mha' --out " + dir + "/f.json",
                               "tests/attnbench_faulty");
  CHECK(r.exit_code == 1);
  const auto rows = records(dir + "/f.json");
  REQUIRE(rows.size() == 7);
  for (const auto& [id, rec] : rows)
    if (rec["method"] == "fault_injection")
      CHECK(rec["status"] == std::map<std::string, std::string>{{"none", "pass"}, {"wrong", "fail"}, {"overrun", "fail"},
                                                                {"huge_alloc", "error"}}.at(kind_of(id)));
}
