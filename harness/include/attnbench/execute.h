// Running one impl on one case (docs/design.md "Contracts", "Running"): the sequence every backend and method goes
// through, in one place.
//
//   allocate inputs and declared outputs (tracked) → prepare (shapes only) → upload inputs →
//   poison outputs → run → download → guards, layout, the method's check → [time through Google
//   Benchmark → poison, run once more, compare output hashes (race check)] → memory, quality
//
// A BackendError (or any exception) from the impl or backend becomes an `error` row naming it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/json.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/row.h"
#include "attnbench/timing.h"

namespace attnbench {

// What a case needs on every backend: generated once, shared by all backends and impls.
struct CaseData {
  Case c;
  TensorMap inputs;
  Reference ref;
  std::vector<OutputDecl> outputs;
  Work work;
  std::string input_hash, reference_hash;
  // Where the case's shared work went (recorded in each row's `seconds`, so a slow CI can be
  // traced to a case): generating the inputs, and computing (or loading) the fp64 reference.
  double inputs_s = 0, reference_s = 0;
  bool reference_cached = false;
};

class ReferenceCache;
// Generates the inputs and the reference, which comes from `cache` when it holds this case.
CaseData prepare_case_data(const Case& c, const ReferenceCache* cache = nullptr);

// A backend as the runner holds it: probed, with its peaks (measured once when timing).
struct BackendState {
  Backend* backend = nullptr;
  Probe probe;
  std::optional<Peaks> peaks;
};

struct ExecuteOptions {
  bool timing = true;
  TimingOptions timing_opts;
  bool keep_outputs = false;  // keep the checked run's outputs in RowResult::outputs (dump)
};

// The outcome of one row: its record (the attnbench object of a results row) and, when timed,
// the samples the results file's Google Benchmark rows are written from.
struct RowResult {
  Row record;
  std::optional<TimingResult> timing;
  TensorMap outputs;    // the checked run's outputs, with ExecuteOptions::keep_outputs
  std::string name() const { return record.name(); }  // <case id>/<backend>/<variant>
};

RowResult execute_case(const CaseData& data, BackendState& be, const ImplEntry& impl, const ExecuteOptions& opt);

// Rows that never ran (or never finished) an impl: the record's identity fields plus the status.
RowResult status_row(const Case& c, const std::string& backend, const std::string& variant, const std::string& device,
                     Status status, const std::string& reason);
RowResult unsupported_row(const Case& c, const BackendState& be, const std::string& reason);
RowResult skipped_row(const Case& c, const std::string& backend, const std::string& reason);

}  // namespace attnbench
