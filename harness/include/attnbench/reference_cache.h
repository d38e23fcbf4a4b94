// The on-disk cache of fp64 references (docs/design.md "Running"): the parent builds each missing reference
// once; workers read it. Keyed by case id, spec_version and the commit, and checked against the
// input hash, so a changed generator, default or semantic can never be served a stale reference.
// A sampled (model-sized) reference stores only its checked rows.
#pragma once

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
  // A build from a dirty tree keys its entries by run: they live in a folder of their own, serve
  // only that run's parent and workers, and the run removes them when it ends (else every run
  // of a suite under development would leave its references behind).
  bool per_run() const;
  void remove_run_entries() const;
  // The entry's file: named by case id, spec_version and salt, so whether a case is cached is
  // known without generating its inputs; load() also requires the inputs' hash to match.
  std::string path_for(const Case& c) const;
  bool holds(const Case& c) const;
  bool load(const Case& c, const std::string& input_hash, Reference& out) const;
  void store(const Case& c, const std::string& input_hash, const Reference& ref) const;

 private:
  std::string entries_dir() const;
  std::string dir_;
  std::string salt_;
};

}  // namespace attnbench
