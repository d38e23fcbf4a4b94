// The CLI's contract with its users (docs/design.md "Running"): bad input is one line and exit 2, an
// unavailable backend is exit 3, and two runs give identical hashes.
#include <catch2/catch.hpp>

#include <fstream>

#include "attnbench/json.h"
#include "attnbench/registry.h"
#include "support.h"

using namespace attnbench;

namespace {

std::string write_suite(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("bad input exits 2 with one line naming the problem", "[unit]") {
  const std::string dir = test::scratch_dir("cli_bad_input");
  struct Bad {
    std::string args, expect;
  };
  const std::vector<Bad> bad = {
      {"run " + dir + "/missing.json", "missing.json: cannot open the suite file"},
      {"run " + write_suite(dir, "malformed.json", "{\"name\": \"x\", \"cases\": [") , "malformed.json: malformed JSON"},
      {"run " + write_suite(dir, "unknown.json", R"({"name": "x", "cases": [{"method": "flash_nope"}]})"),
       "unknown.json: case 0 (flash_nope): unknown method \"flash_nope\"; known: "},
      {"run " + write_suite(dir, "shape.json", R"({"name": "x", "cases": [{"method": "gqa", "phase": "decode",
          "params": {"q_heads": 32, "kv_heads": 5, "kv_len": 128}}]})"),
       "kv_heads=5 does not divide q_heads=32 (rule: q_heads % kv_heads == 0)"},
      {"check suites/smoke.json --backends nosuch", "unknown backend \"nosuch\"; compiled in: "},
      {"check suites/smoke.json --filter '('", "--filter \"(\" is not a valid regular expression"},
      {"check suites/smoke.json --backend-opt cpu.thread=2", "cpu: unknown backend option \"thread\"; known: threads"},
      // A value only the backend can judge: refused in the worker, reported by the parent.
      {"check suites/smoke.json --backends cpu --backend-opt cpu.threads=many", "cpu: threads=many is not a thread count"},
      {"check suites/smoke.json --impl nosuch", "--impl \"nosuch\": no impl has that variant"},
      {"run suites/smoke.json --repetitions x", "--repetitions x is not an integer"},
      {"frobnicate", "unknown verb \"frobnicate\""},
      {"leaderboard", "leaderboard needs results files"},
      {"leaderboard " + dir + "/missing.json", "missing.json: cannot open the results file"},
      {"leaderboard " + write_suite(dir, "not_results.json", "{\"name\": \"x\"}"), "not a results file"},
  };
  for (const auto& b : bad) {
    INFO(b.args);
    const auto r = test::run_cli(b.args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::StartsWith("attnbench: ") && Catch::Contains(b.expect));
    CHECK(lines(r.output) == 1);
  }
}

TEST_CASE("a requested backend that is compiled in but unavailable exits 3", "[unit]") {
  for (const auto& b : registry().backends()) {
    auto backend = b.make();
    if (backend->probe().available) continue;
    const auto r = test::run_cli("check suites/smoke.json --backends " + b.name);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.output, Catch::Contains("compiled in but unavailable here"));
    return;
  }
  WARN("every compiled-in backend is available here; exit code 3 not exercised");
}

TEST_CASE("two runs of a suite give identical input, reference and output hashes", "[cpu]") {
  const std::string dir = test::scratch_dir("cli_repeat");
  for (const char* name : {"a", "b"}) {
    const auto r = test::run_cli("check suites/smoke.json --backends cpu --quiet --out " + dir + "/" + name + ".json");
    REQUIRE(r.exit_code == 0);
  }
  const auto hashes = [&](const char* name) {
    std::ifstream f(dir + "/" + name + ".json");
    const Json doc = Json::parse(f);
    std::vector<std::string> out;
    for (const auto& row : doc["benchmarks"]) {
      const Json& h = row["attnbench"]["hashes"];
      out.push_back(row["name"].get<std::string>() + " " + h["inputs"].get<std::string>() + " " +
                    h["reference"].get<std::string>() + " " + h["outputs"].get<std::string>());
    }
    return out;
  };
  const auto a = hashes("a"), b = hashes("b");
  CHECK(a.size() >= 7);
  CHECK(a == b);
}

TEST_CASE("a timed run writes Google Benchmark rows with the attnbench record", "[cpu]") {
  const std::string dir = test::scratch_dir("cli_run");
  const auto r = test::run_cli("run suites/smoke.json --backends cpu --quiet --filter mha/decode --min-time 0.002 "
                               "--warmup 0.001 --out " + dir + "/r.json");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("cpu/blocked"));
  std::ifstream f(dir + "/r.json");
  const Json doc = Json::parse(f);
  const Json& ctx = doc["context"];
  for (const char* key : {"date", "schema_version", "git_commit", "git_dirty", "compiler", "cxx_flags", "cpu", "os",
                          "command_line", "suite", "backends"})
    CHECK(ctx.contains(key));
  CHECK(ctx["backends"]["cpu"]["peaks"]["copy_bytes_per_s"].get<double>() > 1e9);
  int iterations = 0, medians = 0;
  for (const auto& row : doc["benchmarks"]) {
    CHECK(row["name"].get<std::string>().rfind("mha/decode/", 0) == 0);
    if (row["run_type"] == "iteration") {
      ++iterations;
      CHECK(row["real_time"].get<double>() > 0);
      CHECK(row["time_unit"] == "us");
    } else if (row["aggregate_name"] == "median") {
      ++medians;
      const Json& a = row["attnbench"];
      CHECK(a["status"] == "pass");
      CHECK(a["timing"]["repetitions"] == 9);
      CHECK(a["throughput"]["pct_of_peak"].get<double>() > 0);
      CHECK(a["checks"]["O"]["max_abs"].get<double>() <= a["checks"]["O"]["gate"].get<double>());
      CHECK(a["memory"]["workspace_peak_bytes"].get<double>() > 0);
    }
  }
  CHECK(iterations == 9);
  CHECK(medians == 1);
}
