// `attnbench run` and `attnbench check`: plan the cases, then run each backend's cases (in a
// worker process, or in-process with --no-isolate), journaling every row; write the results file
// and print a summary. Exit codes (docs/design.md "Running"): 0 when every row is pass, unsupported or
// skipped; 1 when any is fail, error, crashed or timeout; 2 for bad input found before any case
// runs; 3 when a requested backend is compiled in but unavailable; 128+signal when interrupted
// (the journal and a valid partial results file remain; --resume completes the run).
#pragma once

#include <memory>
#include <map>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/execute.h"
#include "attnbench/plan.h"

namespace attnbench {

struct RunRequest {
  std::string verb = "run";               // run (timed) | check (equivalence only)
  std::string suite_path;                 // or:
  std::string rerun_path;                 // a results file whose cases (and settings) are run again
  std::vector<std::string> backends;      // empty: every compiled-in backend available here
  std::string filter;                     // regex on case ids
  std::string inputs_path;                // every case replays its inputs from this file (replay.h)
  std::map<std::string, std::string> input_tensors;  // with these input -> tensor mappings
  std::string impl;                       // one variant only
  std::vector<std::string> backend_opts;  // "cpu.threads=2"
  std::string out;                        // results file ("" for check: none)
  ExecuteOptions exec;
  std::string command_line;
  bool quiet = false;                     // only the rows that did not pass, and the summary
  bool verbose = false;                   // on a terminal, every row's line above the status line
  bool isolate = true;                    // worker processes (false: --no-isolate)
  double timeout_s = 600;                 // per row, in a worker
  bool resume = false;
  Shard shard;
  bool related = true;                    // also run baselines and companions
  std::string cache_dir;                  // reference cache ("" : the default)
  std::string executable;                 // this binary, for workers
};

int run_suite(RunRequest req);

// Instantiates backends by name (all registered when `names` is empty) and applies
// "backend.option=value" settings. Unknown names or options throw InputError.
std::vector<std::unique_ptr<Backend>> open_backends(const std::vector<std::string>& names,
                                                    const std::vector<std::string>& options);

int exit_code_for(const std::vector<Status>& statuses);

}  // namespace attnbench
