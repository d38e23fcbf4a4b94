#include "attnbench/reference_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/hash.h"
#include "attnbench/json.h"
#include "attnbench/results.h"
#include "attnbench/safetensors.h"

namespace attnbench {

namespace fs = std::filesystem;

namespace {
constexpr const char* kRowsTensor = "__checked_rows";
constexpr const char* kChecksum = "checksum";

// Over every byte the entry holds: each tensor's name, dtype, shape and data, and every metadata
// field but the checksum itself. One flipped bit anywhere is a different sum.
std::string entry_checksum(const TensorMap& tensors, const SafetensorsMetadata& meta) {
  uint64_t h = hash64("attnbench reference cache entry");
  for (const auto& [name, t] : tensors) {
    h = hash64(name, h);
    h = hash64(dtype_name(t.dtype()), h);
    for (int64_t d : t.shape()) h = hash64(&d, sizeof d, h);
    h = hash64(t.raw(), t.bytes(), h);
  }
  for (const auto& [k, v] : meta)
    if (k != kChecksum) h = hash64(v, hash64(k, h));
  return hex64(h);
}

// Once per entry and process: a damaged entry is news, not noise.
void report_discarded(const std::string& path, const std::string& why) {
  static std::mutex m;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(m);
  if (told.insert(path).second)
    std::fprintf(stderr, "attnbench: reference cache: %s is damaged (%s); discarded and rebuilt\n", path.c_str(), why.c_str());
}

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

void ReferenceCache::check_usable() const {
  std::error_code ec;
  fs::create_directories(entries_dir(), ec);
  if (ec || !fs::is_directory(entries_dir()))
    throw InputError(cat("--cache-dir ", dir_, ": cannot make it a folder", ec ? ": " + ec.message() : std::string()));
  const std::string probe = cat(entries_dir(), "/.write-test-", getpid());
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(errno_text(cat("--cache-dir ", dir_, ": cannot write there")));
  close(fd);
  unlink(probe.c_str());
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

void ReferenceCache::store(const Case& c, const std::string& input_hash, const Reference& ref) const {
  std::error_code dir_ec;
  fs::create_directories(entries_dir(), dir_ec);  // a failure shows as the write's below
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
  meta[kChecksum] = entry_checksum(tensors, meta);
  // Written aside and renamed: a run killed mid-write leaves no half entry under the real name.
  const std::string path = path_for(c), tmp = cat(path, ".tmp-", getpid());
  std::error_code ec;
  try {
    write_safetensors(tmp, tensors, meta);
  } catch (const std::exception& e) {  // a full disk costs the cache, not the run: the reference is rebuilt where needed
    static std::once_flag once;
    std::call_once(once, [&] { std::fprintf(stderr, "attnbench: reference cache: cannot store an entry (%s); going on without\n", e.what()); });
    fs::remove(tmp, ec);
    return;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

std::optional<Reference> ReferenceCache::read_entry(const Case& c, const std::string* input_hash) const {
  const std::string path = path_for(c);
  if (!fs::exists(path)) return std::nullopt;
  std::string why;
  try {
    if (auto ref = parse_entry(c, path, input_hash, &why)) return ref;
  } catch (const std::exception& e) {  // InputError of the reader, or a metadata field that does not parse
    why = e.what();
  }
  if (why.empty()) return std::nullopt;  // another input hash: not damage, just not this entry's
  report_discarded(path, why);
  std::error_code ec;
  fs::remove(path, ec);
  return std::nullopt;
}

std::optional<Reference> ReferenceCache::parse_entry(const Case& c, const std::string& path, const std::string* input_hash,
                                                     std::string* why) const {
  SafetensorsFile file = read_safetensors(path);
  TensorMap& tensors = file.tensors;
  SafetensorsMetadata& meta = file.metadata;
  const auto damaged = [&](const std::string& w) {
    *why = w;
    return std::nullopt;
  };
  if (meta[kChecksum] != entry_checksum(tensors, meta)) return damaged("checksum mismatch");
  if (meta["case_id"] != c.id() || meta["spec_version"] != std::to_string(c.method->info().spec_version))
    return damaged("it names another case");
  if (input_hash && meta["input_hash"] != *input_hash) return std::nullopt;
  Reference ref;
  ref.total_rows = std::stoll(meta["total_rows"]);
  // Named: items() of a temporary would dangle inside the loop (C++20 range-for lifetime).
  const Json baseline_err = Json::parse(meta["baseline_err"]);
  for (const auto& [k, v] : baseline_err.items()) ref.baseline_err[k] = v.get<double>();
  const Json shapes = Json::parse(meta["shapes"]);
  if (auto it = tensors.find(kRowsTensor); it != tensors.end()) {
    for (int64_t k = 0; k < it->second.numel(); ++k) {
      const double row = it->second.get(k);
      if (!(row >= 0 && row < static_cast<double>(ref.total_rows))) return damaged(cat("checked row ", row, " out of range"));
      ref.checked_rows.push_back(static_cast<int64_t>(row));
    }
    tensors.erase(it);
  }
  for (auto& [name, t] : tensors) {
    if (ref.checked_rows.empty()) {
      ref.tensors.emplace(name, std::move(t));
      continue;
    }
    const Shape shape = shapes.at(name).get<Shape>();
    HostTensor full(name, t.dtype(), shape);
    // The stored rows must be exactly the checked rows of the full tensor, or the copies below
    // would write outside it.
    if (t.shape().size() != 2 || t.shape()[0] != static_cast<int64_t>(ref.checked_rows.size()) ||
        ref.total_rows <= 0 || full.numel() % ref.total_rows != 0 || t.shape()[1] != full.numel() / ref.total_rows)
      return damaged(cat(name, "'s stored rows do not match its shape"));
    if (dtype_is_float(full.dtype())) full.fill(NAN);
    const size_t row_bytes = static_cast<size_t>(t.shape()[1]) * dtype_size(t.dtype());
    for (size_t k = 0; k < ref.checked_rows.size(); ++k)
      std::memcpy(full.raw() + ref.checked_rows[k] * row_bytes, t.raw() + k * row_bytes, row_bytes);
    ref.tensors.emplace(name, std::move(full));
  }
  return ref;
}

bool ReferenceCache::holds(const Case& c) const { return read_entry(c, nullptr).has_value(); }

bool ReferenceCache::load(const Case& c, const std::string& input_hash, Reference& out) const {
  auto ref = read_entry(c, &input_hash);
  if (!ref) return false;
  out = std::move(*ref);
  return true;
}

}  // namespace attnbench
