// `attnbench dump CASE`: a case's inputs, its fp64 reference (check-only tensors included) and each
// backend's outputs as .safetensors files (safetensors.h), for inspection in numpy or PyTorch.
//
//   <dir>/inputs.safetensors             the inputs (generated or replayed), in their storage dtypes
//   <dir>/reference.safetensors          the reference's tensors (floats as F64)
//   <dir>/<backend>.<variant>.safetensors  the impl's outputs from a checked run (no timing)
//
// Every file's __metadata__ names the case id, method, spec_version, seed and dtype, and the
// hashes of the inputs and reference; output files add backend, variant, status and reason.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attnbench/caseid.h"

namespace attnbench {

struct DumpRequest {
  std::string case_id;
  std::string out_dir;                    // "": dumps/<case id with '/' as "__">
  bool all_backends = false;              // every available backend (else only `backends`)
  std::vector<std::string> backends;
  std::vector<std::string> backend_opts;  // "cpu.threads=2"
  std::string impl;                       // one variant only ("": every variant)
  std::string inputs_path;                // the file a replayed case id ("…@<hash>") ran on
  std::map<std::string, std::string> input_tensors;  // input -> tensor, where the names differ
};

struct DumpResult {
  std::string dir;
  std::vector<std::string> files;
  std::vector<std::string> row_lines;  // "<backend>/<variant>: <status> <reason>"
  int exit_code = 0;                   // as `check` would exit for these rows
};

std::string default_dump_dir(const Case& c);
DumpResult dump_case(const DumpRequest& req);

}  // namespace attnbench
