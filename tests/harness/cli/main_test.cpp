// The CLI's contract with its users (docs/design.md "Running"): bad input is one line and exit 2, an
// unavailable backend is exit 3, and two runs give identical hashes.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
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
  const auto seeds = [](int n) {
    std::string s;
    for (int i = 1; i <= n; ++i) s += (i > 1 ? "," : "") + std::to_string(i);
    return s;
  };
  const char* kOneCase = R"({"name": "x", "cases": [{"method": "fault_injection"}]})";
  // A results file, and two copies damaged: a schema version as a string, a timed repetition without a time.
  const std::string results_copy = dir + "/results.json";
  std::filesystem::copy_file("results/cpu-ci.json", results_copy);
  Json doc = Json::parse(std::ifstream("results/cpu-ci.json"));
  doc["context"]["schema_version"] = "1";
  const std::string bad_version = write_suite(dir, "bad_version.json", doc.dump());
  doc["context"]["schema_version"] = 1;
  doc["context"]["num_cpus"] = "two";
  const std::string bad_cpus = write_suite(dir, "bad_cpus.json", doc.dump());
  doc["context"]["num_cpus"] = 2;
  doc["benchmarks"][0]["real_time"] = nullptr;
  const std::string null_time = write_suite(dir, "null_time.json", doc.dump());
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
      // Values out of range, refused where they are read (not as a library's exception, exit 1).
      {"check " + write_suite(dir, "overflow.json", R"({"name": "x", "cases": [{"method": "gqa", "phase": "decode",
          "params": {"kv_len": 1e400}}]})"), "overflow.json: malformed JSON at cases[0].params.kv_len: number overflow"},
      {"check " + write_suite(dir, "twice.json", R"({"name": "x", "cases": [{"method": "gqa", "phase": "decode",
          "params": {"batch": 1, "batch": 2}}]})"), "twice.json: cases[0].params.batch: the key is given twice"},
      {"check " + write_suite(dir, "seed.json", R"({"name": "x", "cases": [{"method": "gqa", "phase": "decode",
          "seed": 18446744073709551616}]})"), "seed 1.8446744073709552e+19 is not an integer from 0 to 2^64-1"},
      {"check " + write_suite(dir, "batch.json", R"({"name": "x", "cases": [{"method": "gqa", "phase": "decode",
          "params": {"batch": 9223372036854775808}}]})"), "9223372036854775808 is out of range (integers go up to 2^63-1)"},
      {"check " + dir, "is a directory, not a suite file"},
      // Expansion is counted before it happens: too many cases, or a product beyond 2^64.
      {"list " + write_suite(dir, "big.json", R"({"name": "x", "cases": [{"method": "fault_injection", "seed": [)" + seeds(1000) +
          R"(], "params": {"n": [)" + seeds(400) + R"(], "micros": [)" + seeds(1000) + R"(]}}]})"),
       "expands to 400000000 cases"},
      {"list " + write_suite(dir, "wrap.json", R"({"name": "x", "cases": [{"method": "fault_injection", "params": {"n": [)" +
          seeds(65536) + R"(], "micros": [)" + seeds(65536) + R"(], "terms": [)" + seeds(65536) + R"(]}, "seed": [)" +
          seeds(65536) + R"(]}]})"), "expands to more than 2^64 cases"},
      // Options: each value checked before anything runs.
      {"check suites/smoke.json --timeout 0", "--timeout 0: a row's time limit must be above 0 seconds"},
      {"check suites/smoke.json --timeout -1", "--timeout -1: a row's time limit must be above 0 seconds"},
      {"check suites/smoke.json --timeout nan", "--timeout nan is not a finite number"},
      {"run suites/smoke.json --min-time nan", "--min-time nan is not a finite number"},
      {"run suites/smoke.json --min-time -1", "--min-time -1: seconds per repetition cannot be negative"},
      {"run suites/smoke.json --warmup -5", "--warmup -5: warm-up seconds cannot be negative"},
      {"run suites/smoke.json --repetitions 99999999999", "--repetitions 99999999999 is out of range"},
      {"check suites/smoke.json --backends ''", "--backends is empty"},
      // --out: never an input, never anything but a regular file, refused before any case runs.
      {"check " + write_suite(dir, "self.json", kOneCase) + " --out " + dir + "/self.json", "self.json, which this command reads"},
      {"run --rerun " + results_copy + " --filter mha --out " + results_copy, "which this command reads"},
      {"check " + write_suite(dir, "full.json", kOneCase) + " --out /dev/full", "/dev/full: is not a regular file"},
      {"check " + write_suite(dir, "dot.json", kOneCase) + " --out .", "--out .: is a directory"},
      {"merge " + results_copy + " --out " + results_copy, "which this command reads"},
      {"check " + write_suite(dir, "cache.json", kOneCase) + " --cache-dir " + dir + "/cache.json", "cannot make it a folder"},
      // Results files: every verb that reads one refuses a field of the wrong type, naming it.
      {"compare " + bad_version + " " + bad_version, "context.schema_version: \"1\" is not an integer"},
      {"merge " + bad_version + " --out " + dir + "/m.json", "context.schema_version: \"1\" is not an integer"},
      {"leaderboard " + bad_version + " --out " + dir, "context.schema_version: \"1\" is not an integer"},
      {"run --rerun " + bad_version, "context.schema_version: \"1\" is not an integer"},
      {"compare " + null_time + " " + null_time, "benchmarks[0].real_time: null is not a time"},
      {"leaderboard " + bad_cpus + " --out " + dir, "bad_cpus.json: a field the leaderboard reads has the wrong type"},
      {"leaderboard --coverage " + results_copy + ", --out " + dir, "an empty file name in the list"},
      {"leaderboard --coverage " + results_copy + " --out " + dir, "every file is --coverage"},
  };
  for (const auto& b : bad) {
    INFO(b.args);
    const auto r = test::run_cli(b.args, "tests/attnbench_faulty");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::StartsWith("attnbench: ") && Catch::Contains(b.expect));
    CHECK(lines(r.output) == 1);
  }
}

TEST_CASE("an impossible shape is unsupported on every backend, with the reason", "[cpu]") {
  const std::string dir = test::scratch_dir("cli_huge");
  // 15 TiB of keys and values: refused before a byte is generated, on every backend alike.
  const std::string suite = write_suite(dir, "huge.json", R"({"name": "huge", "cases": [{"method": "gqa", "phase": "decode",
      "params": {"batch": 256, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "kv_len": 8000000}}]})");
  const auto r = test::run_cli("check " + suite + " --quiet --out " + dir + "/r.json");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const Json doc = Json::parse(std::ifstream(dir + "/r.json"));
  REQUIRE(!doc["benchmarks"].empty());
  for (const auto& row : doc["benchmarks"]) {
    INFO(row["name"]);
    CHECK(row["attnbench"]["status"] == "unsupported");
    CHECK_THAT(row["attnbench"]["reason"].get<std::string>(), Catch::Contains("its inputs and outputs alone take 15.26 TiB"));
  }
}

TEST_CASE("a filter takes linear time whatever its pattern, and cannot crash a run", "[unit]") {
  // Nested stars (exponential for a backtracking engine) and 20,000 nested groups (its recursion).
  for (const std::string& pattern : {std::string("((.*)*)*XYZ"), std::string(20000, '(') + "XYZ" + std::string(20000, ')')}) {
    INFO(pattern.substr(0, 40));
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = test::run_shell("timeout 60 " + test::binary_path("attnbench") + " check suites/smoke.json --backends cpu --quiet --filter '" + pattern + "'");
    CHECK(r.exit_code == 0);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 10);
  }
}

TEST_CASE("a write that fails names the file and the system's reason", "[unit]") {
  const std::string dir = test::scratch_dir("cli_write_fails");
  // A 4 KiB file-size limit: the journal's first row, or the results file, cannot be written.
  const auto r = test::run_shell("ulimit -f 4; " + test::binary_path("attnbench") + " check suites/smoke.json --backends cpu "
                                 "--quiet --filter mha/decode --out " + dir + "/r.json");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains(dir + "/r.json") && Catch::Contains(": write failed: File too large"));
  CHECK(lines(r.output) <= 3);
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
  const auto r = test::run_cli("run suites/smoke.json --backends cpu --quiet --filter mha/decode/batch=2,q_heads=4, --min-time 0.002 "
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

TEST_CASE("on a terminal a run redraws one progress line; off one it prints a line per row", "[cpu]") {
  const std::string dir = test::scratch_dir("cli_progress");
  const std::string suite = write_suite(dir, "three.json", R"({"name": "three", "cases": [{"method": "mha", "phase": "decode",
      "params": {"batch": 1, "q_heads": 2, "head_dim": 64, "kv_len": [10, 20, 30]}}]})");
  // script(1) runs the command on a pseudo-terminal and copies what it writes.
  const auto on_tty = [&](const std::string& args) {
    return test::run_shell("TERM=xterm script -qfec '" + test::binary_path("attnbench") + " check " + suite + " --backends cpu " +
                           args + "' /dev/null");
  };
  const auto tty = on_tty("");
  INFO(tty.output);
  REQUIRE(tty.exit_code == 0);
  CHECK_THAT(tty.output, Catch::Contains("\r\033[K[1/3] cases  0 rows failed") && Catch::Contains(" left") &&
                             Catch::Contains("\r\033[K[3/3] cases  0 rows failed"));
  CHECK_THAT(tty.output, !Catch::Contains("pass     mha/"));  // a pass shows only in the status line
  CHECK_THAT(on_tty("--verbose").output, Catch::Contains("[2/3] pass     mha/decode/"));
  const auto log = test::run_cli("check " + suite + " --backends cpu");
  INFO(log.output);
  CHECK_THAT(log.output, Catch::Contains("[1/3] pass     mha/decode/") && Catch::Contains("[3/3] pass     mha/decode/") &&
                             !Catch::Contains("\033[K"));
  const auto both = test::run_cli("check " + suite + " --quiet --verbose");
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("--quiet and --verbose ask for opposite things"));
}
