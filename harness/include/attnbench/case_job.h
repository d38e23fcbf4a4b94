// One case on one backend: every variant that accepts it (or the `unsupported` row), the same
// code in a worker process and in-process (--no-isolate).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attnbench/execute.h"
#include "attnbench/reference_cache.h"
#include "attnbench/registry.h"

namespace attnbench {

struct CaseJob {
  Case c;
  std::string impl;                         // "" : every variant
  std::vector<std::string> skip_variants;   // done already (resume, or before a crash)
  ExecuteOptions exec;
};

struct JobCallbacks {
  std::function<bool(const std::string& variant)> on_start;  // before a variant runs; false stops the job
  std::function<void(RowResult row)> on_row;                  // after it (or the unsupported row)
};

// The impls of the case's method on `backend` that accept it on these limits (only `impl`, when
// given); when none does, *why says why for each (the `unsupported` row's reason).
std::vector<const ImplEntry*> runnable_impls(const Case& c, const std::string& backend, const DeviceLimits& limits,
                                             const std::string& impl, std::string* why);

// Runs every runnable variant of one case on one backend, the case data prepared once (its
// reference from `cache` when held there).
void run_case_job(const CaseJob& job, BackendState& state, const ReferenceCache& cache, const JobCallbacks& cb);

// The job and its rows as JSON, for the worker protocol.
Json job_to_json(const CaseJob& job);
CaseJob job_from_json(const Json& j);

}  // namespace attnbench
