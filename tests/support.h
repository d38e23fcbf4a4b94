// Shared helpers for tests: backends by name, running a case in-process, paths.
#pragma once

#include <memory>
#include <string>

#include "attnbench/backend.h"
#include "attnbench/cases.h"
#include "attnbench/execute.h"

namespace attnbench::test {

// The source tree (suites/, docs/ ...) and the build tree.
std::string source_path(const std::string& relative);
std::string binary_path(const std::string& relative);

// The backend, or std::exit(77) (a CTest skip) when it is not compiled in or not available.
Backend& require_backend(const std::string& name);

// Runs the attnbench executable with `args` (a shell fragment); stdout and stderr together.
struct CliResult {
  int exit_code;
  std::string output;
};
CliResult run_cli(const std::string& args, const std::string& executable = "attnbench");
// Any shell command, run in the source tree.
CliResult run_shell(const std::string& command);

// A scratch directory for one test, emptied first.
std::string scratch_dir(const std::string& name);

// A case from its id.
Case case_from_id(const std::string& id);

// Checks (no timing) every impl of the case's method on `backend`; one row per variant.
std::vector<RowResult> check_case(const Case& c, Backend& backend);

}  // namespace attnbench::test
