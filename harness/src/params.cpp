#include "attnbench/params.h"

#include <charconv>
#include <cmath>

#include "attnbench/error.h"

namespace attnbench {

std::string_view param_type_name(ParamType t) {
  switch (t) {
    case ParamType::Int: return "integer";
    case ParamType::Float: return "number";
    case ParamType::Bool: return "boolean";
    case ParamType::String: return "string";
    case ParamType::IntList: return "list of integers";
    case ParamType::FloatList: return "list of numbers";
  }
  return "?";
}

namespace {

std::string num_str(int64_t v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string num_str(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  return std::string(buf, r.ptr);
}

template <typename T>
std::optional<T> parse_num(std::string_view s) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <typename T>
std::optional<std::vector<T>> parse_list(std::string_view s) {
  std::vector<T> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t colon = s.find(':', start);
    auto v = parse_num<T>(s.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (colon == std::string_view::npos) return out;
    start = colon + 1;
  }
}

}  // namespace

std::string value_str(const Value& v) {
  struct Visit {
    std::string operator()(int64_t x) const { return num_str(x); }
    std::string operator()(double x) const { return num_str(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return x; }
    std::string operator()(const IntList& xs) const {
      std::string s;
      for (size_t i = 0; i < xs.size(); ++i) s += (i ? ":" : "") + num_str(xs[i]);
      return s;
    }
    std::string operator()(const FloatList& xs) const {
      std::string s;
      for (size_t i = 0; i < xs.size(); ++i) s += (i ? ":" : "") + num_str(xs[i]);
      return s;
    }
  };
  return std::visit(Visit{}, v);
}

std::optional<Value> parse_value(ParamType t, std::string_view text) {
  switch (t) {
    case ParamType::Int: if (auto v = parse_num<int64_t>(text)) return Value(*v); break;
    case ParamType::Float: if (auto v = parse_num<double>(text)) return Value(*v); break;
    case ParamType::Bool:
      if (text == "true") return Value(true);
      if (text == "false") return Value(false);
      break;
    case ParamType::String: return Value(std::string(text));
    case ParamType::IntList: if (auto v = parse_list<int64_t>(text)) return Value(*v); break;
    case ParamType::FloatList: if (auto v = parse_list<double>(text)) return Value(*v); break;
  }
  return std::nullopt;
}

// --- Params ------------------------------------------------------------------------------------

void Params::set(const std::string& name, Value v) {
  for (auto& [n, val] : items_)
    if (n == name) { val = std::move(v); return; }
  items_.emplace_back(name, std::move(v));
}

bool Params::has(const std::string& name) const {
  for (const auto& item : items_)
    if (item.first == name) return true;
  return false;
}

const Value& Params::at(const std::string& name) const {
  for (const auto& item : items_)
    if (item.first == name) return item.second;
  ATTNBENCH_ASSERT(false, "parameter \"", name, "\" is not in this case's schema");
  __builtin_unreachable();
}

int64_t Params::i64(const std::string& name) const { return std::get<int64_t>(at(name)); }
double Params::f64(const std::string& name) const {
  const Value& v = at(name);
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}
bool Params::flag(const std::string& name) const { return std::get<bool>(at(name)); }
const std::string& Params::str(const std::string& name) const { return std::get<std::string>(at(name)); }
const IntList& Params::ints(const std::string& name) const { return std::get<IntList>(at(name)); }

// --- ParamSchema -------------------------------------------------------------------------------

ParamSchema& ParamSchema::add(ParamSpec spec) {
  specs_.push_back(std::move(spec));
  return *this;
}

ParamSchema& ParamSchema::rule(std::string text, std::function<std::string(const Params&, const std::string&)> check) {
  rules_.push_back({std::move(text), std::move(check)});
  return *this;
}

const ParamSpec* ParamSchema::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

std::string ParamSchema::known_names() const {
  std::string out;
  for (size_t i = 0; i < specs_.size(); ++i) out += (i ? ", " : "") + specs_[i].name;
  return out;
}

namespace {
std::string bound_msg(const ParamSpec& s) {
  if (s.min && s.max) return cat("between ", num_str(*s.min), " and ", num_str(*s.max));
  if (s.min) return cat("at least ", num_str(*s.min));
  return cat("at most ", num_str(*s.max));
}
bool in_bounds(const ParamSpec& s, double x) { return !(s.min && x < *s.min) && !(s.max && x > *s.max); }
}  // namespace

Value ParamSchema::coerce(const ParamSpec& spec, const Value& given) const {
  const auto wrong = [&]() {
    return InputError(cat("parameter ", spec.name, "=", value_str(given), " is not a ",
                          param_type_name(spec.type)));
  };
  Value v;
  switch (spec.type) {
    case ParamType::Int:
      if (auto* i = std::get_if<int64_t>(&given)) v = *i;
      else if (auto* d = std::get_if<double>(&given); d && std::floor(*d) == *d && std::fabs(*d) < 9e15)
        v = static_cast<int64_t>(*d);
      else throw wrong();
      break;
    case ParamType::Float:
      if (auto* i = std::get_if<int64_t>(&given)) v = static_cast<double>(*i);
      else if (auto* d = std::get_if<double>(&given)) v = *d;
      else throw wrong();
      break;
    case ParamType::Bool:
      if (!std::holds_alternative<bool>(given)) throw wrong();
      v = given;
      break;
    case ParamType::String: {
      auto* s = std::get_if<std::string>(&given);
      if (!s) throw wrong();
      if (!spec.choices.empty()) {
        bool ok = false;
        std::string list;
        for (const auto& c : spec.choices) { ok |= (c == *s); list += (list.empty() ? "" : ", ") + c; }
        if (!ok) throw InputError(cat("parameter ", spec.name, "=\"", *s, "\" is not accepted; choices: ", list));
      }
      v = given;
      break;
    }
    case ParamType::IntList:
      if (auto* l = std::get_if<IntList>(&given)) v = *l;
      else throw wrong();
      break;
    case ParamType::FloatList:
      if (auto* l = std::get_if<FloatList>(&given)) v = *l;
      else if (auto* li = std::get_if<IntList>(&given)) v = FloatList(li->begin(), li->end());
      else throw wrong();
      break;
  }
  const auto check_bound = [&](double x) {
    if (!in_bounds(spec, x))
      throw InputError(cat("parameter ", spec.name, "=", value_str(v), " is out of range: must be ", bound_msg(spec)));
  };
  if (auto* i = std::get_if<int64_t>(&v)) check_bound(static_cast<double>(*i));
  if (auto* d = std::get_if<double>(&v)) check_bound(*d);
  if (auto* l = std::get_if<IntList>(&v)) for (auto x : *l) check_bound(static_cast<double>(x));
  if (auto* l = std::get_if<FloatList>(&v)) for (auto x : *l) check_bound(x);
  return v;
}

Params ParamSchema::complete(const std::map<std::string, Value>& given, const std::string& phase) const {
  for (const auto& [name, v] : given)
    if (!find(name))
      throw InputError(cat("unknown parameter \"", name, "\"; known: ", known_names()));
  Params p;
  for (const auto& spec : specs_) {
    if (auto it = given.find(spec.name); it != given.end()) {
      p.set(spec.name, coerce(spec, it->second));
    } else if (auto pd = spec.phase_defaults.find(phase); pd != spec.phase_defaults.end()) {
      p.set(spec.name, pd->second);
    } else if (spec.default_value) {
      p.set(spec.name, *spec.default_value);
    } else {
      throw InputError(cat("parameter ", spec.name, " is required (", spec.doc, ")"));
    }
  }
  return p;
}

std::string ParamSchema::broken_rule(const Params& p, const std::string& phase) const {
  for (const auto& r : rules_) {
    const std::string what = r.check(p, phase);
    if (!what.empty()) return cat(what, " (rule: ", r.text, ")");
  }
  return {};
}

}  // namespace attnbench
