#include "attnbench/backend.h"

#include <cctype>
#include <cstdlib>

#include "attnbench/error.h"

namespace attnbench {

namespace ceilings {

const char* for_bound(Bound b) {
  switch (b) {
    case Bound::read: return read;
    case Bound::copy: return copy;
    case Bound::compute: return fp32;
  }
  return fp32;
}

bool is_bandwidth(const std::string& name) { return name.ends_with("_bytes_per_s"); }

std::string short_name(const std::string& name) {
  for (std::string_view tail : {"_bytes_per_s", "_flops_per_s", "_per_s"})
    if (name.ends_with(tail)) return name.substr(0, name.size() - tail.size());
  return name;
}

}  // namespace ceilings

void Peaks::add(std::string name, double per_s, std::string how_text) {
  ATTNBENCH_ASSERT(!find(name), "ceiling ", name, " measured twice");
  ceilings.push_back({std::move(name), per_s, std::move(how_text)});
}

const Ceiling* Peaks::find(const std::string& name) const {
  for (const Ceiling& c : ceilings)
    if (c.name == name) return &c;
  return nullptr;
}

double Peaks::rate(const std::string& name) const {
  const Ceiling* c = find(name);
  return c ? c->per_s : 0.0;
}

bool DeviceLimits::has(const std::string& feature) const {
  auto it = features.find(feature);
  return it != features.end() && it->second;
}

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::unknown: return "";
    case DeviceType::discrete: return "discrete";
    case DeviceType::integrated: return "integrated";
    case DeviceType::virtual_gpu: return "virtual";
    case DeviceType::cpu: return "cpu";
    case DeviceType::other: return "other";
  }
  return "";
}

DeviceType parse_device_type(std::string_view name) {
  for (DeviceType t : {DeviceType::unknown, DeviceType::discrete, DeviceType::integrated, DeviceType::virtual_gpu,
                       DeviceType::cpu, DeviceType::other})
    if (name == device_type_name(t)) return t;
  throw InputError(cat("unknown device type \"", name, "\"; known: discrete, integrated, virtual, cpu, other"));
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::none: return "";
    case CpuIsa::avx2: return "avx2";
    case CpuIsa::avx512: return "avx512";
  }
  return "";
}

CpuIsa parse_cpu_isa(std::string_view name) {
  for (CpuIsa isa : {CpuIsa::none, CpuIsa::avx2, CpuIsa::avx512})
    if (name == cpu_isa_name(isa)) return isa;
  throw InputError(cat("unknown CPU isa \"", name, "\"; known: avx2, avx512"));
}

std::string matrix_shapes_text(const std::vector<MatrixShape>& shapes) {
  std::string s;
  for (const MatrixShape& x : shapes) s += cat(s.empty() ? "" : ",", x.m, "x", x.n, "x", x.k);
  return s;
}

void Backend::set_option(const std::string& key, const std::string& value) {
  std::string known;
  for (const auto& o : options()) {
    if (o.name == key) {
      options_set_[key] = value;
      return;
    }
    known += (known.empty() ? "" : ", ") + o.name;
  }
  throw InputError(cat(name(), ": unknown backend option \"", key, "\"; known: ", known.empty() ? "(none)" : known));
}

std::string Backend::option(const std::string& key) const {
  if (auto it = options_set_.find(key); it != options_set_.end()) return it->second;
  std::string env = "ATTNBENCH_" + name() + "_" + key;
  for (char& ch : env) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const char* v = std::getenv(env.c_str())) return v;
  for (const auto& o : options())
    if (o.name == key) return o.default_value;
  ATTNBENCH_ASSERT(false, name(), " reads option \"", key, "\" it does not declare");
  __builtin_unreachable();
}

}  // namespace attnbench
