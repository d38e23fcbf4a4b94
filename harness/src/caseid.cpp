#include "attnbench/caseid.h"

#include <charconv>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/method.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"

namespace attnbench {

const std::string& Case::method_name() const { return method->info().name; }

std::string Case::format_id() const {
  std::string id = method->info().name;
  if (!phase.empty()) id += "/" + phase;
  id += "/";
  bool first = true;
  for (const auto& [name, v] : params.items()) {
    const ParamSpec* spec = method->schema().find(name);
    if (spec && spec->id_omits_default && spec->default_value && *spec->default_value == v) continue;
    id += (first ? "" : ",") + name + "=" + value_str(v);
    first = false;
  }
  if (first) id += "-";
  id += "/";
  id += dtype_name(dtype);
  id += "/s" + std::to_string(seed);
  if (source) id += "@" + source->hash;
  return id;
}

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

}  // namespace

Case build_case(const CaseParts& parts) {
  const Method& m = registry().method(parts.method);
  const MethodInfo& info = m.info();
  const std::string where = info.name;
  if (info.phases.empty() && !parts.phase.empty())
    throw InputError(cat(where, " has no phases, but phase \"", parts.phase, "\" was given"));
  std::string phase = parts.phase;
  if (!info.phases.empty()) {
    std::string list;
    bool ok = false;
    for (const auto& p : info.phases) { ok |= (p == phase); list += (list.empty() ? "" : ", ") + p; }
    if (!ok)
      throw InputError(phase.empty() ? cat(where, " needs a phase; phases: ", list)
                                     : cat(where, " has no phase \"", phase, "\"; phases: ", list));
  }
  Case c;
  c.method = &m;
  c.phase = phase;
  c.params = m.schema().complete(parts.params, phase);
  c.dtype = parts.dtype.empty() ? info.dtypes.at(0) : parse_dtype(parts.dtype);
  c.seed = parts.seed;
  return c;
}

std::string rule_violation(const Case& c) {
  const MethodInfo& info = c.method->info();
  bool dtype_ok = false;
  std::string list;
  for (DType t : info.dtypes) {
    dtype_ok |= (t == c.dtype);
    list += (list.empty() ? "" : ", ") + std::string(dtype_name(t));
  }
  if (!dtype_ok) return cat(info.name, " is not defined for dtype ", dtype_name(c.dtype), " (dtypes: ", list, ")");
  return c.method->schema().broken_rule(c.params, c.phase);
}

Case make_valid_case(const CaseParts& parts) {
  Case c = build_case(parts);
  if (std::string why = rule_violation(c); !why.empty()) throw InputError(cat(parts.method, ": ", why));
  return c;
}

Case parse_case_id(std::string_view id) {
  const auto bad = [&](const std::string& why) { return InputError(cat("case id \"", id, "\": ", why)); };
  const auto seg = split(id, '/');
  if (seg.size() < 4) throw bad("expected method[/phase]/k=v,.../dtype/s<seed>");
  CaseParts parts;
  parts.method = std::string(seg[0]);
  const Method& m = registry().method(parts.method);
  const bool has_phase = !m.info().phases.empty();
  if (seg.size() != (has_phase ? 5u : 4u))
    throw bad(cat("expected ", has_phase ? 5 : 4, " segments separated by '/', found ", seg.size()));
  size_t i = 1;
  if (has_phase) parts.phase = std::string(seg[i++]);
  const std::string_view params = seg[i++];
  if (params != "-" && !params.empty()) {
    for (std::string_view kv : split(params, ',')) {
      const size_t eq = kv.find('=');
      if (eq == std::string_view::npos) throw bad(cat("parameter \"", kv, "\" is not k=v"));
      const std::string name(kv.substr(0, eq));
      const ParamSpec* spec = m.schema().find(name);
      if (!spec) throw bad(cat("unknown parameter \"", name, "\"; known: ", m.schema().known_names()));
      if (parts.params.count(name)) throw bad(cat("parameter ", name, " is given twice"));
      auto v = parse_value(spec->type, kv.substr(eq + 1));
      if (!v) throw bad(cat("parameter ", name, "=", kv.substr(eq + 1), " is not a ", param_type_name(spec->type)));
      parts.params[name] = *v;
    }
  }
  parts.dtype = std::string(seg[i++]);
  std::string_view s = seg[i];
  std::string hash;
  if (const size_t at = s.find('@'); at != std::string_view::npos) {
    hash = std::string(s.substr(at + 1));
    s = s.substr(0, at);
    if (hash.size() != 16 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw bad(cat("\"@", hash, "\" after the seed must be an inputs file's hash, 16 lowercase hex digits"));
  }
  if (s.size() < 2 || s[0] != 's' || s.find_first_of("0123456789") == std::string_view::npos)
    throw bad(cat("the last segment \"", s, "\" must be s<seed>"));
  auto r = std::from_chars(s.data() + 1, s.data() + s.size(), parts.seed);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) throw bad(cat("seed \"", s.substr(1), "\" is not an integer"));
  Case c = make_valid_case(parts);
  if (!hash.empty()) {
    auto src = std::make_shared<InputSource>();
    src->hash = hash;
    c.source = std::move(src);
  }
  return c;
}

Case with_source(Case c, std::shared_ptr<const InputSource> source) {
  if (!source) return c;
  if (c.source && c.source->hash != source->hash)
    throw InputError(cat("case ", c.id(), " ran on the inputs file with hash ", c.source->hash, "; ", source->path, " has hash ",
                         source->hash));
  c.source = std::move(source);
  return c;
}

}  // namespace attnbench
