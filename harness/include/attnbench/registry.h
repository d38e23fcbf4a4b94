// The registry: every method spec, backend and impl linked into this binary, each registered by
// one line next to its code. Filled by static registrars before main(); read-only afterwards.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/impl.h"
#include "attnbench/method.h"

namespace attnbench {

struct ImplEntry {
  std::string method, backend, variant;
  ImplFactory make;
  std::string source_file;
  std::string row_suffix() const { return backend + "/" + variant; }
};

struct BackendEntry {
  std::string name;
  BackendFactory make;
  std::string source_file;
};

class Registry {
 public:
  const Method* find_method(const std::string& name) const;
  // The method or an InputError naming the known ones.
  const Method& method(const std::string& name) const;
  std::vector<const Method*> methods() const;               // sorted by family, then name
  std::vector<const ImplEntry*> impls(const std::string& method, const std::string& backend) const;
  const std::vector<ImplEntry>& all_impls() const { return impls_; }
  const std::vector<BackendEntry>& backends() const { return backends_; }  // sorted by name
  const BackendEntry* find_backend(const std::string& name) const;
  std::string method_source(const std::string& name) const;

  void add_method(std::unique_ptr<Method> m, const char* file);
  void add_impl(ImplEntry e);
  void add_backend(BackendEntry e);

 private:
  struct MethodEntry {
    std::unique_ptr<Method> spec;
    std::string source_file;
  };
  std::vector<MethodEntry> methods_;
  std::vector<ImplEntry> impls_;
  std::vector<BackendEntry> backends_;
};

Registry& registry();

// A stage that is itself a method: that method's impl on a backend (its first variant), for a
// case of that method, so a composite impl runs it over its own buffers (frspec's verification
// is speculative_sampling's). stage_supports() answers as that impl's supports(), or no when the
// backend has none; prepare_stage() asserts that it supports the case and prepares it over the
// composite's buffers, those named in `replace` swapped for the composite's own (its scratch).
Support stage_supports(const Case& c, const std::string& backend, const DeviceLimits& limits);
std::unique_ptr<Impl> prepare_stage(const Case& c, Backend& backend, const IoBuffers& io,
                                    const std::map<std::string, Buffer*>& replace = {});

}  // namespace attnbench
