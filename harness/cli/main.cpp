// attnbench: the command-line entry point. Verbs: list, run, check, env, dump.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "attnbench/runner.h"
#include "attnbench/suite.h"
#include "verbs.h"

namespace attnbench::cli {
namespace {

const char* kUsage = R"(attnbench — attention, KV-cache compression and decoding kernels on CPU, CUDA and Vulkan,
checked against one fp64 reference, timed, and recorded as JSON.

usage: attnbench <verb> [options]

verbs:
  list [SUITE]     methods x backends x variants; with a suite, its expanded case ids
  run SUITE        check and time every case on every backend; write a results file
  check SUITE      check equivalence only (no timing)
  env              backends compiled in and available, devices, limits, options
  dump CASE_ID     inputs, reference and each backend's outputs as .safetensors

  attnbench <verb> --help   for the verb's options

exit codes: 0 all pass/unsupported/skipped, 1 a row failed, 2 bad input, 3 backend unavailable
)";

std::vector<FlagSpec> run_flags(bool timing) {
  std::vector<FlagSpec> f = {
      {"help", false, false, "this text"},
      {"filter", true, false, "regular expression on case ids"},
      {"backends", true, false, "comma-separated backends (default: every available one)"},
      {"impl", true, false, "run only this variant"},
      {"backend-opt", true, true, "<backend>.<option>=<value>, e.g. cpu.threads=2 (repeatable)"},
      {"out", true, false, timing ? "results file (default results/local/<suite>-<time>.json)" : "results file (default: none)"},
      {"quiet", false, false, "print only the summary and failures"},
  };
  if (timing) {
    f.push_back({"repetitions", true, false, "timed repetitions per row (default 9; compare needs >= 9)"});
    f.push_back({"min-time", true, false, "seconds per repetition (default 0.05)"});
    f.push_back({"warmup", true, false, "warm-up seconds before timing (default 0.02)"});
  }
  return f;
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
  if (args.positional().size() != 1) throw InputError(cat(verb, " needs exactly one suite file; see attnbench ", verb, " --help"));
  RunRequest req;
  req.verb = verb;
  req.suite_path = args.positional()[0];
  req.backends = split_commas(args.get("backends"));
  req.filter = args.get("filter");
  req.impl = args.get("impl");
  req.backend_opts = args.all("backend-opt");
  req.out = args.get("out");
  req.quiet = args.has("quiet");
  req.command_line = command_line;
  TimingOptions& t = req.exec.timing_opts;
  t.repetitions = args.get_int("repetitions", t.repetitions);
  t.min_time_s = args.get_double("min-time", t.min_time_s);
  t.warmup_s = args.get_double("warmup", t.warmup_s);
  if (t.repetitions < 1) throw InputError("--repetitions must be at least 1");
  if (timing && t.repetitions < 9)
    std::fprintf(stderr, "attnbench: warning: %d repetitions; compare's U test needs at least 9\n", t.repetitions);
  return run_suite(req);
}

}  // namespace

int main_impl(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
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
    if (verb == "dump") return verb_dump(rest);
    throw InputError(cat("unknown verb \"", verb, "\"; verbs: list, run, check, env, dump"));
  } catch (const InputError& e) {
    std::fprintf(stderr, "attnbench: %s\n", e.what());
    return 2;
  }
}

}  // namespace attnbench::cli

int main(int argc, char** argv) { return attnbench::cli::main_impl(argc, argv); }
