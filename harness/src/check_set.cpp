#include "attnbench/check_set.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnbench/check.h"
#include "attnbench/error.h"

namespace attnbench {

namespace {

// The valid entries of row r of an index output [rows, capacity].
std::vector<int64_t> row_indices(const HostTensor& idx, const HostTensor& len, int64_t r, int64_t capacity) {
  const auto n = static_cast<int64_t>(len.get(r));
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(idx.get(r * capacity + i));
  return out;
}

OutputCheck failing(const OutputDecl& d, std::string msg, Json metrics) {
  return OutputCheck{d.name, d.cls, false, std::move(msg), std::move(metrics)};
}

}  // namespace

OutputCheck check_set(const OutputDecl& d, const HostTensor& ref, const HostTensor& ref_len, const HostTensor& got,
                      const HostTensor& got_len, const HostTensor& scores, const TieBand& band) {
  const int64_t capacity = d.shape.back();
  const int64_t rows = got.numel() / capacity;
  const int64_t n = scores.shape().back();
  ATTNBENCH_ASSERT(scores.numel() == rows * n, d.name, ": scores do not match the index rows");
  ATTNBENCH_ASSERT(static_cast<int64_t>(band.c_rel.size()) == rows, d.name, ": one c_rel per row");
  const Shape row_shape(d.shape.begin(), d.shape.end() - 1);

  int64_t swaps = 0, cap = 0, in_band = 0, compared = 0;
  double widest_band = 0, widest_abs = 0;  // relative to s_k, and absolute, for the record
  Json m = Json::object();
  const auto metrics = [&] {
    m["n_tie_swaps"] = swaps;
    m["max_tie_swaps"] = cap;
    m["n_in_band"] = in_band;
    m["widest_band_rel"] = widest_band;
    m["widest_band_abs"] = widest_abs;
    m["compared_rows"] = compared;
    return m;
  };
  std::vector<char> in_ref(n), in_got(n);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<int64_t> rs = row_indices(ref, ref_len, r, capacity);
    const std::vector<int64_t> gs = row_indices(got, got_len, r, capacity);
    const std::string where = index_str(row_shape, r);
    if (rs.size() != gs.size())
      return failing(d, cat("row ", where, " keeps ", gs.size(), " indices, the reference ", rs.size()), metrics());
    std::fill(in_ref.begin(), in_ref.end(), 0);
    std::fill(in_got.begin(), in_got.end(), 0);
    for (int64_t j : rs) in_ref[j] = 1;
    for (int64_t j : gs) {
      if (j < 0 || j >= n) return failing(d, cat("row ", where, " keeps index ", j, ", outside [0, ", n, ")"), metrics());
      in_got[j] = 1;
    }
    const double* s = scores.data<double>() + r * n;
    // s_k: the lowest reference score kept among candidates; the row maximum over candidates.
    double s_k = INFINITY, s_max = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (std::isinf(s[j])) continue;
      s_max = std::max(s_max, std::fabs(s[j]));
      if (in_ref[j]) s_k = std::min(s_k, s[j]);
    }
    ++compared;
    const bool any_candidate_kept = !std::isinf(s_k);
    const double width = any_candidate_kept ? kEpsF32 * (band.c_rel[r] * std::fabs(s_k) + band.c_abs * s_max) : 0.0;
    if (any_candidate_kept && s_k != 0) widest_band = std::max(widest_band, width / std::fabs(s_k));
    widest_abs = std::max(widest_abs, width);
    const auto within = [&](int64_t j) { return any_candidate_kept && !std::isinf(s[j]) && std::fabs(s[j] - s_k) <= width; };
    int64_t band_kept = 0, band_dropped = 0, row_swaps = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (within(j)) {
        ++in_band;
        (in_ref[j] ? band_kept : band_dropped) += 1;
      }
      if (in_ref[j] == in_got[j]) continue;
      if (std::isinf(s[j]))
        return failing(d, cat("row ", where, ": index ", j, " is always kept, but the ", in_ref[j] ? "impl" : "reference",
                              " dropped it"), metrics());
      if (!within(j))
        return failing(d, cat("row ", where, ": index ", j, " (score ", short_num(s[j]), ") is ",
                              in_got[j] ? "kept by the impl, dropped by the reference" : "dropped by the impl, kept by the reference",
                              "; threshold ", short_num(s_k), ", tie band ", short_num(width)), metrics());
      if (in_got[j]) ++row_swaps;
    }
    swaps += row_swaps;
    const int64_t row_cap = std::min(band_kept, band_dropped);
    cap += row_cap;
    // Implied by the band (a swap pairs an in-band kept with an in-band dropped candidate); checked
    // so the record states it.
    if (row_swaps > row_cap)
      return failing(d, cat("row ", where, ": ", row_swaps, " tie swaps exceed the ", row_cap, " possible in the band"),
                     metrics());
  }
  return OutputCheck{d.name, d.cls, true, "", metrics()};
}

OutputCheck check_gather(const OutputDecl& d, const HostTensor& source, const HostTensor& idx, const HostTensor& len,
                         const HostTensor& got) {
  ATTNBENCH_ASSERT(source.dtype() == got.dtype(), d.name, ": gather source and output dtypes differ");
  const int64_t rows = len.numel();
  const int64_t capacity = idx.numel() / rows;
  const int64_t n = source.shape()[len.shape().size()];
  const int64_t inner = got.numel() / (rows * capacity);
  ATTNBENCH_ASSERT(source.numel() == rows * n * inner, d.name, ": gather source does not match the output rows");
  const size_t es = dtype_size(got.dtype());
  int64_t mismatches = 0, first = -1;
  for (int64_t r = 0; r < rows; ++r) {
    const auto length = static_cast<int64_t>(len.get(r));
    for (int64_t i = 0; i < length; ++i) {
      const auto j = static_cast<int64_t>(idx.get(r * capacity + i));
      if (j < 0 || j >= n) continue;  // check_set reports an index out of range
      const std::byte* want = source.raw() + static_cast<size_t>((r * n + j) * inner) * es;
      const std::byte* have = got.raw() + static_cast<size_t>((r * capacity + i) * inner) * es;
      if (std::memcmp(want, have, inner * es) != 0) {
        if (first < 0) first = (r * capacity + i) * inner;
        ++mismatches;
      }
    }
  }
  OutputCheck o{d.name, d.cls, mismatches == 0, "", Json::object()};
  o.metrics["gather_mismatches"] = mismatches;
  if (mismatches)
    o.message = cat(mismatches, " rows differ from the input gathered at the impl's own indices; first at ",
                    index_str(d.shape, first));
  return o;
}

}  // namespace attnbench
