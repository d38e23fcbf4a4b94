// .safetensors files: an 8-byte little-endian header length, a JSON header
// {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}}
// and the raw little-endian bytes. Loadable by PyTorch/numpy (docs show a ten-line loader).
// Used by `attnbench dump` and by the reference cache.
#pragma once

#include <map>
#include <string>

#include "attnbench/tensor.h"

namespace attnbench {

// Metadata values are strings, as the format requires.
void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// Throws InputError naming the file and the problem when it is not a valid file.
TensorMap read_safetensors(const std::string& path, std::map<std::string, std::string>* metadata = nullptr);

}  // namespace attnbench
