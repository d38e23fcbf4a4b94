// What the tests of the decoding family's samplers share: a method's processed row for given
// probabilities, and the power twins of a sampler's distribution mode (STAT): a wrong sampler
// reports the right kept set but samples from another distribution (the softmax of its own
// processed row). The check must pass the right sampler, and the twin must be rejected at the
// case's n and α: its power, shown here, at least 0.99, and a run of it (the same uniforms)
// failing the check.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "attnbench/check_stat.h"
#include "attnbench/error.h"
#include "attnbench/rng.h"
#include "reference/decoding/race.h"
#include "reference/decoding/sampler.h"
#include "support.h"

namespace attnbench::test {

// The reference's row 0 of `method` for probabilities p (as logits log p), batch 1, vocab |p|.
inline decoding::ProcessedRow sampler_row(const std::string& method, const std::string& params, const std::vector<double>& p) {
  const Case c = method_case(method, cat("batch=1,vocab=", p.size(), ",", params));
  HostTensor logits("logits", DType::f32, {1, static_cast<int64_t>(p.size())});
  for (size_t x = 0; x < p.size(); ++x) logits.set(static_cast<int64_t>(x), std::log(p[x]));
  TensorMap in;
  in.emplace("logits", std::move(logits));
  return dynamic_cast<const decoding::Sampler&>(*c.method).process_row(c, in, 0);
}

// The indices of the set entries of a row's kept or boundary flags.
inline std::vector<int64_t> flagged(const std::vector<char>& bits) {
  std::vector<int64_t> v;
  for (size_t x = 0; x < bits.size(); ++x)
    if (bits[x]) v.push_back(static_cast<int64_t>(x));
  return v;
}

// A row to work processors out by hand on: its entropy is 1.2899 nats.
inline const std::vector<double> kFiveTokens = {0.5, 0.2, 0.2, 0.05, 0.05};

// The tokens the reference keeps, and those it marks as boundary ones, for probabilities p.
inline std::vector<int64_t> kept_by(const std::string& method, const std::string& params,
                                    const std::vector<double>& p = kFiveTokens) {
  return flagged(sampler_row(method, params, p).kept);
}
inline std::vector<int64_t> boundary_by(const std::string& method, const std::string& params,
                                        const std::vector<double>& p = kFiveTokens) {
  return flagged(sampler_row(method, params, p).boundary);
}

// The power at n draws of the chi-square test of `correct` against a twin that follows `alt`,
// printed with the twin's distance and the smallest n reaching 0.99, for the record.
inline double twin_power(const std::string& method, const char* name, const std::vector<double>& correct,
                         const std::vector<double>& alt, int64_t n) {
  double lo = 1, hi = static_cast<double>(n);
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (chi_square_power(correct, alt, mid, kStatAlpha) >= 0.99 ? hi : lo) = mid;
  }
  const double power = chi_square_power(correct, alt, static_cast<double>(n), kStatAlpha);
  std::printf("  %s twin \"%s\": TV %.4f, power %.6f at n = %lld (0.99 from n = %.0f)\n", method.c_str(), name,
              total_variation(correct, alt), power, static_cast<long long>(n), hi);
  return power;
}

// Case c: a sampler's distribution case (draws > 0); twin: the row the wrong sampler samples from.
inline void check_power_twin(const Case& c, const decoding::ProcessedRow& twin, const char* name) {
  using namespace decoding;
  INFO(name);
  const auto& m = dynamic_cast<const Sampler&>(*c.method);
  const int64_t n = c.i64("draws"), V = c.i64("vocab");
  const TensorMap in = m.inputs(c);
  const Reference ref = m.reference(c, in);
  TensorMap right;
  right.emplace("kept", ref.tensors.at("kept").clone());
  right.emplace("token", ref.tensors.at("token").clone());
  const CheckReport ok = m.check(c, in, ref, right);
  CHECK(ok.pass());
  CHECK(ok.outputs[1].cls == CheckClass::STAT);
  const std::vector<double> correct = kept_probabilities(m.process_row(c, in, 0)), alt = kept_probabilities(twin);
  CHECK(twin_power(m.info().name, name, correct, alt, n) >= 0.99);
  // Run it: the right kept mask, the twin's tokens (the same uniforms), and the check rejects.
  TensorMap got;
  got.emplace("kept", ref.tensors.at("kept").clone());
  HostTensor tokens("token", DType::i32, {n});
  const PhiloxStream draws(c.seed, kSampleRaceSite, kDomainDraws);
  std::vector<uint32_t> words;
  for (int64_t r = 0; r < n; ++r)
    tokens.set(r, static_cast<double>(race_log_weights(draws, static_cast<uint64_t>(r) * V, twin.z, words).token));
  got.emplace("token", std::move(tokens));
  CHECK_FALSE(m.check(c, in, ref, got).pass());
}

// Row 0 of a case's logits, in fp64.
inline std::vector<double> logits_row0(const Case& c) {
  const TensorMap in = c.method->inputs(c);
  std::vector<double> l(c.i64("vocab"));
  in.at("logits").get_row(0, c.i64("vocab"), l.data());
  return l;
}

}  // namespace attnbench::test
