// What every backend's KV-selection impl shares: the bases in impls/<backend>/kvcomp/
// scored_selection_<backend>.h derive from ScoredSelectionImpl, whose supports() asks the
// backend's shared stages first, for a selection-only method its attention stage (the decode step
// over the kept set), and then, only for a case that ranks some candidates (scores_needed(c)), the
// method's scorer.
#pragma once

#include <string>

#include "attnbench/impl.h"
#include "scored_selection_common.h"

namespace attnbench::kvcomp {

class ScoredSelectionImpl : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const final {
    if (c.phase == "decode") return Support::no("phase decode is the step variant's (eviction_step_impl.h)");
    const SelectionParams s = selection_params(c);
    std::string why = stages_unsupported(s, limits);
    if (why.empty() && s.sparse_step) why = step_unsupported(c, limits);
    if (why.empty() && scores_needed(c)) why = unsupported(c, limits);
    return why.empty() ? Support::yes() : Support::no(why);
  }

 protected:
  // Why the backend's select, gather and pool stages cannot take the case ("" if they can).
  virtual std::string stages_unsupported(const SelectionParams& /*s*/, const DeviceLimits& /*limits*/) const {
    return {};
  }
  // A selection-only method's case (s.sparse_step): why the backend's attention stage cannot run
  // its decode step over the kept set (sparse_step.h; "" if it can).
  virtual std::string step_unsupported(const Case& /*c*/, const DeviceLimits& /*limits*/) const { return {}; }
  // Why the method's scorer cannot ("" if it can): its dtypes, grids, workspaces, shaders' limits.
  virtual std::string unsupported(const Case& /*c*/, const DeviceLimits& /*limits*/) const { return {}; }
};

}  // namespace attnbench::kvcomp
