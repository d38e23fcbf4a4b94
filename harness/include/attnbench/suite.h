// Suites: JSON files of cases (docs/design.md "Cases and their ids"), validated against suites/suite.schema.json (which
// is embedded in the binary) and expanded into concrete cases.
//
//   {"name": "smoke", "cases": [
//     {"method": "gqa", "phase": "decode", "dtype": ["f32", "bf16"],
//      "params": {"batch": 2, "q_heads": 32, "kv_heads": [8, 4], "kv_len": 1000},
//      "zip": {"head_dim": [64, 128], "ragged": [false, true]},
//      "label": "Llama-3-8B decode", "headline": true}]}
//
// An entry's "inputs": "capture.safetensors" (relative to the suite's folder) replays inputs from
// a captured file (replay.h), with "input_tensors": {"q": "q_obs"} where names differ.
//
// A list value multiplies out (a product over the listed keys, and over listed phases, dtypes
// and seeds); a `zip` group varies its keys together; {"values": [...]} is one list-valued
// parameter, not an axis. A product combination that breaks a method rule becomes a `skipped`
// row with the reason; a case entry that expands to exactly one case and breaks a rule is an
// InputError (exit 2), as is anything malformed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attnbench/caseid.h"
#include "attnbench/json.h"

namespace attnbench {

struct PlannedCase {
  Case c;
  std::string skip_reason;  // non-empty: a `skipped` row
  int entry = 0;            // index of the suite entry it came from
  std::map<std::string, std::string> input_tensors;  // the entry's, for a file given later (--inputs)
};

struct Suite {
  std::string name;
  std::string path;
  std::string description;
  std::string hash;          // of the file's bytes
  std::vector<PlannedCase> cases;
};

// The most cases one suite may expand to (docs/running.md): far above any real suite, low enough
// that the expanded cases fit in memory. A suite beyond it is refused before it is expanded.
inline constexpr size_t kMaxSuiteCases = 200000;

Suite load_suite(const std::string& path);
// Every case replays its inputs from `path` (the CLI's --inputs), with the entry's input_tensors
// overridden by `tensors` where given. A single-case suite whose case the file does not fit is an
// InputError naming the tensor; in a larger one such cases become `skipped` rows when they run.
void replay_suite_inputs(Suite& suite, const std::string& path, const std::map<std::string, std::string>& tensors);
Suite parse_suite_text(const std::string& text, const std::string& path);  // the file's bytes
Suite parse_suite(const Json& doc, const std::string& path, const std::string& hash);
const Json& suite_schema();  // the embedded suites/suite.schema.json

}  // namespace attnbench
