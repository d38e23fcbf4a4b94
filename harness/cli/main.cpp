// attnbench: the command-line entry point. Verbs: list, run, check, compare, merge, env, dump, leaderboard.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "attnbench/error.h"
#include "attnbench/interrupt.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"
#include "attnbench/runner.h"
#include "attnbench/suite.h"
#include "attnbench/worker.h"
#include "verbs.h"

namespace attnbench::cli {
namespace {

const char* kUsage = R"(attnbench — attention, KV-cache compression and decoding kernels on CPU, CUDA and Vulkan,
checked against one fp64 reference, timed, and recorded as JSON.

usage: attnbench <verb> [options]

verbs:
  list [SUITE]     methods x backends x variants; with a suite, its expanded case ids
  run SUITE        check and time every case on every backend; write a results file
  run --rerun RESULTS [--filter ID]   run recorded cases again with their recorded settings
  check SUITE      check equivalence only (no timing)
  compare A B      per row: change in median time, Mann-Whitney U test, verdict; geometric mean
  merge A B ...    join shard results into one file
  env              backends compiled in and available, devices, limits, options
  dump CASE_ID     inputs, reference and each backend's outputs as .safetensors
  leaderboard RESULTS...   leaderboard.md and a self-contained leaderboard.html (--out DIR)

  attnbench <verb> --help   for the verb's options

exit codes: 0 all pass/unsupported/skipped, 1 a row failed, 2 bad input, 3 backend unavailable
)";

std::vector<FlagSpec> run_flags(bool timing) {
  std::vector<FlagSpec> f = {
      {"help", false, false, "this text"},
      {"filter", true, false, "regular expression on case ids"},
      {"inputs", true, false, "FILE.safetensors: every case replays the inputs the file holds (docs/real-tensors.md)"},
      {"input-tensor", true, true, "INPUT=TENSOR: with --inputs, read this input from a tensor of another name, e.g. q=q_obs (repeatable)"},
      {"backends", true, false, "comma-separated backends (default: every available one)"},
      {"impl", true, false, "run only this variant"},
      {"backend-opt", true, true, "<backend>.<option>=<value>, e.g. cpu.threads=2 (repeatable)"},
      {"out", true, false, timing ? "results file (default results/local/<suite>-<time>.json)" : "results file (default: none)"},
      {"quiet", false, false, "print only the summary and failures"},
      {"verbose", false, false, "on a terminal, print every row's line, not only those that did not pass"},
      {"no-isolate", false, false, "run cases in this process instead of a worker process per backend"},
      {"timeout", true, false, "seconds a row may take in its worker before its process group is killed (default 600)"},
      {"resume", false, false, "continue the interrupted run whose journal is <out>.journal"},
      {"shard", true, false, "i/N: run only the cases whose id hashes to shard i of N (0-based)"},
      {"no-related", false, false, "run: do not also run each case's baseline and companion cases (check never does)"},
      {"cache-dir", true, false, "fp64 reference cache (default $ATTNBENCH_CACHE_DIR or ~/.cache/attnbench/references)"},
  };
  if (timing) {
    f.push_back({"repetitions", true, false, "timed repetitions per row (default 9; compare needs >= 9)"});
    f.push_back({"min-time", true, false, "seconds per repetition (default 0.05)"});
    f.push_back({"warmup", true, false, "warm-up seconds before timing (default 0.02)"});
    f.push_back({"timing", true, false, "cold | hot | auto (default auto: cold for memory-bound rows)"});
    f.push_back({"rerun", true, false, "RESULTS.json: run its recorded cases again with the recorded settings"});
  }
  return f;
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw InputError("cannot find this executable (/proc/self/exe) to start workers; use --no-isolate");
  return std::string(buf, static_cast<size_t>(n));
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t c = s.find(',', start);
    const std::string part = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
    if (!part.empty()) out.push_back(part);
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

int verb_run(const std::string& verb, const std::vector<std::string>& argv, const std::string& command_line) {
  const bool timing = verb == "run";
  const auto flags = run_flags(timing);
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench %s SUITE [options]\n\n%s", verb.c_str(), flags_help(flags).c_str());
    return 0;
  }
  RunRequest req;
  req.verb = verb;
  req.rerun_path = args.get("rerun");
  if (req.rerun_path.empty() && args.positional().size() != 1)
    throw InputError(cat(verb, " needs exactly one suite file; see attnbench ", verb, " --help"));
  if (!req.rerun_path.empty() && !args.positional().empty())
    throw InputError("--rerun takes its cases from the results file: give no suite");
  if (req.rerun_path.empty()) req.suite_path = args.positional()[0];
  req.backends = split_commas(args.get("backends"));
  if (args.has("backends") && req.backends.empty())
    throw InputError("--backends is empty; name one or more backends, or leave it out for every available one");
  req.filter = args.get("filter");
  req.inputs_path = args.get("inputs");
  req.input_tensors = parse_tensor_map(args.all("input-tensor"));
  if (req.inputs_path.empty() && !req.input_tensors.empty()) throw InputError("--input-tensor maps inputs of a file: give it with --inputs");
  req.impl = args.get("impl");
  req.backend_opts = args.all("backend-opt");
  req.out = args.get("out");
  req.quiet = args.has("quiet");
  req.verbose = args.has("verbose");
  if (req.quiet && req.verbose) throw InputError("--quiet and --verbose ask for opposite things; give one");
  req.command_line = command_line;
  req.isolate = !args.has("no-isolate");
  req.timeout_s = args.get_double("timeout", req.timeout_s);
  if (req.timeout_s <= 0) throw InputError(cat("--timeout ", args.get("timeout"), ": a row's time limit must be above 0 seconds"));
  req.resume = args.has("resume");
  if (args.has("shard")) req.shard = Shard::parse(args.get("shard"));
  req.related = timing && !args.has("no-related");  // related cases serve timing comparisons
  req.cache_dir = args.get("cache-dir");
  req.executable = self_executable();
  if (args.has("timing")) {
    const std::string mode = args.get("timing");
    if (mode != "cold" && mode != "hot" && mode != "auto") throw InputError(cat("--timing ", mode, " is not cold, hot or auto"));
    req.exec.timing_opts.mode = mode;
  }
  TimingOptions& t = req.exec.timing_opts;
  t.repetitions = args.get_int("repetitions", t.repetitions);
  t.min_time_s = args.get_double("min-time", t.min_time_s);
  t.warmup_s = args.get_double("warmup", t.warmup_s);
  if (t.repetitions < 1) throw InputError("--repetitions must be at least 1");
  if (t.min_time_s < 0) throw InputError(cat("--min-time ", args.get("min-time"), ": seconds per repetition cannot be negative"));
  if (t.warmup_s < 0) throw InputError(cat("--warmup ", args.get("warmup"), ": warm-up seconds cannot be negative"));
  if (timing && t.repetitions < 9)
    std::fprintf(stderr, "attnbench: warning: %d repetitions; compare's U test needs at least 9\n", t.repetitions);
  return run_suite(req);
}

}  // namespace

int main_impl(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string command_line;
  for (int i = 0; i < argc; ++i) {
    if (i) command_line += ' ';
    command_line += argv[i];
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::printf("%s", kUsage);
    return args.empty() ? 2 : 0;
  }
  const std::string verb = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  try {
    if (verb == "run" || verb == "check") return verb_run(verb, rest, command_line);
    if (verb == "list") return verb_list(rest);
    if (verb == "env") return verb_env(rest);
    if (verb == "compare") return verb_compare(rest);
    if (verb == "merge") return verb_merge(rest);
    if (verb == "worker") return worker_main(rest);  // hidden: started by run/check
    if (verb == "dump") return verb_dump(rest);
    if (verb == "leaderboard") return verb_leaderboard(rest);
    throw InputError(cat("unknown verb \"", verb, "\"; verbs: list, run, check, compare, merge, env, dump, leaderboard"));
  } catch (const InputError& e) {
    std::fprintf(stderr, "attnbench: %s\n", e.what());
    return 2;
  } catch (const Interrupted& e) {  // before the run had anything to keep
    std::fprintf(stderr, "attnbench: interrupted (signal %d)\n", e.signal);
    return 128 + e.signal;
  } catch (const std::exception& e) {  // e.g. a backend that could not start at all
    std::fprintf(stderr, "attnbench: %s\n", e.what());
    return 1;
  }
}

}  // namespace attnbench::cli

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, reported with the path, instead
  // of killing the process mid-write.
  signal(SIGXFSZ, SIG_IGN);
  return attnbench::cli::main_impl(argc, argv);
}
