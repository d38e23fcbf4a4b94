// A results file holds every row once, from one set of settings (docs/running.md "What a results
// file guarantees"): a resume never doubles a row, whatever the journal's state (a lost case_done
// line, a line cut by a kill); two runs never share an --out; an interrupted run's journal is never
// thrown away; a resume with other settings is refused; SIGINT/SIGTERM end a run within about a
// second wherever it is; a worker dies with its parent; and a run killed at many points, parent or
// worker, by SIGKILL, SIGINT or SIGTERM, and then resumed, has exactly the rows of one that was not.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "attnbench/json.h"
#include "support.h"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

const char* kFaulty = "tests/attnbench_faulty";
// Spins scale by this factor: 1 for the run to be interrupted (a 30 s spin waits for the signal),
// a thousandth for the runs that must finish.
const char* kFast = "ATTNBENCH_FAULT_SLOWDOWN=0.001";

// Real cases (several CPU variants each), then a long spin, then another real case.
std::string durable_suite(const std::string& dir, const std::string& spin_kind = "spin") {
  const std::string path = dir + "/suite.json";
  std::ofstream(path) << R"({"name": "durable", "cases": [
    {"method": "mha", "phase": "decode", "dtype": ["f32", "bf16"], "params": {"batch": 2, "q_heads": 4, "head_dim": 64, "kv_len": 200}},
    {"method": "fault_injection", "params": {"kind": ")" << spin_kind << R"(", "n": 16, "micros": 30000000}},
    {"method": "gqa", "phase": "decode", "dtype": "f16", "params": {"batch": 2, "q_heads": 8, "kv_heads": 4, "head_dim": 64, "kv_len": 100}}]})";
  return path;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Starts `args` and interrupts it with `sig` once its journal records `cases_done` finished cases.
int interrupt_after(const std::string& args, const std::string& journal, int cases_done, int sig = SIGTERM) {
  test::BackgroundRun run(args, kFaulty);
  const bool reached = test::wait_until([&] { return test::journal_cases_done(journal) >= cases_done; }, 120);
  INFO(run.output());
  REQUIRE(reached);
  run.signal(sig);
  const int code = run.wait(30);
  CHECK(code == 128 + sig);
  return code;
}

// The fault-injection CLI with `args`, spins shortened: the runs that must finish.
test::CliResult run_fast(const std::string& args) {
  return test::run_shell(std::string(kFast) + " " + test::binary_path(kFaulty) + " " + args);
}

std::string common_args(const std::string& suite, const std::string& out) {
  return "check " + suite + " --backends cpu --no-related --quiet --cache-dir " + fs::path(out).parent_path().string() +
         "/cache --out " + out;
}

}  // namespace

TEST_CASE("a resume records each row once, whatever the interruption left in the journal", "[fault]") {
  const std::string dir = test::scratch_dir("durable_resume");
  const std::string suite = durable_suite(dir);
  const std::string whole = dir + "/whole.json";
  REQUIRE(run_fast(common_args(suite, whole)).exit_code == 0);
  const auto want = test::row_signatures(whole);
  REQUIRE(want.size() == 4);
  for (const char* isolation : {"", " --no-isolate"}) {
    for (const char* damage : {"case_done lost", "last line cut"}) {
      DYNAMIC_SECTION(damage << isolation) {
        const std::string out = dir + "/part.json", journal = out + ".journal";
        fs::remove(out);
        fs::remove(journal);
        const std::string args = common_args(suite, out) + isolation;
        interrupt_after(args, journal, 2);
        std::string text = test::read_text(journal);
        REQUIRE(count_of(text, "\"row\"") >= 2);
        if (std::string(damage) == "case_done lost") {
          // The journal as a kill between a case's last row and its case_done line leaves it.
          const size_t last = text.rfind("{\"case_done\"");
          REQUIRE(last != std::string::npos);
          text.erase(last, text.find('\n', last) + 1 - last);
        } else {
          text += "{\"row\": {\"case_id\": \"mha/dec";  // a line a kill cut short
        }
        std::ofstream(journal, std::ios::trunc) << text;
        const auto resumed = run_fast(args + " --resume");
        INFO(resumed.output);
        CHECK(resumed.exit_code == 0);
        CHECK(test::row_signatures(out) == want);
        CHECK_FALSE(fs::exists(journal));
      }
    }
  }
}

TEST_CASE("a second run on one --out is refused, naming the first; a dead run's lock is taken over", "[fault]") {
  const std::string dir = test::scratch_dir("durable_lock");
  const std::string suite = durable_suite(dir), out = dir + "/r.json";
  const std::string args = common_args(suite, out);
  {
    test::BackgroundRun first(args, kFaulty);
    REQUIRE(test::wait_until([&] { return test::journal_cases_done(out + ".journal") >= 1; }, 120));
    const auto second = test::run_cli(args, kFaulty);
    CHECK(second.exit_code == 2);
    CHECK_THAT(second.output, Catch::Contains("another run is writing it (pid " + std::to_string(first.pid())));
    CHECK(count_of(second.output, "\n") == 1);
    first.signal(SIGKILL);  // no cleanup at all: the lock file stays behind
    first.wait(10);
  }
  REQUIRE(fs::exists(out + ".lock"));
  const auto resumed = run_fast(args + " --resume");
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK_FALSE(fs::exists(out + ".lock"));
}

TEST_CASE("an interrupted run's journal is kept, and a resume with other settings is refused", "[fault]") {
  const std::string dir = test::scratch_dir("durable_settings");
  const std::string suite = durable_suite(dir), out = dir + "/r.json", journal = out + ".journal";
  const std::string args = common_args(suite, out);
  interrupt_after(args, journal, 1);
  const std::string before = test::read_text(journal);

  const auto again = test::run_cli(args, kFaulty);  // without --resume
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.output, Catch::Contains("rows of an interrupted run") && Catch::Contains("--resume") &&
                               Catch::Contains("delete " + journal));
  CHECK(test::read_text(journal) == before);

  const std::string run_args = "run" + args.substr(5) + " --resume";  // `check` journal, `run` resume
  const auto as_run = test::run_cli(run_args, kFaulty);
  CHECK(as_run.exit_code == 2);
  CHECK_THAT(as_run.output, Catch::Contains("verb: journal check, now run"));
  const auto other_filter = test::run_cli(args + " --resume --filter mha", kFaulty);
  CHECK(other_filter.exit_code == 2);
  CHECK_THAT(other_filter.output, Catch::Contains("filter: journal , now mha"));
  CHECK(test::read_text(journal) == before);

  // Timed runs: a resume with another repetition count is refused.
  const std::string timed = dir + "/t.json";
  const std::string timed_args = "run " + suite + " --backends cpu --no-related --quiet --cache-dir " + dir +
                                 "/cache --repetitions 3 --min-time 0.001 --warmup 0 --out " + timed;
  interrupt_after(timed_args, timed + ".journal", 1);
  const auto reps = test::run_cli(timed_args.substr(0, timed_args.find(" --repetitions")) +
                                      " --repetitions 5 --min-time 0.001 --warmup 0 --out " + timed + " --resume",
                                  kFaulty);
  CHECK(reps.exit_code == 2);
  CHECK_THAT(reps.output, Catch::Contains("repetitions: journal 3, now 5"));
}

TEST_CASE("SIGINT and SIGTERM end a run within about a second wherever it is", "[fault]") {
  const std::string dir = test::scratch_dir("durable_signal");
  struct Where {
    std::string what, suite_kind, extra;
    int sig;
  };
  // Building an fp64 reference in the parent, running a kernel in-process, waiting on a worker.
  const std::vector<Where> places = {{"building a reference", "slow_reference", "", SIGTERM},
                                     {"a kernel in-process", "spin", " --no-isolate", SIGINT},
                                     {"waiting on a worker", "spin", "", SIGINT}};
  for (const auto& w : places) {
    INFO(w.what);
    const std::string sub = dir + "/" + std::to_string(&w - places.data());
    fs::create_directories(sub);
    const std::string suite = durable_suite(sub, w.suite_kind), out = sub + "/r.json";
    test::BackgroundRun run(common_args(suite, out) + w.extra, kFaulty);
    REQUIRE(test::wait_until([&] { return test::journal_cases_done(out + ".journal") >= 2; }, 120));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the 30 s case now
    const auto t0 = std::chrono::steady_clock::now();
    run.signal(w.sig);
    const int code = run.wait(10);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(run.output());
    CHECK(code == 128 + w.sig);
    CHECK(took < 2.0);
    CHECK(test::journal_cases_done(out + ".journal") >= 2);  // the journal keeps what finished
  }
}

TEST_CASE("a worker dies with its parent", "[fault]") {
  const std::string dir = test::scratch_dir("durable_orphan");
  const std::string suite = durable_suite(dir), out = dir + "/r.json";
  test::BackgroundRun run(common_args(suite, out), kFaulty);
  REQUIRE(test::wait_until([&] { return test::journal_cases_done(out + ".journal") >= 2; }, 120));
  const std::vector<int> workers = run.children();
  REQUIRE(workers.size() == 1);
  run.signal(SIGKILL);
  run.wait(10);
  CHECK(test::wait_until([&] { return test::process_gone(workers[0]); }, 0.5));
}

TEST_CASE("a run killed at many points and resumed has exactly the rows of one that was not", "[fault]") {
  const std::string dir = test::scratch_dir("durable_kill_points");
  // Short cases throughout, so the kills land everywhere: in references, kernels, journal writes,
  // between cases, in worker start-up and in the final write.
  const std::string suite = dir + "/suite.json";
  std::ofstream(suite) << R"({"name": "kill-points", "cases": [
    {"method": "mha", "phase": "decode", "dtype": ["f32", "bf16"], "params": {"batch": 2, "q_heads": 4, "head_dim": 64, "kv_len": 200}},
    {"method": "fault_injection", "params": {"kind": "spin", "n": 16, "micros": 150000, "terms": {"values": [1, 2]}}},
    {"method": "gqa", "phase": "decode", "dtype": "f16", "params": {"batch": 2, "q_heads": 8, "kv_heads": 4, "head_dim": 64, "kv_len": 100}},
    {"method": "fault_injection", "params": {"kind": "slow_reference", "n": 16, "micros": 150000}},
    {"method": "mha", "phase": "prefill", "dtype": "bf16", "params": {"batch": 1, "q_heads": 4, "head_dim": 64, "q_len": 40, "kv_len": 90}},
    {"method": "fault_injection", "params": {"kind": "spin", "n": 16, "micros": 150000, "terms": {"values": [3]}}}]})";
  // Each run its own reference cache, so kills land in building references too.
  const auto args = [&](const std::string& out) {
    fs::create_directories(fs::path(out).parent_path());
    return common_args(suite, out);
  };
  const std::string whole = dir + "/whole/r.json";
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(test::run_cli(args(whole), kFaulty).exit_code == 0);
  const double length = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto want = test::row_signatures(whole);

  // Kill points spread over the run's length by a fixed sequence, so a failure reproduces.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0;
  };
  const int signals[] = {SIGKILL, SIGINT, SIGTERM};
  for (int point = 0; point < 24; ++point) {
    const double at = 0.05 + 0.9 * length * next();
    const int sig = signals[point % 3];
    const bool worker = point % 2 == 1;
    INFO("kill point " << point << ": " << (worker ? "worker" : "parent") << " gets signal " << sig << " at " << at << " s");
    const std::string out = dir + "/p" + std::to_string(point) + "/r.json";
    {
      test::BackgroundRun run(args(out), kFaulty);
      std::this_thread::sleep_for(std::chrono::duration<double>(at));
      const std::vector<int> workers = run.children();
      if (worker && !workers.empty()) ::kill(workers[0], sig);
      else run.signal(sig);
      const int code = run.wait(60);  // a killed worker's case is retried; the run may go on to the end
      INFO(run.output());
      REQUIRE(code != -1);
    }
    // Resume until complete (a run that finished leaves no journal to resume).
    if (fs::exists(out + ".journal")) {
      const auto resumed = test::run_cli(args(out) + " --resume", kFaulty);
      INFO(resumed.output);
      REQUIRE(resumed.exit_code == 0);
    } else if (!fs::exists(out)) {
      REQUIRE(test::run_cli(args(out), kFaulty).exit_code == 0);
    }
    CHECK(test::row_signatures(out) == want);
    CHECK_FALSE(fs::exists(out + ".journal"));
  }
}
