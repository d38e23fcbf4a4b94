#include "attnbench/check_semi.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"

namespace attnbench {

double race_margin(double k1, double k2) {
  if (k2 == -INFINITY) return k1 == -INFINITY ? 0.0 : INFINITY;
  return (k1 - k2) / std::max({1.0, std::fabs(k1), std::fabs(k2)});
}

double accept_margin(double u, double p, double q) {
  if (q == 0) return p > 0 ? -INFINITY : INFINITY;  // accept for certain / reject for certain
  const double ratio = p / q;
  return (u - ratio) / std::max(1.0, ratio);
}

bool race_is_boundary(double margin) { return std::fabs(margin) <= kRaceBoundaryC * kEpsF32; }
bool accept_is_boundary(double margin) { return std::fabs(margin) <= kAcceptBoundaryC * kEpsF32; }

OutputCheck check_semi(const OutputDecl& d, const HostTensor& ref, const HostTensor& ref_len, const HostTensor& got,
                       const HostTensor& got_len, const std::vector<int64_t>& cut) {
  const int64_t rows = ref_len.numel();
  const int64_t width = d.shape.back();
  ATTNBENCH_ASSERT(static_cast<int64_t>(cut.size()) == rows, d.name, ": one cut per row");
  int64_t boundary_rows = 0, excluded = 0, compared = 0, mismatches = 0, first = -1;
  std::string first_msg;
  for (int64_t r = 0; r < rows; ++r) {
    const auto rl = static_cast<int64_t>(ref_len.get(r)), gl = static_cast<int64_t>(got_len.get(r));
    const bool boundary = cut[r] < rl;
    int64_t end = rl;
    if (boundary) {
      ++boundary_rows;
      excluded += rl - cut[r];
      end = cut[r];
      if (gl <= cut[r] && first < 0) {
        first = r * width;
        first_msg = cat("row ", r, " stops at length ", gl, " before the boundary event at ", cut[r]);
      }
    } else if (gl != rl && first < 0) {
      first = r * width;
      first_msg = cat("row ", r, " has length ", gl, ", the reference ", rl, " (no boundary event)");
    }
    for (int64_t i = 0; i < std::min(end, gl); ++i) {
      ++compared;
      const int64_t at = r * width + i;
      if (ref.get(at) == got.get(at)) continue;
      ++mismatches;
      if (first < 0) {
        first = at;
        first_msg = cat("at ", index_str(d.shape, at), ": ", short_num(got.get(at)), " vs reference ",
                        short_num(ref.get(at)), " (not a boundary event)");
      }
    }
  }
  OutputCheck o{d.name, d.cls, first < 0, first_msg, Json::object()};
  o.metrics["n_boundary_cases"] = boundary_rows;
  o.metrics["excluded_positions"] = excluded;
  o.metrics["compared"] = compared;
  o.metrics["mismatches"] = mismatches;
  return o;
}

OutputCheck check_semi_counts(const OutputDecl& d, const HostTensor& ref, const HostTensor& got,
                              const std::vector<int64_t>& slack) {
  ATTNBENCH_ASSERT(static_cast<int64_t>(slack.size()) == ref.numel(), d.name, ": one slack per row");
  int64_t excluded = 0, loosened = 0, mismatches = 0, first = -1;
  for (int64_t r = 0; r < ref.numel(); ++r) {
    if (slack[r] < 0) {
      ++excluded;
      continue;
    }
    if (slack[r] > 0) ++loosened;
    if (std::fabs(got.get(r) - ref.get(r)) <= static_cast<double>(slack[r])) continue;
    ++mismatches;
    if (first < 0) first = r;
  }
  OutputCheck o{d.name, d.cls, mismatches == 0, "", Json::object()};
  o.metrics["excluded_rows"] = excluded;
  o.metrics["rows_with_slack"] = loosened;
  o.metrics["mismatches"] = mismatches;
  if (mismatches)
    o.message = cat(mismatches, " rows differ; first at ", index_str(d.shape, first), ": ", short_num(got.get(first)),
                    " vs reference ", short_num(ref.get(first)), " (allowed difference ", slack[first], ")");
  return o;
}

}  // namespace attnbench
