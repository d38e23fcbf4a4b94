// The results file (docs/design.md "Results", results/README.md): a superset of Google Benchmark's JSON
// (`context` + `benchmarks`), so Google Benchmark's compare.py reads it.
//
// Rows are named <case id>/<backend>/<variant>. A timed row gives one `iteration` row per
// repetition and `aggregate` rows <name>_mean/_median/_stddev/_cv as Google Benchmark writes
// them; an untimed row (a check, a failure, unsupported, skipped) is one row with zero times
// and error_occurred. The full attnbench object sits on the row that stands for the case (the
// _median aggregate, or the single untimed row); the others carry a short reference to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnbench/execute.h"
#include "attnbench/json.h"

namespace attnbench {

inline constexpr int kSchemaVersion = 1;

struct RunContext {
  std::string command_line;
  std::string verb;          // run | check
  std::string suite_name, suite_path, suite_hash;
  std::vector<uint64_t> seeds;
  Json backends = Json::object();  // name -> {device, details, limits, peaks, options}
  Json timing = Json::object();    // the timing options in force
  Json extra = Json::object();     // how it ran: isolated, timeout, shard, resumed, interrupted
};

Json build_context(const RunContext& rc);
// Google Benchmark-style rows for one RowResult.
std::vector<Json> result_rows(const RowResult& row);
// The record a results-file row carries in full (the row standing for its case), or none for the
// rows that carry only a reference to it. InputError when the record cannot be read.
std::optional<Row> full_record(const Json& benchmark_row);
// Writes {context, benchmarks} to path atomically (temporary file, then rename).
void write_results(const std::string& path, const Json& context, const std::vector<Json>& rows);

// Build information baked in at compile time (buildinfo.cpp, generated).
struct BuildInfo {
  const char* git_commit;
  bool git_dirty;
  const char* build_type;
  const char* compiler;
  const char* cxx_flags;
  const char* version;
};
const BuildInfo& build_info();

}  // namespace attnbench
