// SEMI check class (docs/design.md "Checks"; derivation in docs/methodology.md "SET, SEMI and STAT"): sampled
// tokens and accept/reject decisions, equal to the reference's except at boundary events.
//
// Impls and the reference draw the same uniforms (rng.h), so their decisions agree unless a
// decision's fp64 margin is within what fp32 arithmetic may get wrong:
//   race        top two fp64 keys k1 ≥ k2 with k1 − k2 ≤ c_race·ε_fp32·max(1, |k1|, |k2|)
//   acceptance  |u − p/q| ≤ c_accept·ε_fp32·max(1, p/q)
// The method finds, per row, the position of the first boundary event on the reference's path
// (its "cut"); that position and the rest of the row are excluded and counted
// (n_boundary_cases).
#pragma once

#include <cstdint>
#include <vector>

#include "attnbench/method.h"
#include "attnbench/tensor.h"

namespace attnbench {

// Derived in methodology.md: a race key log w − log(−log u) computed in fp32 with logs accurate
// to 2 ulp, two keys per comparison; an acceptance test evaluated with up to two roundings, times two.
inline constexpr double kRaceBoundaryC = 144;
inline constexpr double kAcceptBoundaryC = 2;

// The normalised margins the reference records (check-only tensors) and their boundary tests.
double race_margin(double k1, double k2);         // (k1 − k2) / max(1, |k1|, |k2|); +inf when k2 = −inf
double accept_margin(double u, double p, double q);  // (u − p/q) / max(1, p/q); ∓inf when q = 0
bool race_is_boundary(double margin);
bool accept_is_boundary(double margin);

inline constexpr int64_t kNoCut = INT64_MAX;

// Sequences [rows, L] with length tensors [rows]. Row r is compared at positions below
// min(cut[r], ref length): equal values there. With no cut inside the reference's sequence the
// lengths must be equal; with a cut at position t (a boundary event decides the element at t),
// the impl's row must reach t (length > t) and the rest is not compared.
OutputCheck check_semi(const OutputDecl& d, const HostTensor& ref, const HostTensor& ref_len, const HostTensor& got,
                       const HostTensor& got_len, const std::vector<int64_t>& cut);

// Per-row counts [rows]: equal, except that row r may differ by at most slack[r] (the number of
// boundary events that can change it); slack −1 excludes the row.
OutputCheck check_semi_counts(const OutputDecl& d, const HostTensor& ref, const HostTensor& got,
                              const std::vector<int64_t>& slack);

}  // namespace attnbench
