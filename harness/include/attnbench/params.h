// Typed parameter schemas and parameter values.
//
// A method declares its parameters once (name, type, default, bounds, one line of meaning) in
// schema order, plus cross-field rules written as text the user can read. Suites, case ids and
// the CLI all go through the same schema, so a value is parsed, defaulted and validated in one
// place. Shared names (docs/design.md "Cases and their ids"): batch, q_heads, kv_heads, head_dim,
// q_len, kv_len, causal, window, obs_window, budget, vocab, draft_len, draws.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace attnbench {

enum class ParamType { Int, Float, Bool, String, IntList, FloatList };
std::string_view param_type_name(ParamType t);

using IntList = std::vector<int64_t>;
using FloatList = std::vector<double>;
using Value = std::variant<int64_t, double, bool, std::string, IntList, FloatList>;

// Canonical text of a value, as it appears in case ids: numbers in shortest round-trip form,
// booleans true/false, lists a:b:c.
std::string value_str(const Value& v);
// Parses canonical text into a value of type t; nullopt when it does not parse.
std::optional<Value> parse_value(ParamType t, std::string_view text);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::Int;
  std::optional<Value> default_value;             // none: required
  std::map<std::string, Value> phase_defaults;    // default for one phase, e.g. decode: q_len=1
  std::optional<double> min, max;                 // bounds for numbers (and each list element)
  std::vector<std::string> choices;               // for strings
  std::string doc;                                // one line of meaning
  // Left out of case ids while it has its default: a parameter added to a method after its cases
  // were recorded keeps their ids (and cached references) valid.
  bool id_omits_default = false;
};

// Parameter values of one case, complete and in schema order.
class Params {
 public:
  void set(const std::string& name, Value v);
  bool has(const std::string& name) const;
  const Value& at(const std::string& name) const;  // asserts presence (a programming error)
  int64_t i64(const std::string& name) const;
  double f64(const std::string& name) const;       // ints widen
  bool flag(const std::string& name) const;
  const std::string& str(const std::string& name) const;
  const IntList& ints(const std::string& name) const;
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
  bool operator==(const Params& o) const { return items_ == o.items_; }

 private:
  std::vector<std::pair<std::string, Value>> items_;
};

// A cross-field rule: `text` is the rule as written ("q_heads % kv_heads == 0"); `check` returns
// an empty string when the rule holds, else what is wrong ("kv_heads=5 does not divide q_heads=32").
struct Rule {
  std::string text;
  std::function<std::string(const Params&, const std::string& phase)> check;
};

class ParamSchema {
 public:
  ParamSchema& add(ParamSpec spec);
  ParamSchema& rule(std::string text, std::function<std::string(const Params&, const std::string& phase)> check);

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const std::vector<Rule>& rules() const { return rules_; }
  const ParamSpec* find(const std::string& name) const;
  std::string known_names() const;  // "batch, q_heads, ..."

  // Converts a user-given value (from JSON or id text) to the declared type, with bounds and
  // choices checked. Throws InputError naming the parameter, the value and what is accepted.
  Value coerce(const ParamSpec& spec, const Value& given) const;
  // Completes `given` with defaults for `phase`, in schema order; unknown names, missing
  // required parameters and bad values throw InputError. Rules are not applied here.
  Params complete(const std::map<std::string, Value>& given, const std::string& phase) const;
  // The first broken rule as "what is wrong (rule: text)", or empty when all hold.
  std::string broken_rule(const Params& p, const std::string& phase) const;

 private:
  std::vector<ParamSpec> specs_;
  std::vector<Rule> rules_;
};

}  // namespace attnbench
