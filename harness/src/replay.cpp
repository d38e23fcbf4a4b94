#include "attnbench/replay.h"

#include <cstring>
#include <mutex>
#include <sys/stat.h>

#include "attnbench/caseid.h"
#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/hash.h"
#include "attnbench/method.h"

namespace attnbench {

std::string InputSource::tensor_for(const std::string& input) const {
  if (const auto it = tensors.find(input); it != tensors.end()) return it->second;
  return file && file->tensors.count(input) ? input : "";
}

Json InputSource::to_json() const {
  Json meta = Json::object();
  if (file)
    for (const auto& [k, v] : file->metadata) meta[k] = v;
  return {{"file", path}, {"hash", hash}, {"tensors", tensors}, {"metadata", meta}};
}

namespace {

// A worker runs many cases of one suite: the file is read and hashed once, and read again only
// when it changed on disk (its size or modification time).
struct Opened {
  int64_t size = -1, mtime_ns = -1;
  std::shared_ptr<const SafetensorsFile> file;
  std::string hash;
};

std::pair<std::shared_ptr<const SafetensorsFile>, std::string> load_file(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, Opened> opened;
  struct stat st {};
  const bool known = stat(path.c_str(), &st) == 0;
  const int64_t mtime = known ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec : -1;
  // A device or a pipe would be read without end: an inputs file is a regular file.
  if (known && !S_ISREG(st.st_mode)) throw InputError(cat(path, ": not a regular file, so not an inputs file (.safetensors)"));
  std::lock_guard<std::mutex> lock(mu);
  Opened& o = opened[path];
  if (!known || o.size != static_cast<int64_t>(st.st_size) || o.mtime_ns != mtime || !o.file) {
    const std::string bytes = read_input_file(path, "inputs file (.safetensors)");
    o.file = std::make_shared<const SafetensorsFile>(parse_safetensors(bytes, path));
    o.hash = hex64(hash64(bytes.data(), bytes.size()));
    o.size = static_cast<int64_t>(bytes.size());
    o.mtime_ns = mtime;
  }
  return {o.file, o.hash};
}

std::string shape_text(const Shape& s) { return Json(s).dump(); }

}  // namespace

std::shared_ptr<const InputSource> open_input_source(const std::string& path,
                                                     const std::map<std::string, std::string>& tensors) {
  if (path.empty()) throw InputError("an inputs file is named by an empty path");
  auto src = std::make_shared<InputSource>();
  src->path = path;
  src->tensors = tensors;
  std::tie(src->file, src->hash) = load_file(path);
  for (const auto& [input, tensor] : tensors)
    if (!src->file->tensors.count(tensor)) {
      std::string held;
      for (const auto& [name, t] : src->file->tensors) held += (held.empty() ? "" : ", ") + name;
      throw InputError(cat(path, ": input \"", input, "\" is mapped to tensor \"", tensor, "\", which the file does not hold (it holds: ",
                           held, ")"));
    }
  return src;
}

std::shared_ptr<const InputSource> input_source_from_json(const Json& j) {
  const std::string path = j.value("file", "");
  auto src = open_input_source(path, j.value("tensors", std::map<std::string, std::string>{}));
  const std::string recorded = j.value("hash", "");
  if (!recorded.empty() && recorded != src->hash)
    throw InputError(cat(path, " has changed since it was recorded: its hash is ", src->hash, ", the record's ", recorded));
  return src;
}

std::map<std::string, std::string> parse_tensor_map(const std::vector<std::string>& args) {
  std::map<std::string, std::string> out;
  for (const auto& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
      throw InputError(cat("--input-tensor \"", a, "\" is not INPUT=TENSOR (e.g. q=q_obs)"));
    if (!out.emplace(a.substr(0, eq), a.substr(eq + 1)).second)
      throw InputError(cat("--input-tensor maps input \"", a.substr(0, eq), "\" twice"));
  }
  return out;
}

std::string replay_mismatch(const Case& c, const TensorMap& inputs) {
  const InputSource& src = *c.source;
  if (!src.file)
    return cat("the case replays inputs from a file with hash ", src.hash, "; name the file (--inputs FILE)");
  const std::string where = cat(src.path, " (", c.method_name(), ")");
  int replayed = 0;
  for (const auto& [name, t] : inputs) {
    const std::string tensor = src.tensor_for(name);
    if (tensor.empty()) continue;
    const HostTensor& held = src.file->tensors.at(tensor);
    const std::string from = tensor == name ? cat("tensor \"", name, "\"") : cat("tensor \"", tensor, "\" (input \"", name, "\")");
    if (held.shape() != t.shape())
      return cat(where, ": ", from, " is ", shape_text(held.shape()), " in the file; the case's parameters make ", shape_text(t.shape()));
    if (dtype_is_float(held.dtype()) != dtype_is_float(t.dtype()) || (!dtype_is_float(t.dtype()) && held.dtype() != t.dtype()))
      return cat(where, ": ", from, " is ", dtype_name(held.dtype()), " in the file; the case reads ", dtype_name(t.dtype()));
    ++replayed;
  }
  if (replayed == 0) {
    std::string names;
    for (const auto& [name, t] : inputs) names += (names.empty() ? "" : ", ") + name;
    return cat(where, ": the file holds none of the case's inputs (", names, "); map them with input_tensors / --input-tensor");
  }
  return {};
}

void replay_inputs(const Case& c, TensorMap& inputs) {
  if (!c.source) return;
  if (std::string why = replay_mismatch(c, inputs); !why.empty()) throw ReplayMismatch(why);
  for (auto& [name, t] : inputs) {
    const std::string tensor = c.source->tensor_for(name);
    if (tensor.empty()) continue;
    const HostTensor& held = c.source->file->tensors.at(tensor);
    if (held.dtype() == t.dtype()) std::memcpy(t.raw(), held.raw(), t.bytes());
    else
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, held.get(i));  // rounded once, as a generator rounds
  }
}

void check_replay_fits(const Case& c) { (void)case_inputs(c); }

TensorMap case_inputs(const Case& c) {
  TensorMap in = c.method->inputs(c);
  if (!c.method->replays_own_inputs(c)) replay_inputs(c, in);
  return in;
}

}  // namespace attnbench
