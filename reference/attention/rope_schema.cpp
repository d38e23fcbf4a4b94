// The rotary-embedding parameters and frequencies (rope_schema.h); the formulas and every choice
// behind them are in rope.cpp's header.
#include "rope_schema.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "attnbench/error.h"
#include "rope_common.h"

namespace attnbench::rope {

void add_rope_schema(ParamSchema& schema, const std::string& x, bool fused, const std::string& width) {
  const bool hide = fused;
  std::vector<std::string> layouts = {"half", "interleaved"};
  if (fused) layouts.insert(layouts.begin(), "none");
  schema.add({x + "layout", ParamType::String, Value(std::string(fused ? "none" : "half")), {}, {}, {}, layouts,
              fused ? "rotary embedding of q and k inside the attention (FlashInfer's pos_encoding_mode): none (off), "
                      "half (NeoX/Llama pairs f, f + r/2) or interleaved (GPT-J pairs 2f, 2f + 1)"
                    : "half: NeoX/Llama pairs (f, f + r/2); interleaved: GPT-J pairs (2f, 2f + 1)",
              hide});
  schema.add({x + "partial_rotary", ParamType::Float, Value(1.0), {}, 0.0, 1.0, {},
              "fraction of head_dim rotated (HF partial_rotary_factor); 0 rotates nothing", hide});
  schema.add({x + "base", ParamType::Float, Value(10000.0), {}, 1.0, 1e9, {}, "RoPE base (HF rope_theta)", hide});
  schema.add({x + "scaling", ParamType::String, Value(std::string("none")), {}, {}, {}, {"none", "linear", "ntk", "yarn"},
              "frequency remap for longer contexts", hide});
  schema.add({x + "factor", ParamType::Float, Value(1.0), {}, 1.0, 1e4, {}, "context extension factor of the scaling", hide});
  schema.add({x + "original_max_position", ParamType::Int, Value(int64_t{4096}), {}, 1.0, 1e8, {},
              "YaRN: the context the model was trained on", hide});
  schema.add({x + "beta_fast", ParamType::Float, Value(32.0), {}, 1e-3, 1e4, {}, "YaRN: rotations where the ramp starts", hide});
  schema.add({x + "beta_slow", ParamType::Float, Value(1.0), {}, 1e-3, 1e4, {}, "YaRN: rotations where it ends", hide});
  if (fused)
    schema.add({x + "positions", ParamType::String, Value(std::string("contiguous")), {}, {}, {}, {"contiguous", "scattered"},
                "with " + x + "layout: key j at position j, or distinct seeded positions in order below 2·kv_len (the keys "
                "an eviction kept); a query sits at its own key's position",
                true});
  schema.rule(x + "scaling=ntk: rotary dims > 2", [x, width](const Params& p, const std::string&) -> std::string {
    if (!rope_on(p, x) || p.str(x + "scaling") != "ntk" || rotary_dim_of(p, x, p.i64(width)) > 2) return {};
    return x + "scaling=ntk needs more than 2 rotary dims (its exponent is r/(r − 2))";
  });
  schema.rule(x + "beta_fast > " + x + "beta_slow", [x](const Params& p, const std::string&) -> std::string {
    if (!rope_on(p, x) || p.f64(x + "beta_fast") > p.f64(x + "beta_slow")) return {};
    return "YaRN's ramp needs " + x + "beta_fast > " + x + "beta_slow";
  });
}

bool rope_on(const Params& p, const std::string& x) { return p.str(x + "layout") != "none"; }

int32_t rotary_dim_of(const Params& p, const std::string& x, int64_t head_dim) {
  if (!rope_on(p, x)) return 0;
  const auto r = static_cast<int32_t>(std::floor(static_cast<double>(head_dim) * p.f64(x + "partial_rotary")));
  return r / 2 * 2;
}

bool interleaved_of(const Params& p, const std::string& x) { return p.str(x + "layout") == "interleaved"; }

float attention_factor_of(const Params& p, const std::string& x) {
  const double factor = p.f64(x + "factor");
  return p.str(x + "scaling") == "yarn" && factor > 1.0 ? static_cast<float>(0.1 * std::log(factor) + 1.0) : 1.0f;
}

std::vector<double> rope_frequencies(const Params& p, const std::string& x, int32_t r) {
  std::vector<double> theta(r / 2);
  const double base = p.f64(x + "base"), factor = p.f64(x + "factor");
  const std::string& scaling = p.str(x + "scaling");
  const double b = scaling == "ntk" ? base * std::pow(factor, static_cast<double>(r) / (r - 2)) : base;
  for (int32_t f = 0; f < r / 2; ++f) theta[f] = std::pow(b, -2.0 * f / r);
  if (scaling == "linear")
    for (double& t : theta) t /= factor;
  if (scaling == "yarn") {
    const double L = static_cast<double>(p.i64(x + "original_max_position"));
    const auto dim_of = [&](double beta) { return r * std::log(L / (beta * 2 * std::numbers::pi)) / (2 * std::log(base)); };
    const double low = std::max(0.0, std::floor(dim_of(p.f64(x + "beta_fast"))));
    double high = std::min(static_cast<double>(r - 1), std::ceil(dim_of(p.f64(x + "beta_slow"))));
    if (high == low) high += 0.001;
    for (int32_t f = 0; f < r / 2; ++f) {
      const double ramp = std::clamp((f - low) / (high - low), 0.0, 1.0), interp = theta[f] / factor;
      theta[f] = interp + (theta[f] - interp) * (1.0 - ramp);
    }
  }
  return theta;
}

HostTensor inv_freq_tensor(const std::vector<double>& theta, int32_t r) {
  HostTensor f("inv_freq", DType::f32, {std::max<int64_t>(1, r / 2)});
  f.fill(0.0);
  for (size_t i = 0; i < theta.size(); ++i) f.set(static_cast<int64_t>(i), theta[i]);
  return f;
}

namespace {
RopeParams pairs_of(const Rotation& rot) {
  RopeParams s{};
  s.rotary_dim = rot.r;
  s.interleaved = rot.interleaved;
  return s;
}
}  // namespace

void rotate_row(const Rotation& rot, float p, const double* in, double* out, int64_t d) {
  const RopeParams s = pairs_of(rot);
  for (int x = 0; x < d; ++x) {
    if (x >= rot.r) {
      out[x] = in[x];
      continue;
    }
    const auto a = static_cast<double>(p * rot.theta[pair_of(s, x)]);  // the angle: fl32(p·θ_f)
    out[x] = rot.factor * (in[x] * std::cos(a) + sine_sign(s, x) * in[partner_of(s, x)] * std::sin(a));
  }
}

void rotate_row_base(const Rotation& rot, float p, const float* in, double* out, int64_t d, DType dtype) {
  const RopeParams s = pairs_of(rot);
  for (int x = 0; x < d; ++x) {
    if (x >= rot.r) {
      out[x] = in[x];
      continue;
    }
    const float a = p * rot.theta[pair_of(s, x)];
    const float v = rot.factor * (in[x] * std::cos(a) + sine_sign(s, x) * in[partner_of(s, x)] * std::sin(a));
    out[x] = round_to(dtype, v);
  }
}

}  // namespace attnbench::rope
