#include "attnbench/safetensors.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "attnbench/error.h"
#include "attnbench/json.h"

namespace attnbench {

namespace {

const char* st_name(DType t) {
  switch (t) {
    case DType::f64: return "F64";
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i8: return "I8";
    case DType::u8: return "U8";
  }
  return "?";
}

DType st_dtype(const std::string& s, const std::string& path) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i8, DType::u8})
    if (s == st_name(t)) return t;
  throw InputError(cat(path, ": unsupported safetensors dtype ", s));
}

}  // namespace

void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    header[name] = {{"dtype", st_name(t.dtype())}, {"shape", t.shape()}, {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError(cat(path, ": cannot write"));
    const uint64_t n = text.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
    f.write(reinterpret_cast<const char*>(len), 8);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& [name, t] : tensors) f.write(reinterpret_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.bytes()));
    if (!f) throw InputError(cat(path, ": write failed"));
  }
  std::filesystem::rename(tmp, path);
}

TensorMap read_safetensors(const std::string& path, std::map<std::string, std::string>* metadata) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(cat(path, ": cannot open"));
  const auto bad = [&](const std::string& why) { return InputError(cat(path, ": not a valid safetensors file: ", why)); };
  unsigned char len[8];
  if (!f.read(reinterpret_cast<char*>(len), 8)) throw bad("too short");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(len[i]) << (8 * i);
  const uint64_t file_size = std::filesystem::file_size(path);
  if (n > file_size - 8) throw bad("header length beyond the end of the file");
  std::string text(n, '\0');
  f.read(text.data(), static_cast<std::streamsize>(n));
  Json header;
  try {
    header = Json::parse(text);
  } catch (const std::exception& e) {
    throw bad(e.what());
  }
  const uint64_t data_start = 8 + n;
  TensorMap out;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (metadata)
        for (const auto& [k, v] : info.items()) (*metadata)[k] = v.get<std::string>();
      continue;
    }
    HostTensor t(name, st_dtype(info.at("dtype").get<std::string>(), path), info.at("shape").get<Shape>());
    const uint64_t begin = info.at("data_offsets")[0], end = info.at("data_offsets")[1];
    if (end - begin != t.bytes() || data_start + end > file_size) throw bad(cat("tensor ", name, " has inconsistent offsets"));
    f.seekg(static_cast<std::streamoff>(data_start + begin));
    if (t.bytes() && !f.read(reinterpret_cast<char*>(t.raw()), static_cast<std::streamsize>(t.bytes())))
      throw bad(cat("tensor ", name, " is truncated"));
    out.emplace(name, std::move(t));
  }
  return out;
}

}  // namespace attnbench
