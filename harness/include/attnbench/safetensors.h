// The safetensors format, written and read (for `attnbench dump`, loadable in numpy and PyTorch):
//
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   JSON: {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//                    "__metadata__": {"<key>": "<string>", ...}}, padded with spaces to a multiple of 8
//   the data  each tensor's raw little-endian bytes, row-major, at [begin, end) of this buffer
//
// dtypes: F64 F32 F16 BF16 I32 I8 U8 (attnbench's f64 f32 f16 bf16 i32 i8 u8). Tensors are written
// in name order, contiguously, so the byte buffer holds nothing else.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "attnbench/tensor.h"

namespace attnbench {

using SafetensorsMetadata = std::map<std::string, std::string>;

struct SafetensorsFile {
  TensorMap tensors;
  SafetensorsMetadata metadata;
};

std::string safetensors_dtype(DType t);                  // "F32"
DType parse_safetensors_dtype(const std::string& name);  // InputError for any other

// Throws InputError when the file cannot be written.
void write_safetensors(const std::string& path, const TensorMap& tensors, const SafetensorsMetadata& metadata = {});
// Throws InputError naming the problem when the file is missing or malformed.
SafetensorsFile read_safetensors(const std::string& path);
// The same from the file's bytes (`path` names it in errors).
SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& path);

}  // namespace attnbench
