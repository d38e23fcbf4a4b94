// The on-disk cache of fp64 references (docs/design.md "Running"): the parent builds each missing reference
// once; workers read it. Keyed by case id, spec_version and the commit, and checked against the
// input hash, so a changed generator, default or semantic can never be served a stale reference.
// A sampled (model-sized) reference stores only its checked rows.
#pragma once

#include <optional>
#include <string>

#include "attnbench/caseid.h"
#include "attnbench/method.h"

namespace attnbench {

class ReferenceCache {
 public:
  // dir "" : ATTNBENCH_CACHE_DIR, else ~/.cache/attnbench/references. `salt` joins the key: the
  // commit the binary was built from, so a fixed reference bug never serves a stale entry (a
  // build from a dirty tree gets a per-run salt, passed on to its workers).
  explicit ReferenceCache(std::string dir, std::string salt = default_salt());
  static std::string default_salt();
  const std::string& dir() const { return dir_; }
  const std::string& salt() const { return salt_; }
  // InputError unless the folder exists or can be made, and can be written (before a run starts).
  void check_usable() const;
  // A build from a dirty tree keys its entries by run: they live in a folder of their own, serve
  // only that run's parent and workers, and the run removes them when it ends (else every run
  // of a suite under development would leave its references behind).
  bool per_run() const;
  void remove_run_entries() const;
  // The entry's file: named by case id, spec_version and salt, so whether a case is cached is
  // known without generating its inputs; load() also requires the inputs' hash to match.
  std::string path_for(const Case& c) const;
  // Every entry carries a checksum of its tensors and metadata, verified on every read: a damaged
  // entry (a flipped bit, a cut file, a sampled-row index out of range) is removed, reported once
  // on stderr and rebuilt by the caller, never served. holds() reads and verifies the entry
  // (without the inputs, which it does not have); load() also requires the inputs' hash.
  bool holds(const Case& c) const;
  bool load(const Case& c, const std::string& input_hash, Reference& out) const;
  void store(const Case& c, const std::string& input_hash, const Reference& ref) const;

 private:
  std::string entries_dir() const;
  std::optional<Reference> read_entry(const Case& c, const std::string* input_hash) const;
  std::optional<Reference> parse_entry(const Case& c, const std::string& path, const std::string* input_hash,
                                       std::string* why) const;
  std::string dir_;
  std::string salt_;
};

}  // namespace attnbench
