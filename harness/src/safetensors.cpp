#include "attnbench/safetensors.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/json.h"

namespace attnbench {

static_assert(std::endian::native == std::endian::little, "safetensors bytes are little-endian; so is every host here");

namespace {

constexpr std::pair<DType, const char*> kNames[] = {
    {DType::f64, "F64"}, {DType::f32, "F32"}, {DType::f16, "F16"}, {DType::bf16, "BF16"},
    {DType::i32, "I32"}, {DType::i8, "I8"},   {DType::u8, "U8"},
};

// Headers beyond this are not ours (the format's own limit is 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

}  // namespace

std::string safetensors_dtype(DType t) {
  for (const auto& [d, name] : kNames)
    if (d == t) return name;
  ATTNBENCH_ASSERT(false, "no safetensors name for dtype ", dtype_name(t));
  return {};
}

DType parse_safetensors_dtype(const std::string& name) {
  std::string known;
  for (const auto& [d, n] : kNames) {
    if (name == n) return d;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw InputError(cat("safetensors dtype \"", name, "\" is not supported; supported: ", known));
}

void write_safetensors(const std::string& path, const TensorMap& tensors, const SafetensorsMetadata& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", safetensors_dtype(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(errno_text(cat(path, ": cannot write")));
  unsigned char len[8];
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : tensors) out.write(reinterpret_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
  out.flush();
  if (!out) throw std::runtime_error(errno_text(cat(path, ": write failed")));
}

SafetensorsFile read_safetensors(const std::string& path) {
  return parse_safetensors(read_input_file(path, "safetensors file"), path);
}

SafetensorsFile parse_safetensors(std::string_view bytes, const std::string& path) {
  const auto bad = [&](const std::string& why) { return InputError(cat(path, ": not a safetensors file: ", why)); };
  if (bytes.size() < 8) throw bad("shorter than 8 bytes");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (n > kMaxHeaderBytes) throw bad(cat("header length ", n, " is implausible"));
  if (n > bytes.size() - 8) throw bad("header truncated");
  const std::string_view text = bytes.substr(8, n);
  const std::string_view data = bytes.substr(8 + n);
  Json header;
  try {
    header = Json::parse(text);
  } catch (const std::exception& e) {
    throw bad(cat("header is not JSON: ", e.what()));
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  SafetensorsFile f;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) throw bad(cat("metadata \"", k, "\" is not a string"));
        f.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      const DType t = parse_safetensors_dtype(entry.at("dtype").get<std::string>());
      const Shape shape = entry.at("shape").get<Shape>();
      const auto off = entry.at("data_offsets").get<std::vector<uint64_t>>();
      // The shape is checked against the bytes the file holds before anything is allocated.
      uint64_t bytes = dtype_size(t);
      for (int64_t d : shape)
        if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
          throw bad(cat("tensor ", name, ": shape ", Json(shape).dump(), " is impossible"));
      if (off.size() != 2 || off[1] < off[0] || off[1] > data.size() || off[1] - off[0] != bytes)
        throw bad(cat("tensor ", name, ": data_offsets do not match its shape and the file"));
      HostTensor tensor(name, t, shape);
      std::memcpy(tensor.raw(), data.data() + off[0], tensor.bytes());
      f.tensors.emplace(name, std::move(tensor));
    } catch (const Json::exception& e) {
      throw bad(cat("tensor ", name, ": ", e.what()));
    }
  }
  return f;
}

}  // namespace attnbench
