// The registry: every method spec, backend and impl linked into this binary, each registered by
// one line next to its code. Filled by static registrars before main(); read-only afterwards.
#pragma once

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

}  // namespace attnbench
