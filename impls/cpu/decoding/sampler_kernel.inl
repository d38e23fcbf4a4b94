// The sampler passes' bodies, compiled once per ISA (runtime/isa.h: ATTNBENCH_SIMD the float vector
// struct, ATTNBENCH_ISA this copy's namespace).

#include "sampler_kernel.h"

#include <algorithm>
#include <cmath>

namespace attnbench::cpu::sampler::ATTNBENCH_ISA {

using S = ATTNBENCH_SIMD;
using V = S::V;
constexpr int W = S::W;
static_assert(32 % W == 0, "a mask word is whole vectors");

// z = l / T and e = exp(z − m) of tokens [x, x + W) into z[], e[] (the tail padded with −inf).
inline void load_z(const float* l, int64_t x, int64_t V_, float T, float m, bool with_e, float* z, float* e) {
  alignas(64) float tail[W];
  const float* src = l + x;
  if (x + W > V_) {
    std::fill(tail, tail + W, -INFINITY);
    std::copy(l + x, l + V_, tail);
    src = tail;
  }
  const V zv = S::div(S::load(src), S::set1(T));
  S::store(z, zv);
  if (with_e) S::store(e, S::exp(S::sub(zv, S::set1(m))));
}

float row_max(const float* l, int64_t V_, int64_t* finite) {
  V best = S::set1(-INFINITY);
  int64_t x = 0, n = 0;
  for (; x + W <= V_; x += W) best = S::max(best, S::load(l + x));
  float m = S::hmax(best);
  for (; x < V_; ++x) m = std::max(m, l[x]);
  for (int64_t y = 0; y < V_; ++y) n += l[y] > -INFINITY;
  *finite = n;
  return m;
}

void count_buckets(const float* l, int64_t V_, float T, int32_t* counts) {
  alignas(64) float z[W];
  for (int64_t x = 0; x < V_; x += W) {
    load_z(l, x, V_, T, 0, false, z, nullptr);
    for (int i = 0; i < W; ++i)
      if (z[i] > -INFINITY) ++counts[bucket_of(order_key(z[i]))];
  }
}

int64_t mass_buckets(const float* l, int64_t V_, float T, float m, int32_t low, int32_t gather, double* mass,
                     Token* out) {
  alignas(64) float z[W], e[W];
  int64_t n = 0;
  for (int64_t x = 0; x < V_; x += W) {
    load_z(l, x, V_, T, m, true, z, e);
    for (int i = 0; i < W; ++i) {
      if (!(z[i] > -INFINITY)) continue;
      const uint32_t key = order_key(z[i]);
      const int32_t b = bucket_of(key);
      if (b < low) continue;
      mass[b] += e[i];
      if (b == gather) out[n++] = {static_cast<int32_t>(x + i), key, z[i], e[i]};
    }
  }
  return n;
}

int64_t select(const float* l, int64_t V_, float T, float m, const Cut& cut, float* log_w, uint32_t* mask, Token* out) {
  alignas(64) float z[W], e[W];
  int64_t n = 0;
  uint32_t word = 0;
  for (int64_t x = 0; x < V_; x += W) {
    load_z(l, x, V_, T, m, true, z, e);
    for (int i = 0; i < W; ++i) {
      const int64_t t = x + i;
      bool keep = false;
      if (z[i] > -INFINITY) {
        const uint32_t key = order_key(z[i]);
        const int32_t b = bucket_of(key);
        if (key >= cut.key_k && b >= cut.top_p_bucket) {
          if (b == cut.top_p_bucket) out[n++] = {static_cast<int32_t>(t), key, z[i], e[i]};
          else keep = e[i] >= cut.min_e;
        }
      }
      if (t < V_) log_w[t] = keep ? z[i] : -INFINITY;
      word |= static_cast<uint32_t>(keep) << (t % 32);
    }
    if ((x + W) % 32 == 0 || x + W >= V_) {
      mask[x / 32] = word;
      word = 0;
    }
  }
  return n;
}

void kept_moments(const float* log_w, int64_t V_, float m, float* e, double* z, double* s) {
  alignas(64) float tail[W], ev[W], dv[W];
  double zsum = 0, ssum = 0;
  for (int64_t x = 0; x < V_; x += W) {
    const float* src = log_w + x;
    if (x + W > V_) {
      std::fill(tail, tail + W, -INFINITY);
      std::copy(log_w + x, log_w + V_, tail);
      src = tail;
    }
    const V d = S::sub(S::load(src), S::set1(m));
    S::store(dv, d);
    S::store(ev, S::exp(d));
    for (int i = 0; i < W && x + i < V_; ++i) {
      e[x + i] = ev[i];
      if (ev[i] > 0) zsum += ev[i], ssum -= static_cast<double>(ev[i]) * dv[i];  // e = 0 off the kept set: no NaN
    }
  }
  *z = zsum;
  *s = ssum;
}

}  // namespace attnbench::cpu::sampler::ATTNBENCH_ISA

namespace attnbench::cpu {
template <>
const sampler::Kernels& isa_kernels<sampler::Kernels, Isa::ATTNBENCH_ISA>() {
  static const sampler::Kernels table{&sampler::ATTNBENCH_ISA::row_max, &sampler::ATTNBENCH_ISA::count_buckets,
                                      &sampler::ATTNBENCH_ISA::mass_buckets, &sampler::ATTNBENCH_ISA::select,
                                      &sampler::ATTNBENCH_ISA::kept_moments};
  return table;
}
}  // namespace attnbench::cpu
