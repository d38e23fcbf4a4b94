// `attnbench list --markdown`: the method catalog (docs/methods.md), written from the registry so
// it cannot drift from the specs: info(), schema() with its rules, outputs() of a case made from
// the defaults, and the impls registered per backend.
#include <cmath>
#include <cstring>
#include <sstream>

#include "attnbench/cases.h"
#include "attnbench/markdown.h"
#include "attnbench/registry.h"
#include "verbs.h"

namespace attnbench::cli {
namespace {

// The source tree's root, from this file's own path, so paths in the page are the same in every
// checkout and build folder.
std::string source_root() {
  const std::string self = __FILE__;
  const char* tail = "harness/cli/method_catalog.cpp";
  const size_t n = std::strlen(tail);
  if (self.size() >= n && self.compare(self.size() - n, n, tail) == 0) return self.substr(0, self.size() - n);
  return "";
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + s + "`"; }

std::string join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? sep : "") + xs[i];
  return out;
}

std::string dtypes_str(const std::vector<DType>& ts) {
  std::vector<std::string> names;
  for (DType t : ts) names.emplace_back(dtype_name(t));
  return join(names, ", ");
}

// A bound as the parameter's own type writes it: integers in full, numbers in shortest form.
std::string bound_str(const ParamSpec& p, double b) {
  const bool integral = p.type == ParamType::Int || p.type == ParamType::IntList;
  if (integral && std::fabs(b) < 9e15) return value_str(Value(static_cast<int64_t>(b)));
  return value_str(Value(b));
}

std::string bounds_str(const ParamSpec& p) {
  if (!p.choices.empty()) {
    std::vector<std::string> cs;
    for (const auto& c : p.choices) cs.push_back(code(c));
    return join(cs, ", ");
  }
  std::string s;
  if (p.min && p.max) s = bound_str(p, *p.min) + " … " + bound_str(p, *p.max);
  else if (p.min) s = "≥ " + bound_str(p, *p.min);
  else if (p.max) s = "≤ " + bound_str(p, *p.max);
  if (!s.empty() && (p.type == ParamType::IntList || p.type == ParamType::FloatList)) s = "each " + s;
  return s;
}

std::string default_str(const ParamSpec& p) {
  std::string s = p.default_value ? code(value_str(*p.default_value)) : "required";
  std::vector<std::string> by_phase;
  for (const auto& [phase, v] : p.phase_defaults) by_phase.push_back(phase + ": " + code(value_str(v)));
  if (!by_phase.empty()) s += " (" + join(by_phase, "; ") + ")";
  return s;
}

// The value a required parameter takes in the page's outputs case: its minimum where that is at
// least 1, else 1 (within its maximum); false, the first choice, or a one-element list.
Value stand_in(const ParamSpec& p) {
  double x = p.min && *p.min >= 1 ? *p.min : 1.0;
  if (p.max && x > *p.max) x = *p.max;
  switch (p.type) {
    case ParamType::Int: return Value(static_cast<int64_t>(x));
    case ParamType::Float: return Value(x);
    case ParamType::Bool: return Value(false);
    case ParamType::String: return Value(p.choices.empty() ? std::string() : p.choices.front());
    case ParamType::IntList: return Value(IntList{static_cast<int64_t>(x)});
    case ParamType::FloatList: return Value(FloatList{x});
  }
  return Value(int64_t{1});
}

std::string number_str(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return value_str(Value(static_cast<int64_t>(v)));
  return value_str(Value(v));
}

std::string layout_str(const OutputDecl& d) {
  if (d.length.empty()) return "dense";
  std::string s = "length " + code(d.length) + " along axis " + std::to_string(d.ragged_axis);
  if (d.pad) s += ", pad " + code(number_str(*d.pad));
  if (d.order == Order::ascending) s += ", ascending";
  return s;
}

void method_section(std::ostream& o, const Method& m, const std::vector<std::string>& backends, const std::string& root) {
  const MethodInfo& info = m.info();
  const ParamSchema& schema = m.schema();
  const auto relative = [&](const std::string& path) {
    return !root.empty() && path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
  };
  o << "### " << info.name << "\n\n";
  o << "**" << info.catalog_id << "** — " << info.summary << "\n\n";
  o << "- Paper: " << info.paper << "\n";
  o << "- Spec version: " << info.spec_version << "\n";
  o << "- Phases: " << (info.phases.empty() ? std::string("none (the case id has no phase)") : join(info.phases, ", ")) << "\n";
  o << "- Dtypes: " << dtypes_str(info.dtypes) << "\n";
  o << "- Spec: `" << relative(registry().method_source(info.name)) << "`\n\n";

  o << "#### Parameters\n\n";
  o << markdown_row({"name", "type", "default", "bounds / choices", "meaning"}) << markdown_rule(5);
  for (const ParamSpec& p : schema.specs())
    o << markdown_row({code(p.name), std::string(param_type_name(p.type)), default_str(p), bounds_str(p), p.doc});
  o << "\n";
  if (!schema.rules().empty()) {
    o << "Rules:\n\n";
    for (const Rule& r : schema.rules()) o << "- `" << r.text << "`\n";
    o << "\n";
  }

  // The outputs of a case from the defaults, in the first phase; once per dtype, to tell an
  // output that follows the case dtype from one of a fixed dtype.
  CaseParts parts;
  parts.method = info.name;
  parts.phase = info.phases.empty() ? "" : info.phases.front();
  std::vector<std::string> stand_ins;
  for (const ParamSpec& p : schema.specs()) {
    if (p.default_value || p.phase_defaults.count(parts.phase)) continue;
    parts.params[p.name] = stand_in(p);
    stand_ins.push_back(code(p.name + "=" + value_str(parts.params[p.name])));
  }
  std::vector<std::vector<OutputDecl>> per_dtype;
  Case first;
  for (DType t : info.dtypes) {
    parts.dtype = std::string(dtype_name(t));
    const Case c = build_case(parts);
    if (per_dtype.empty()) first = c;
    per_dtype.push_back(m.outputs(c));
  }
  o << "#### Outputs\n\n";
  o << "Declared for `" << first.id() << "`: every parameter at its default";
  if (!stand_ins.empty()) o << ", and the required ones without a default at a stand-in, " << join(stand_ins, ", ");
  o << ".\n\n";
  o << markdown_row({"name", "dtype", "check", "length / pad", "meaning"}) << markdown_rule(5);
  for (size_t i = 0; i < per_dtype.front().size(); ++i) {
    const OutputDecl& d = per_dtype.front()[i];
    bool follows = info.dtypes.size() > 1;
    for (size_t k = 0; k < per_dtype.size() && follows; ++k)
      follows = i < per_dtype[k].size() && per_dtype[k][i].dtype == info.dtypes[k];
    o << markdown_row({code(d.name) + (d.check_only ? " (check-only)" : ""),
                       follows ? std::string("case dtype") : std::string(dtype_name(d.dtype)), std::string(check_class_name(d.cls)),
                       layout_str(d), d.doc});
  }
  o << "\n";

  o << "#### Impls\n\n";
  o << markdown_row({"backend", "variant", "source"}) << markdown_rule(3);
  for (const auto& b : backends) {
    const auto impls = registry().impls(info.name, b);
    if (impls.empty()) o << markdown_row({b, "—", "none: its rows are `unsupported`"});
    for (const ImplEntry* e : impls) o << markdown_row({b, code(e->variant), code(relative(e->source_file))});
  }
  o << "\n";
}

}  // namespace

std::string method_catalog_markdown() {
  const std::string root = source_root();
  std::vector<std::string> backends;
  for (const auto& b : registry().backends()) backends.push_back(b.name);
  const std::vector<const Method*> methods = registry().methods();  // by family, then name

  std::ostringstream o;
  o << "<!-- Generated by `attnbench list --markdown`; do not edit by hand. Regenerate: "
       "build/release/attnbench list --markdown > docs/methods.md -->\n";
  o << "# Methods\n\n";
  o << "Every method of this build, as its spec in `reference/` declares it (info, parameter schema "
       "and rules, output declarations) and with the impls each backend registers. Generated by "
       "`attnbench list --markdown`; a test fails when this page and the registry disagree. "
       "A method declares its outputs per case: each table below is for the case it names (the "
       "first phase and dtype, parameters at their defaults; a required parameter without one takes "
       "a stand-in, its minimum or 1), and the spec file's header says how they vary. \"case dtype\" "
       "is an output stored in the case's dtype; a ragged output is valid up to its length tensor "
       "along the named axis and holds the pad beyond. Check classes: docs/methodology.md; adding a "
       "method: docs/adding-a-method.md.\n\n";
  o << "Backends: " << join(backends, ", ") << ".\n\n";
  std::vector<std::pair<std::string, std::vector<std::string>>> families;
  for (const Method* m : methods) {
    if (families.empty() || families.back().first != m->info().family) families.push_back({m->info().family, {}});
    families.back().second.push_back("[" + m->info().name + "](#" + m->info().name + ")");
  }
  for (const auto& [name, links] : families) o << "- " << name << ": " << join(links, ", ") << "\n";
  o << "\n";
  std::string family;
  for (const Method* m : methods) {
    if (m->info().family != family) {
      family = m->info().family;
      o << "## " << family << "\n\n";
    }
    method_section(o, *m, backends, root);
  }
  std::string text = o.str();
  while (text.size() >= 2 && text[text.size() - 1] == '\n' && text[text.size() - 2] == '\n') text.pop_back();
  return text;
}

}  // namespace attnbench::cli
