// Durable results: a run interrupted by SIGTERM leaves a journal and a valid partial results
// file; --resume completes it, and the completed run has the same rows and hashes as an
// uninterrupted one.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "attnbench/json.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("an interrupted run resumes to the same rows as an uninterrupted one", "[fault]") {
  const std::string dir = test::scratch_dir("resume");
  const std::string suite = dir + "/suite.json";
  // Real cases, then a slow one to be interrupted in, then more real cases.
  std::ofstream(suite) << R"({"name": "resume", "cases": [
    {"method": "mha", "phase": "decode", "dtype": ["f32", "bf16"], "params": {"batch": 2, "q_heads": 4, "head_dim": 64, "kv_len": 200}},
    {"method": "fault_injection", "params": {"kind": "spin", "n": 16, "micros": 3000000}},
    {"method": "gqa", "phase": "decode", "dtype": "f16", "params": {"batch": 2, "q_heads": 8, "kv_heads": 4, "head_dim": 64, "kv_len": 100}}]})";
  const std::string common = " check " + suite + " --backends cpu --no-related --quiet --out ";

  REQUIRE(test::run_cli(common + dir + "/whole.json", "tests/attnbench_faulty").exit_code == 0);

  // SIGTERM arrives while the slow case runs in its worker (the two before it are journaled).
  const std::string part = dir + "/part.json";
  const std::string journal = part + ".journal";
  {
    test::BackgroundRun run(common + part, "tests/attnbench_faulty");
    REQUIRE(test::wait_until([&] { return test::journal_cases_done(journal) >= 2; }, 120));
    run.signal(SIGTERM);
    CHECK(run.wait(30) == 128 + SIGTERM);
  }
  CHECK(std::filesystem::exists(journal));
  REQUIRE(std::filesystem::exists(part));  // a valid partial results file
  const auto partial = test::row_signatures(part);
  CHECK(partial.size() >= 2);
  CHECK(partial.size() < 4);

  const auto resumed = test::run_cli(common + part + " --resume", "tests/attnbench_faulty");
  CHECK(resumed.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(journal));  // a completed run leaves no journal
  CHECK(test::row_signatures(part) == test::row_signatures(dir + "/whole.json"));
}

TEST_CASE("--resume of another suite's journal is refused", "[fault]") {
  const std::string dir = test::scratch_dir("resume_other");
  std::ofstream(dir + "/r.json.journal") << R"({"journal": 1, "suite_hash": "0000", "command_line": "x"})" << "\n";
  const auto r = test::run_cli("check suites/smoke.json --backends cpu --resume --out " + dir + "/r.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("belongs to another suite"));
}
