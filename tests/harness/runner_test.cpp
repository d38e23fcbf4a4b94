// Runs that combine: shards merged equal one unsharded run; compare finds a run the same as
// itself and a 30% slowdown SLOWER; Google Benchmark's own compare.py reads our files; --rerun
// repeats recorded cases with their recorded settings.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "attnbench/json.h"
#include "support.h"

using namespace attnbench;

namespace {

Json read(const std::string& path) {
  std::ifstream f(path);
  return Json::parse(f);
}

std::multiset<std::string> rows_of(const Json& doc) {
  std::multiset<std::string> out;
  for (const auto& row : doc["benchmarks"]) {
    const Json& a = row["attnbench"];
    const Json h = a.value("hashes", Json::object());
    out.insert(row["name"].get<std::string>() + " " + a.value("status", "") + " " + h.value("inputs", "") + " " +
               h.value("reference", "") + " " + h.value("outputs", ""));
  }
  return out;
}

}  // namespace

TEST_CASE("N shards merged equal one unsharded run", "[fault]") {
  const std::string dir = test::scratch_dir("shards");
  const std::string common = "check suites/smoke.json --backends cpu --quiet --out " + dir;
  REQUIRE(test::run_cli(common + "/all.json").exit_code == 0);
  for (int i = 0; i < 3; ++i)
    REQUIRE(test::run_cli(common + "/s" + std::to_string(i) + ".json --shard " + std::to_string(i) + "/3").exit_code == 0);
  const auto merged = test::run_cli("merge " + dir + "/s0.json " + dir + "/s1.json " + dir + "/s2.json --out " + dir + "/m.json");
  REQUIRE(merged.exit_code == 0);
  const Json all = read(dir + "/all.json"), m = read(dir + "/m.json");
  CHECK(rows_of(all) == rows_of(m));
  // Same order, too: plan order survives the split.
  std::vector<std::string> a, b;
  for (const auto& r : all["benchmarks"]) a.push_back(r["name"]);
  for (const auto& r : m["benchmarks"]) b.push_back(r["name"]);
  CHECK(a == b);
  // Every shard ran something, and no case ran in two shards.
  size_t sum = 0;
  for (int i = 0; i < 3; ++i) sum += read(dir + "/s" + std::to_string(i) + ".json")["benchmarks"].size();
  CHECK(sum >= all["benchmarks"].size());
}

TEST_CASE("merge refuses results of different suites", "[fault]") {
  const std::string dir = test::scratch_dir("merge_refuse");
  REQUIRE(test::run_cli("check suites/smoke.json --backends cpu --quiet --filter mha/decode --out " + dir + "/a.json").exit_code == 0);
  REQUIRE(test::run_cli("check tests/fault/spin.json --backends cpu --quiet --out " + dir + "/b.json", "tests/attnbench_faulty").exit_code == 0);
  const auto r = test::run_cli("merge " + dir + "/a.json " + dir + "/b.json --out " + dir + "/m.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("has suite_hash"));
}

TEST_CASE("compare: a run against itself is SAME; a 30% slowdown is SLOWER", "[fault]") {
  const std::string dir = test::scratch_dir("compare");
  const std::string run = "run tests/fault/spin.json --backends cpu --quiet --min-time 0.01 --warmup 0.002 --timing hot --repetitions 15 --out ";
  REQUIRE(test::run_cli(run + dir + "/a.json", "tests/attnbench_faulty").exit_code == 0);
  REQUIRE(test::run_shell("ATTNBENCH_FAULT_SLOWDOWN=1.3 " + test::binary_path("tests/attnbench_faulty") + " " + run + dir +
                          "/b.json").exit_code == 0);

  const auto same = test::run_cli("compare " + dir + "/a.json " + dir + "/a.json --fail-on-regression 10 --json");
  REQUIRE(same.exit_code == 0);
  const Json s = Json::parse(same.output.substr(same.output.find('{')));
  REQUIRE(s["rows"].size() == 3);
  for (const auto& row : s["rows"]) CHECK(row["verdict"] == "SAME");

  const auto slow = test::run_cli("compare " + dir + "/a.json " + dir + "/b.json --fail-on-regression 10 --json");
  CHECK(slow.exit_code == 1);
  const Json j = Json::parse(slow.output.substr(slow.output.find('{')));
  for (const auto& row : j["rows"]) {
    CHECK(row["verdict"] == "SLOWER");
    CHECK(row["change"].get<double>() == Approx(0.3).margin(0.06));
    CHECK_FALSE(row["outputs_changed"].get<bool>());
  }
  CHECK(j["geomean_ratio"].get<double>() == Approx(1.3).margin(0.06));
  CHECK(test::run_cli("compare " + dir + "/a.json " + dir + "/b.json --fail-on-regression 50").exit_code == 0);

  // Google Benchmark's own compare.py (Debian's libbenchmark-tools, Debian's python3) reads both.
  const auto gb = test::run_shell("/usr/bin/python3 /usr/share/benchmark/compare.py benchmarks " + dir + "/a.json " + dir +
                                  "/b.json");
  CHECK(gb.exit_code == 0);
  CHECK_THAT(gb.output, Catch::Contains("fault_injection/kind=spin") && Catch::Contains("OVERALL_GEOMEAN"));
}

TEST_CASE("--rerun repeats recorded cases with their recorded settings", "[fault]") {
  const std::string dir = test::scratch_dir("rerun");
  REQUIRE(test::run_cli("run tests/fault/spin.json --backends cpu --quiet --min-time 0.004 --warmup 0.001 --repetitions 9 "
                        "--timing hot --out " + dir + "/a.json", "tests/attnbench_faulty").exit_code == 0);
  const auto r = test::run_cli("run --rerun " + dir + "/a.json --filter 'micros=2000' --quiet --out " + dir + "/b.json",
                               "tests/attnbench_faulty");
  REQUIRE(r.exit_code == 0);
  const Json b = read(dir + "/b.json");
  CHECK(b["context"]["timing"]["min_time_s"] == 0.004);
  CHECK(b["context"]["timing"]["mode"] == "hot");
  int medians = 0;
  for (const auto& row : b["benchmarks"])
    if (row.value("aggregate_name", "") == "median") {
      ++medians;
      CHECK_THAT(row["name"].get<std::string>(), Catch::Contains("micros=2000"));
    }
  CHECK(medians == 1);
}
