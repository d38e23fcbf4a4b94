#include "attnbench/plan.h"

#include <algorithm>

#include <re2/re2.h>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/hash.h"
#include "attnbench/interrupt.h"
#include "attnbench/method.h"

namespace attnbench {

Shard Shard::parse(const std::string& text) {
  Shard s;
  const size_t slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("");
    size_t used = 0;
    s.index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("");
    s.count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw InputError(cat("--shard \"", text, "\" is not i/N"));
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count)
    throw InputError(cat("--shard ", text, ": need 0 <= i < N"));
  return s;
}

bool Shard::contains(const std::string& case_id) const {
  return count == 1 || static_cast<int>(hash64(case_id) % static_cast<uint64_t>(count)) == index;
}

RunPlan plan_from_suite(const Suite& suite, const std::string& filter, const Shard& shard, bool with_related) {
  // RE2: linear in the id's length whatever the pattern ('((.*)*)*x' included), with a bounded
  // nesting depth and program size, so no filter can hang or crash a run.
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(filter.empty() ? std::string(".") : filter, options);
  if (!re.ok()) throw InputError(cat("--filter \"", filter, "\" is not a valid regular expression: ", re.error()));
  RunPlan plan{suite.name, suite.path, suite.hash, {}};
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < suite.cases.size(); ++i) {
    const PlannedCase& pc = suite.cases[i];
    const std::string id = pc.c.id();
    if ((i & 1023) == 0) throw_if_interrupted();
    if (!RE2::PartialMatch(id, re) || !shard.contains(id)) continue;
    by_id[id] = plan.runs.size();
    plan.runs.push_back({pc, static_cast<int>(i), 0, {}, {}});
  }
  if (!with_related) return plan;
  // Baselines and companions, once each, placed after the first case that needs them.
  const size_t primaries = plan.runs.size();
  for (size_t k = 0; k < primaries; ++k) {
    if (!plan.runs[k].pc.skip_reason.empty()) continue;
    int rank = 0;
    const Case c = plan.runs[k].pc.c;
    std::vector<RelatedCase> related = c.method->companions(c);
    if (auto b = c.method->baseline(c)) related.insert(related.begin(), *b);
    for (const RelatedCase& r : related) {
      Case rc;
      try {
        rc = make_valid_case({r.method, r.phase, r.params, std::string(dtype_name(r.dtype)), c.seed});
      } catch (const InputError& e) {
        throw InputError(cat(c.method_name(), " declares a ", r.role, " case that is not valid: ", e.what()));
      }
      const std::string id = rc.id();
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        it = by_id.emplace(id, plan.runs.size()).first;
        plan.runs.push_back({{rc, "", -1}, plan.runs[k].index, ++rank, {}, {}});
      }
      std::vector<RelatedRef>& rel = plan.runs[k].related;
      auto same = std::find_if(rel.begin(), rel.end(), [&](const RelatedRef& x) { return x.role == r.role; });
      if (same != rel.end()) same->case_id = id;
      else rel.push_back({r.role, id});
      plan.runs[it->second].related_of.push_back({r.role, c.id()});
    }
  }
  return plan;
}

}  // namespace attnbench
