// Building cases from user-given parts, shared by suites, case ids and --rerun.
#pragma once

#include <map>
#include <string>

#include "attnbench/caseid.h"

namespace attnbench {

struct CaseParts {
  std::string method;
  std::string phase;
  std::map<std::string, Value> params;
  std::string dtype;   // "" -> the method's first dtype
  uint64_t seed = 1;
};

// Resolves the method, phase, dtype and parameters (defaults filled, types and bounds checked).
// Throws InputError for anything that can never be valid (unknown method, parameter or dtype,
// a wrong type). Rules are not applied: see rule_violation().
Case build_case(const CaseParts& parts);
// The first method rule the case breaks, including "dtype not defined for this method", as
// "what is wrong (rule: text)"; empty when the case is valid.
std::string rule_violation(const Case& c);
// build_case + rule_violation, throwing InputError when a rule is broken.
Case make_valid_case(const CaseParts& parts);

}  // namespace attnbench
