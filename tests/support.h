// Shared helpers for tests: backends by name, running a case in-process, paths.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

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

// A CLI run in a process of its own, for the tests that signal or kill it mid-run. Its stdout and
// stderr go to a log file (output()). The destructor kills it if it is still running.
class BackgroundRun {
 public:
  // `env`: assignments for its environment ("ATTNBENCH_FAULT_SLOWDOWN=0.01"), or "".
  BackgroundRun(const std::string& args, const std::string& executable = "attnbench", const std::string& env = "");
  ~BackgroundRun();
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;
  int pid() const { return pid_; }
  void signal(int sig) const;
  // The exit code (128+signal when a signal ended it), or -1 when it is still running after timeout_s.
  int wait(double timeout_s);
  std::string output() const;
  // Its child processes now (a run's workers).
  std::vector<int> children() const;

 private:
  int pid_ = -1;
  bool reaped_ = false;
  int code_ = -1;
  std::string log_;
};

// A file's bytes ("" when it does not exist).
std::string read_text(const std::string& path);
// Each row of a results file that carries its full record, as "name status input-hash
// reference-hash output-hash": a multiset, so a doubled row shows. Two runs of the same cases
// compare equal whatever their timings.
std::multiset<std::string> row_signatures(const std::string& results_path);
// The `case_done` lines in a run's journal so far.
int journal_cases_done(const std::string& journal_path);

// Polls `done` every 10 ms for up to timeout_s; whether it became true.
bool wait_until(const std::function<bool()>& done, double timeout_s);
// Whether a process is gone (or a zombie nobody has reaped yet).
bool process_gone(int pid);

// A scratch directory for one test, emptied first.
std::string scratch_dir(const std::string& name);

// A case from its id.
Case case_from_id(const std::string& id);
// A case of `method` from its parameters ("batch=2,kv_len=40"), dtype and seed.
Case method_case(const std::string& method, const std::string& params, const std::string& dtype = "f32",
                 uint64_t seed = 1);

// The reference's declared outputs converted to their declared dtypes, as an impl would return
// them (check-only tensors left out): the starting point of tests that perturb outputs.
TensorMap reference_as_outputs(const Case& c, const Reference& ref);

// Row `row` of a compacted cache's kept_idx (kvcomp): its first kept_len entries, the pad beyond
// them checked to be −1.
std::vector<int64_t> kept_tokens(const TensorMap& t, int64_t row);

// A selection-only method's negative test (kvcomp, sparse_step.h): `got` with row `row` of kept_idx
// replaced by `set` (ascending, as long as the row) fails its checks, first on kept_idx, and its
// O — still the reference set's — fails too, checked over the replaced set.
void check_replaced_set_fails(const Case& c, const TensorMap& in, const Reference& ref, TensorMap& got, int64_t row,
                              const std::vector<int64_t>& set);

// A fresh backend with options set ("isa" -> "avx2"), or exit 77 when it is unavailable.
std::unique_ptr<Backend> open_backend(const std::string& name, const std::vector<std::pair<std::string, std::string>>& options);

// Checks every case on `backend`; returns "<case id><label>: <status> <reason>" for every row that
// did not pass, and "<case id><label>: no impl ran" for a case no impl took (empty: all passed).
std::vector<std::string> rows_not_passing(const std::vector<std::string>& case_ids, Backend& backend,
                                          const std::string& label = "");

// The same on the CPU backend with its best ISA, again with cpu.amx=off where the CPU has AMX
// tiles, and with cpu.isa=avx2 (the x86-64-v3 baseline); the label names the option.
std::vector<std::string> cpu_rows_not_passing(const std::vector<std::string>& case_ids);

// The hash of a row's outputs (a run-to-run or thread-count comparison).
std::string output_hash(const RowResult& row);
// "<status> <reason>": "pass " for a row that passed, so a failing CHECK shows why.
std::string status_and_reason(const RowResult& row);

// Each case checked on two configurations of a backend (e.g. one span and three): "<case id>: ..."
// for every case that did not pass on both or whose outputs differ (empty: same bits everywhere).
std::vector<std::string> rows_differing(const std::vector<std::string>& case_ids, Backend& a, Backend& b);

// The row of the case's one impl on `backend`, timed briefly and judged against `peaks` (the
// ceilings a run would have measured); fails the test unless it passed.
Row timed_row(const std::string& case_id, const Peaks& peaks, Backend& backend);

// Checks (no timing) every impl of the case's method on `backend`; one row per variant.
std::vector<RowResult> check_case(const Case& c, Backend& backend);

// The checked run (no timing) of one variant on hand-made inputs, with the reference computed from
// them; the outputs are kept (RowResult::outputs). Fails the test when the variant is missing.
RowResult check_with_inputs(const Case& c, TensorMap inputs, Backend& backend, const std::string& variant);

}  // namespace attnbench::test
