// `attnbench run` and `attnbench check`: expand a suite, validate each case, run every backend's
// cases, write the results file and print a summary. Exit codes (DESIGN.md §6): 0 when every row
// is pass, unsupported or skipped; 1 when any is fail, error, crashed or timeout; 2 for bad input
// found before any case runs; 3 when a requested backend is compiled in but unavailable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/execute.h"

namespace attnbench {

struct RunRequest {
  std::string verb = "run";               // run (timed) | check (equivalence only)
  std::string suite_path;
  std::vector<std::string> backends;      // empty: every compiled-in backend available here
  std::string filter;                     // regex on case ids
  std::string impl;                       // one variant only
  std::vector<std::string> backend_opts;  // "cpu.threads=2"
  std::string out;                        // results file ("" for check: none)
  ExecuteOptions exec;
  std::string command_line;
  bool quiet = false;
};

int run_suite(const RunRequest& req);

// Instantiates backends by name (all registered when `names` is empty) and applies
// "backend.option=value" settings. Unknown names or options throw InputError.
std::vector<std::unique_ptr<Backend>> open_backends(const std::vector<std::string>& names,
                                                    const std::vector<std::string>& options);

int exit_code_for(const std::vector<std::string>& statuses);

}  // namespace attnbench
