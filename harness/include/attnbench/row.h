// A result row as a type: its status, and the `attnbench` object of a results row (the record,
// results/README.md) with a typed field for each of its parts. Rows cross processes and files as
// JSON — the worker line, the journal, the results file — and to_json/from_json below are the one
// place that names the record's keys; everything else reads and writes the fields.
//
// The JSON is the results file's format, key for key and in the same order. from_json tolerates
// keys it does not know (a newer build's) and rejects what it cannot understand (a status it does
// not know, a field of the wrong type) with an InputError naming the row and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnbench/dtype.h"
#include "attnbench/json.h"
#include "attnbench/method.h"

namespace attnbench {

enum class Status { pass, fail, error, crashed, timeout, unsupported, skipped };

// Every status, in the order summaries list them.
inline constexpr Status kStatuses[] = {Status::pass,    Status::fail,        Status::error,  Status::crashed,
                                       Status::timeout, Status::unsupported, Status::skipped};

const char* status_name(Status s);             // "pass", "fail", ...
Status parse_status(std::string_view name);    // InputError naming the known ones
// A row that needs attention, and makes a run exit 1: fail, error, crashed, timeout.
bool is_bad(Status s);

// The per-output check of a row: its class, verdict and the class's metrics (max_abs, gate, ...),
// which the JSON writes beside class and pass.
struct RowCheck {
  std::string output;
  CheckClass cls = CheckClass::TOL;
  bool pass = true;
  std::string message;           // written only when the check failed
  Json metrics = Json::object();
};

struct RowHashes {
  std::string inputs, reference;
  std::string outputs;           // "" : the impl produced none (an error before the download)
};

// "all", or how many rows a model-sized reference computed and the check compared.
struct CheckedRows {
  bool all = true;
  uint64_t count = 0;
};

struct RowMemory {
  uint64_t input_bytes = 0, output_bytes = 0, workspace_peak_bytes = 0, peak_bytes = 0;
};

// Where a row's wall time went. The stages after `reference_cached` are present when reached.
struct RowSeconds {
  double inputs = 0, reference = 0;
  bool reference_cached = false;
  std::optional<double> run, check, timing, quality;
};

// The timing summary of a timed row (the samples travel beside the row: RowResult::timing).
struct RowTiming {
  std::string mode, how;         // cold | hot, and what a sample is
  int64_t batch = 1;
  uint64_t repetitions = 0;
  double min_time_s = 0, median_s = 0, cv = 0;
  bool noisy = false;
  Json telemetry = Json::array();  // per repetition; written only when not empty
};

const char* bound_name(Bound b);  // "compute" | "read" | "copy", as results files write it

struct RowThroughput {
  double flops_per_s = 0, bytes_per_s = 0;
  // Against the in-run ceiling the row names (work.bound; a compute-bound row's impl names its
  // arithmetic path); peak "" (and the two after it unwritten) when the run measured none.
  std::string peak;              // "read_bytes_per_s" | "copy_bytes_per_s" | "fp32_flops_per_s" | ...
  double pct_of_peak = 0;
  bool above_peak = false;
};

// A case this one is compared with (`related`: role -> case id), or one that is compared with it
// (`related_of`).
struct RelatedRef {
  std::string role, case_id;
  bool operator==(const RelatedRef&) const = default;
};

struct Row {
  // Identity: the case and where it ran.
  std::string case_id, label;
  bool headline = false;
  std::string catalog_id, method, family, phase;
  int spec_version = 0;
  std::string backend, variant, device;
  DType dtype = DType::f32;
  uint64_t seed = 0;
  Json params = Json::object();  // every parameter with its value, in the case's order
  Status status = Status::pass;
  std::string reason;            // one line for anything but pass
  // The file its inputs were replayed from (replay.h: file, hash, tensors, the file's metadata);
  // null: every input was generated. Written after params.
  Json replayed;

  // What running the impl produced (absent on rows that never ran one: unsupported, skipped,
  // crashed, timeout).
  std::optional<RowHashes> hashes;
  std::optional<Work> work;
  std::optional<CheckedRows> checked_rows;
  Json telemetry;                // the backend's device state after the checked run; null: none
  std::optional<std::vector<RowCheck>> checks;
  std::optional<bool> deterministic;
  std::optional<RowMemory> memory;
  std::optional<Json> quality;   // method-defined figures
  bool device_lost = false;      // written only when true
  std::optional<RowSeconds> seconds;
  std::optional<RowTiming> timing;
  std::optional<RowThroughput> throughput;

  // Its place in the run (set by the runner from the plan).
  std::optional<int> case_index, related_rank;
  std::vector<RelatedRef> related, related_of;

  std::string name() const { return case_id + "/" + backend + "/" + variant; }  // <case id>/<backend>/<variant>
};

void to_json(Json& j, const Row& row);
void from_json(const Json& j, Row& row);  // InputError; see the top of this file

// The short reference that a timed row's other Google Benchmark rows carry in place of the record.
Json row_reference(const Row& row);

}  // namespace attnbench
