// Replayed inputs (docs/real-tensors.md): a case may take some of its inputs from a .safetensors
// file a user captured from a model, instead of the method's generator. Every other input, and
// every draw, still comes from the seed. The file is named by its content hash in the case id
// ("…/bf16/s1@<hash>") and in every row, so a row says exactly what it ran on.
//
// Which inputs: each input of the case whose name the file holds, or which `tensors` maps to a
// tensor of the file (q -> q_obs); a mapping for an input the case does not have is unused, so one
// mapping serves a suite of methods. A replayed tensor must have the shape the case's parameters
// make; its values are converted once to the input's dtype (exact when the file holds that dtype). The generator runs first, so a method
// whose inputs derive from others (a planted selection from k) calls replay_inputs() on what it
// derives from before deriving, and the harness's own call after inputs() changes nothing more.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "attnbench/error.h"
#include "attnbench/json.h"
#include "attnbench/safetensors.h"
#include "attnbench/tensor.h"

namespace attnbench {

struct Case;

struct InputSource {
  std::string path;                            // as given; "" when only the hash is known (a parsed id)
  std::string hash;                            // hex64 of the file's bytes
  std::map<std::string, std::string> tensors;  // input name -> tensor in the file, where not the same name
  std::shared_ptr<const SafetensorsFile> file;  // null when only the hash is known

  // The file tensor an input comes from, or "" when it does not come from the file.
  std::string tensor_for(const std::string& input) const;
  // {"file", "hash", "tensors", "metadata"}: what a row records (metadata: the file's, e.g.
  // model_id and layer from ci/capture/capture_hf.py).
  Json to_json() const;
};

// Reads and hashes the file once per process (the same path, unchanged, is shared). InputError
// when it is missing or malformed, or when a mapped tensor is not in it.
std::shared_ptr<const InputSource> open_input_source(const std::string& path,
                                                     const std::map<std::string, std::string>& tensors = {});
// From a row's record of it (InputSource::to_json), reopened; InputError when the file's hash changed.
std::shared_ptr<const InputSource> input_source_from_json(const Json& j);
// "NAME=TENSOR" arguments (the CLI's --input-tensor) as a mapping.
std::map<std::string, std::string> parse_tensor_map(const std::vector<std::string>& args);

// Why the file cannot stand in for the case's inputs (a missing tensor, a shape the case's
// parameters do not make), naming the tensor; "" when it can.
std::string replay_mismatch(const Case& c, const TensorMap& inputs);
// What replay_inputs() throws: the file does not fit this case (a `skipped` row in a product).
class ReplayMismatch : public InputError {
 public:
  using InputError::InputError;
};

// Replaces the case's replayed inputs by the file's tensors. No-op without a source;
// ReplayMismatch with replay_mismatch()'s reason when they do not fit, or when the source has no file.
void replay_inputs(const Case& c, TensorMap& inputs);

// InputError with replay_mismatch()'s reason when the file does not fit the case: for a single
// case (a one-case suite entry, a dump), where a misfit is bad input rather than a skipped row.
// It generates the case's inputs once more than a run needs.
void check_replay_fits(const Case& c);

// A case's inputs: the method's generator, then the replayed ones, unless the method replays them
// itself (Method::replays_own_inputs()). ReplayMismatch when the file does not fit.
TensorMap case_inputs(const Case& c);

}  // namespace attnbench
