// The check classes (docs/design.md "Checks") as functions a method's check() composes. Thresholds and
// their derivations: docs/methodology.md.
//
//   TOL    floats:   err_impl ≤ 2·err_baseline + floor, err = max-abs against fp64
//   EXACT  integers: equal within the declared length
//   SET, SEMI, STAT: index sets with tie exchange, sampled tokens with boundary events,
//                    distribution tests (check_set / check_semi / check_stat, next to these)
//
// Every class fails on NaN within a declared length and on infinities that differ. Layout
// (lengths, pads, poison, order) is checked by check_layout before any class runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnbench/method.h"
#include "attnbench/tensor.h"

namespace attnbench {

// For one-line failure messages: the multi-index of a flat index ("[0,17,0,93]"), and a number in
// three significant digits.
std::string index_str(const Shape& shape, int64_t flat);
std::string short_num(double v);

// Poison written into every output before the checked run: a value no output may hold.
inline constexpr uint32_t kPoisonInt = 0xA5A5A5A5u;
void poison(HostTensor& t);  // NaN for floats, 0xA5.. for integers
bool is_poison(const HostTensor& t, int64_t i);

// Valid extent of a ragged output: for a flat index, whether it lies within its row's length.
class Extent {
 public:
  Extent(const OutputDecl& d, const HostTensor* lengths);  // lengths null: dense
  bool valid(int64_t flat_index) const;
  int64_t length_of(int64_t outer_index) const;  // outer = flat index over dims [0, ragged_axis)
  bool ragged() const { return lengths_ != nullptr; }

 private:
  const HostTensor* lengths_;
  int64_t inner_ = 1;   // elements per step along the ragged axis (product of later dims)
  int64_t axis_len_ = 1;
};

// Lengths within [0, capacity], pad beyond them, no NaN or poison within them, the declared order.
OutputCheck check_layout(const OutputDecl& d, const TensorMap& got);

// Which elements a check compares: all, or the rows of a sampled reference (Reference::checked_rows).
struct RowSelection {
  std::vector<int64_t> rows;  // empty: every element
  int64_t total_rows = 0;
  // Calls f(flat index) for every selected element of a tensor of n elements.
  template <typename F>
  void for_each(int64_t n, F&& f) const {
    if (rows.empty()) {
      for (int64_t i = 0; i < n; ++i) f(i);
      return;
    }
    const int64_t per_row = n / total_rows;
    for (int64_t r : rows)
      for (int64_t i = r * per_row; i < (r + 1) * per_row; ++i) f(i);
  }
};

// TOL: `ref` holds fp64 values, `got` the impl's output in its dtype.
OutputCheck check_tol(const OutputDecl& d, const HostTensor& ref, const HostTensor& got, double baseline_err,
                      const RowSelection& sel = {});
// The floor of the TOL gate for an output of dtype t whose largest reference magnitude is m.
double tol_floor(DType t, double max_abs_ref);
// The TOL gate itself, 2·baseline_err + tol_floor: what check_tol admits, and what a reference
// that marks decisions within the gate (boundary events) must use to stay in step with it.
double tol_gate(DType t, double baseline_err, double max_abs_ref);

// EXACT: equal values within the declared extent (lengths from `got`).
OutputCheck check_exact(const OutputDecl& d, const HostTensor& ref, const HostTensor& got, const HostTensor* lengths);

// Max-abs difference between a same-precision baseline output and the fp64 reference, over
// finite entries (infinities must match; the reference's own convention for empty rows).
double max_abs_diff(const HostTensor& ref, const HostTensor& other, const RowSelection& sel = {});

}  // namespace attnbench
