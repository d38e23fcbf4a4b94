#include "args.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include "attnbench/error.h"

namespace attnbench::cli {

Args::Args(const std::vector<FlagSpec>& specs, const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == name) spec = &s;
    if (!spec) {
      std::string known;
      for (const auto& s : specs) known += (known.empty() ? "--" : ", --") + s.name;
      throw InputError(cat("unknown option --", name, "; accepted: ", known));
    }
    if (spec->takes_value && !inline_value) {
      if (i + 1 >= argv.size()) throw InputError(cat("--", name, " needs a value"));
      value = argv[++i];
    }
    if (!spec->takes_value && inline_value) throw InputError(cat("--", name, " takes no value"));
    if (!spec->repeatable && values_.count(name)) throw InputError(cat("--", name, " given twice"));
    values_[name].push_back(value);
  }
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

const std::vector<std::string>& Args::all(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = values_.find(name);
  return it == values_.end() ? none : it->second;
}

int Args::get_int(const std::string& name, int fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end) throw InputError(cat("--", name, " ", v, " is not an integer"));
  if (errno == ERANGE || x < INT_MIN || x > INT_MAX) throw InputError(cat("--", name, " ", v, " is out of range"));
  return static_cast<int>(x);
}

double Args::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(x)) throw InputError(cat("--", name, " ", v, " is not a finite number"));
  return x;
}

std::string flags_help(const std::vector<FlagSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string left = "  --" + s.name + (s.takes_value ? " VALUE" : "");
    if (left.size() < 26) left.resize(26, ' ');
    out += left + " " + s.help + "\n";
  }
  return out;
}

}  // namespace attnbench::cli
