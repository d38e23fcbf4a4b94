#include "attnbench/registry.h"

#include <algorithm>

#include "attnbench/error.h"

namespace attnbench {

Registry& registry() {
  static Registry r;  // constructed on first use, so registrars in any order find it
  return r;
}

void register_method(std::unique_ptr<Method> m, const char* file) { registry().add_method(std::move(m), file); }
void register_impl(const std::string& method, const std::string& backend, const std::string& variant,
                   ImplFactory make, const char* file) {
  registry().add_impl({method, backend, variant, make, file});
}
void register_backend(const std::string& name, BackendFactory make, const char* file) {
  registry().add_backend({name, make, file});
}

void Registry::add_method(std::unique_ptr<Method> m, const char* file) {
  const std::string name = m->info().name;
  ATTNBENCH_ASSERT(!find_method(name), "method \"", name, "\" registered twice (", file, ")");
  methods_.push_back({std::move(m), file});
}

void Registry::add_impl(ImplEntry e) {
  for (const auto& x : impls_)
    ATTNBENCH_ASSERT(!(x.method == e.method && x.backend == e.backend && x.variant == e.variant),
                     "impl ", e.method, " ", e.backend, "/", e.variant, " registered twice (", e.source_file, ")");
  impls_.push_back(std::move(e));
}

void Registry::add_backend(BackendEntry e) {
  ATTNBENCH_ASSERT(!find_backend(e.name), "backend ", e.name, " registered twice");
  backends_.push_back(std::move(e));
  std::sort(backends_.begin(), backends_.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

const Method* Registry::find_method(const std::string& name) const {
  for (const auto& m : methods_)
    if (m.spec->info().name == name) return m.spec.get();
  return nullptr;
}

const Method& Registry::method(const std::string& name) const {
  if (const Method* m = find_method(name)) return *m;
  std::string known;
  for (const Method* m : methods()) known += (known.empty() ? "" : ", ") + m->info().name;
  throw InputError(cat("unknown method \"", name, "\"; known: ", known));
}

std::vector<const Method*> Registry::methods() const {
  std::vector<const Method*> out;
  for (const auto& m : methods_) out.push_back(m.spec.get());
  std::sort(out.begin(), out.end(), [](const Method* a, const Method* b) {
    return std::tie(a->info().family, a->info().name) < std::tie(b->info().family, b->info().name);
  });
  return out;
}

std::string Registry::method_source(const std::string& name) const {
  for (const auto& m : methods_)
    if (m.spec->info().name == name) return m.source_file;
  return {};
}

std::vector<const ImplEntry*> Registry::impls(const std::string& method, const std::string& backend) const {
  std::vector<const ImplEntry*> out;
  for (const auto& e : impls_)
    if (e.method == method && e.backend == backend) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->variant < b->variant; });
  return out;
}

const BackendEntry* Registry::find_backend(const std::string& name) const {
  for (const auto& b : backends_)
    if (b.name == name) return &b;
  return nullptr;
}

Support stage_supports(const Case& c, const std::string& backend, const DeviceLimits& limits) {
  const auto impls = registry().impls(c.method_name(), backend);
  if (impls.empty()) return Support::no(cat("the stage ", c.method_name(), " has no impl on ", backend));
  return impls.front()->make()->supports(c, limits);
}

std::unique_ptr<Impl> prepare_stage(const Case& c, Backend& backend, const IoBuffers& io,
                                    const std::map<std::string, Buffer*>& replace) {
  const auto impls = registry().impls(c.method_name(), backend.name());
  ATTNBENCH_ASSERT(!impls.empty(), "the stage ", c.method_name(), " has no impl on ", backend.name());
  std::unique_ptr<Impl> impl = impls.front()->make();
  const Support s = impl->supports(c, backend.probe().limits);
  ATTNBENCH_ASSERT(s.ok, "the stage ", c.method_name(), " does not support ", c.id(), ": ", s.reason);
  IoBuffers stage_io = io;
  for (const auto& [name, buffer] : replace) stage_io.add(name, buffer);
  impl->prepare(c, backend, stage_io);
  return impl;
}

}  // namespace attnbench
