// Hand-made inputs for kivi (reference/kvcomp/kivi.cpp) that every backend's test runs: groups
// whose codes fall exactly on halves (each rounding mode decides them differently), flat groups
// (PRIM-QUANT's guard), and groups whose scale underflows f16 (two values 2^-24 apart: the scale
// rounds to 0 in f16, so the guard again; in bf16 a tiny scale). Sequence 0 has kv_len tokens,
// the others about half of it; every element past a sequence's length is NaN, as the method's
// own inputs.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnbench/caseid.h"
#include "attnbench/tensor.h"
#include "reference/kvcomp/kivi_common.h"
#include "support.h"

namespace attnbench::test {

inline const std::vector<std::string>& kivi_tie_cases() {
  static const std::vector<std::string> ids = {
      "kivi/prefill/batch=2,q_heads=2,kv_heads=2,head_dim=32,kv_len=40,group_size=16,residual=16/f16/s1",
      "kivi/prefill/batch=2,q_heads=2,kv_heads=2,head_dim=32,kv_len=40,group_size=16,residual=16,rounding=half_away/f16/s1",
      "kivi/prefill/batch=3,q_heads=3,kv_heads=3,head_dim=64,kv_len=70,bits=4,group_size=32,residual=32,rounding=half_away/bf16/s2",
      "kivi/prefill/batch=3,q_heads=3,kv_heads=3,head_dim=64,kv_len=70,bits=4,group_size=32,residual=32/bf16/s2",
  };
  return ids;
}

// Value i of a group numbered `group` (of any layout) for codes of `bits` bits.
inline double kivi_tie_value(int64_t group, int64_t i, int bits) {
  const int64_t top = (int64_t{1} << bits) - 1, h = i == 0 ? 0 : i == 1 ? 2 * top : (i * 7 + group) % (2 * top + 1);
  switch (group % 4) {
    case 0: return -1.25 + 0.125 * static_cast<double>(h);  // scale 0.25, codes h/2: odd h a tie
    case 1: return 0.75;                                     // flat
    case 2: return i % 2 ? std::ldexp(1.0, -24) : 0.0;       // f16: the scale underflows to 0
    default: return 2.0 + 0.5 * static_cast<double>(h);     // scale 1, codes h/2
  }
}

// k, v and kv_len of a kivi case: keys grouped per (sequence, head, channel, G tokens), values
// per (sequence, head, token, G channels).
inline TensorMap kivi_tie_inputs(const Case& c) {
  const kvcomp::KiviParams s = kvcomp::kivi_params(c);
  const int64_t B = s.batch, H = s.kv_heads, T = s.kv_cap, D = s.head_dim, G = s.group_size;
  HostTensor k("k", c.dtype, {B, H, T, D}), v("v", c.dtype, {B, H, T, D}), kv_len("kv_len", DType::i32, {B});
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = b == 0 ? T : T / 2 + b;
    kv_len.set(b, static_cast<double>(len));
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t x = 0; x < D; ++x) {
          const int64_t at = ((b * H + h) * T + t) * D + x;
          if (t >= len) {
            k.set(at, std::numeric_limits<double>::quiet_NaN());
            v.set(at, std::numeric_limits<double>::quiet_NaN());
            continue;
          }
          k.set(at, kivi_tie_value(((b * H + h) * D + x) * T / G + t / G, t % G, s.bits));
          v.set(at, kivi_tie_value(((b * H + h) * T + t) * D / G + x / G + 1, x % G, s.bits));
        }
  }
  TensorMap in;
  in.emplace("k", std::move(k));
  in.emplace("v", std::move(v));
  in.emplace("kv_len", std::move(kv_len));
  return in;
}

// The hand-made cases that do not pass on `variant` of `backend`: "<case id>: <status> <reason>".
inline std::vector<std::string> kivi_ties_not_passing(Backend& backend, const std::string& variant) {
  std::vector<std::string> bad;
  for (const std::string& id : kivi_tie_cases()) {
    const Case c = case_from_id(id);
    const std::string status = status_and_reason(check_with_inputs(c, kivi_tie_inputs(c), backend, variant));
    if (status != "pass ") bad.push_back(id + ": " + status);
  }
  return bad;
}

}  // namespace attnbench::test
