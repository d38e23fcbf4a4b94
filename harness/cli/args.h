// A small command-line parser: flags declared per verb, `--name value` or `--name=value`,
// repeatable flags collected in order, positional arguments kept. Unknown flags are an
// InputError naming the accepted ones.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attnbench::cli {

struct FlagSpec {
  std::string name;   // without dashes
  bool takes_value;
  bool repeatable;
  std::string help;
};

class Args {
 public:
  Args(const std::vector<FlagSpec>& specs, const std::vector<std::string>& argv);
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& name) const;
  int get_int(const std::string& name, int fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

std::string flags_help(const std::vector<FlagSpec>& specs);

}  // namespace attnbench::cli
