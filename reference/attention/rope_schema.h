// The rotary-embedding parameters two kinds of method take, and what they give: rope's own (no
// prefix: layout, partial_rotary, base, ...) and the attention methods' fused ones (prefix "rope_",
// off by default: rope_layout=none). One schema, one frequency table and one rotation, so the
// standalone method and the fused parameter cannot drift apart.
#pragma once

#include <string>
#include <vector>

#include "attnbench/dtype.h"
#include "attnbench/params.h"
#include "attnbench/tensor.h"

namespace attnbench::rope {

// The prefix of the fused rope's parameters on the methods that take it (rope_layout, rope_base, ...).
inline const std::string kFusedPrefix = "rope_";

// Adds the parameters under `prefix`; `width` names the parameter holding the rotated rows' width.
// fused: the layout gains "none" (the default), a `positions` choice is added (contiguous or
// scattered keys), and every parameter is left out of case ids while at its default, so the cases
// recorded before it keep their ids.
void add_rope_schema(ParamSchema& schema, const std::string& prefix, bool fused, const std::string& width = "head_dim");

// Whether a fused rope is on (prefix's layout is not "none").
bool rope_on(const Params& p, const std::string& prefix);
// ⌊head_dim·partial_rotary⌋ rounded down to even (0 when off).
int32_t rotary_dim_of(const Params& p, const std::string& prefix, int64_t head_dim);
bool interleaved_of(const Params& p, const std::string& prefix);
// YaRN's mscale on the rotated dims (1 for the other scalings).
float attention_factor_of(const Params& p, const std::string& prefix);
// θ_f for f in [0, r/2) after the scaling, in fp64 (rope.cpp's header gives the formulas).
std::vector<double> rope_frequencies(const Params& p, const std::string& prefix, int32_t r);
// The inv_freq input: θ_f in f32, [max(1, r/2)] (one unused element when nothing rotates).
HostTensor inv_freq_tensor(const std::vector<double>& theta, int32_t r);

// One row of `d` elements rotated at position p by the pairs of its first r dims, in fp64 (out)
// and as every kernel forms it (base: fp32 angle fl32(p·θ_f), fp32 cos, sin and products, the
// result rounded to `dtype`).
struct Rotation {
  int32_t r;
  bool interleaved;
  float factor;
  const float* theta;  // inv_freq, [r/2]
};
void rotate_row(const Rotation& rot, float p, const double* in, double* out, int64_t d);
void rotate_row_base(const Rotation& rot, float p, const float* in, double* out, int64_t d, DType dtype);

}  // namespace attnbench::rope
