#include "attnbench/reference_cache.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "attnbench/error.h"
#include "attnbench/hash.h"
#include "attnbench/json.h"
#include "attnbench/results.h"
#include "attnbench/safetensors.h"

namespace attnbench {

namespace fs = std::filesystem;

namespace {
constexpr const char* kRowsTensor = "__checked_rows";

std::string default_dir() {
  if (const char* d = std::getenv("ATTNBENCH_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/attnbench/references";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/attnbench/references";
  return ".attnbench-cache/references";
}
}  // namespace

ReferenceCache::ReferenceCache(std::string dir, std::string salt)
    : dir_(dir.empty() ? default_dir() : std::move(dir)), salt_(std::move(salt)) {}

std::string ReferenceCache::default_salt() {
  static const std::string salt = [] {
    const BuildInfo& b = build_info();
    if (!b.git_dirty) return std::string(b.git_commit);
    return cat(b.git_commit, "-dirty-", getpid(), "-", std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return salt;
}

bool ReferenceCache::per_run() const { return salt_.find("-dirty-") != std::string::npos; }

std::string ReferenceCache::entries_dir() const { return per_run() ? dir_ + "/run-" + hex64(hash64(salt_)) : dir_; }

void ReferenceCache::remove_run_entries() const {
  std::error_code ec;  // best effort: a cache is never worth failing a run for
  if (per_run()) fs::remove_all(entries_dir(), ec);
}

std::string ReferenceCache::path_for(const Case& c) const {
  uint64_t h = hash64(c.id());
  h = hash64(std::to_string(c.method->info().spec_version), h);
  h = hash64(salt_, h);
  return entries_dir() + "/" + c.method_name() + "-" + hex64(h) + ".safetensors";
}

bool ReferenceCache::holds(const Case& c) const { return fs::exists(path_for(c)); }

void ReferenceCache::store(const Case& c, const std::string& input_hash, const Reference& ref) const {
  fs::create_directories(entries_dir());
  TensorMap tensors;
  const bool sampled = !ref.checked_rows.empty();
  for (const auto& [name, t] : ref.tensors) {
    if (!sampled) {
      tensors.emplace(name, t.clone());
      continue;
    }
    // Only the checked rows: a model-sized reference is otherwise mostly NaN.
    const int64_t per_row = t.numel() / ref.total_rows;
    HostTensor rows(name, t.dtype(), {static_cast<int64_t>(ref.checked_rows.size()), per_row});
    const size_t row_bytes = per_row * dtype_size(t.dtype());
    for (size_t k = 0; k < ref.checked_rows.size(); ++k)
      std::memcpy(rows.raw() + k * row_bytes, t.raw() + ref.checked_rows[k] * row_bytes, row_bytes);
    tensors.emplace(name, std::move(rows));
  }
  if (sampled) {
    HostTensor rows(kRowsTensor, DType::i32, {static_cast<int64_t>(ref.checked_rows.size())});
    for (size_t k = 0; k < ref.checked_rows.size(); ++k) rows.set(k, static_cast<double>(ref.checked_rows[k]));
    tensors.emplace(kRowsTensor, std::move(rows));
  }
  Json shapes = Json::object();
  for (const auto& [name, t] : ref.tensors) shapes[name] = t.shape();
  std::map<std::string, std::string> meta = {
      {"case_id", c.id()},
      {"spec_version", std::to_string(c.method->info().spec_version)},
      {"input_hash", input_hash},
      {"baseline_err", Json(ref.baseline_err).dump()},
      {"total_rows", std::to_string(ref.total_rows)},
      {"shapes", shapes.dump()},
  };
  write_safetensors(path_for(c), tensors, meta);
}

bool ReferenceCache::load(const Case& c, const std::string& input_hash, Reference& out) const {
  const std::string path = path_for(c);
  if (!fs::exists(path)) return false;
  SafetensorsFile file;
  try {
    file = read_safetensors(path);
  } catch (const InputError&) {
    return false;  // a damaged entry is rebuilt
  }
  TensorMap& tensors = file.tensors;
  SafetensorsMetadata& meta = file.metadata;
  if (meta["case_id"] != c.id() || meta["input_hash"] != input_hash ||
      meta["spec_version"] != std::to_string(c.method->info().spec_version))
    return false;
  Reference ref;
  ref.total_rows = std::stoll(meta["total_rows"]);
  // Named: items() of a temporary would dangle inside the loop (C++20 range-for lifetime).
  const Json baseline_err = Json::parse(meta["baseline_err"]);
  for (const auto& [k, v] : baseline_err.items()) ref.baseline_err[k] = v.get<double>();
  const Json shapes = Json::parse(meta["shapes"]);
  if (auto it = tensors.find(kRowsTensor); it != tensors.end()) {
    for (int64_t k = 0; k < it->second.numel(); ++k) ref.checked_rows.push_back(static_cast<int64_t>(it->second.get(k)));
    tensors.erase(it);
  }
  for (auto& [name, t] : tensors) {
    if (ref.checked_rows.empty()) {
      ref.tensors.emplace(name, std::move(t));
      continue;
    }
    HostTensor full(name, t.dtype(), shapes.at(name).get<Shape>());
    if (dtype_is_float(full.dtype())) full.fill(NAN);
    const size_t row_bytes = static_cast<size_t>(t.shape()[1]) * dtype_size(t.dtype());
    for (size_t k = 0; k < ref.checked_rows.size(); ++k)
      std::memcpy(full.raw() + ref.checked_rows[k] * row_bytes, t.raw() + k * row_bytes, row_bytes);
    ref.tensors.emplace(name, std::move(full));
  }
  out = std::move(ref);
  return true;
}

}  // namespace attnbench
