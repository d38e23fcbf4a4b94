// sampling on CUDA (variant radix_select, impls/cuda/decoding/sampler_stage.cuh): the shared cases
// and the device's own edges pass SET, SEMI and STAT; outputs are the same run to run; ties at the
// top-p crossing are kept by index, exactly; and where the reference marks no boundary token the
// kept sets are the reference's bit for bit, and the CPU backend's where it is compiled in. Then
// the stage's processors: epsilon, eta, typical and top_h on their shared cases, gumbel_topk's
// draw of k tokens and arithmetic_sampling's codes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnbench/check_semi.h"
#include "attnbench/registry.h"
#include "method_cases.h"
#include "reference/decoding/sampler.h"
#include "support.h"

using namespace attnbench;

namespace {

// The shared cases, then the device's own edges: many rows over an odd vocabulary (each row's
// Philox blocks start at another offset of a 32-token tile) with top-k and top-p both searching
// all three digit levels, a flat Llama-3 row where top-p's crossing bin is deep, and min-p where it
// binds inside a dense spread of probabilities (zipf: the shared cases' min-p rows keep nearly all
// or split two clusters, so a threshold 5% off passed them).
std::vector<std::string> sampling_cases() {
  std::vector<std::string> v = test::kSamplingCases;
  v.insert(v.end(), {
      "sampling/batch=37,vocab=1021,top_k=700,top_p=0.97,dist=flat/f32/s20",
      "sampling/batch=2,vocab=128256,top_p=0.3,dist=flat/f32/s21",
      "sampling/batch=4,vocab=32000,min_p=0.01/f32/s22",
      "sampling/batch=4,vocab=32000,temperature=0.6,top_k=500,min_p=0.002/f32/s23",
  });
  return v;
}

HostTensor logits_tensor(int64_t rows, int64_t V, const std::vector<double>& v) {
  HostTensor t("logits", DType::f32, {rows, V});
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), v[i]);
  return t;
}

uint32_t word_at(const HostTensor& mask, int64_t i) { return static_cast<uint32_t>(static_cast<int64_t>(mask.get(i))); }

}  // namespace

TEST_CASE("sampling cuda: passes SET, SEMI and STAT", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(sampling_cases(), be) == std::vector<std::string>{});
}

TEST_CASE("sampling cuda: outputs are the same run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  for (const std::string& id : {test::kSamplingCases[0], test::kSamplingCases[4], test::kSamplingCases[8]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
}

TEST_CASE("sampling cuda: ties at the top-p crossing are kept by index", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // Ten tokens of logit 0 spread over several 256-token tiles and warps, the rest at −30 (mass
  // e^−30 each, 1e4 of them: under 1e−8 in all). top_p 0.45: the crossing is inside the ties,
  // n = ⌈4.5⌉ = 5, far from either side of a boundary, so the first five by index are kept, and
  // the reference keeps the same (its ties ordered by index). SET lets tied tokens at a crossing be
  // exchanged, so only an exact comparison sees the ranking.
  const int64_t V = 10000;
  const std::vector<int64_t> ties = {9000, 3, 2048, 300, 5000, 301, 2047, 40, 1500, 777};
  const std::vector<int64_t> want_kept = {3, 40, 300, 301, 777};
  std::vector<double> l(2 * V, -30.0);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t x : ties) l[r * V + x] = 0.0;
  const Case c = test::case_from_id("sampling/batch=2,vocab=10000,top_p=0.45/f32/s3");
  TensorMap in;
  in.emplace("logits", logits_tensor(2, V, l));
  const Reference ref = c.method->reference(c, in);
  TensorMap in2;
  in2.emplace("logits", logits_tensor(2, V, l));
  const RowResult row = test::check_with_inputs(c, std::move(in2), be, "radix_select");
  REQUIRE(test::status_and_reason(row) == "pass ");
  const HostTensor& kept = row.outputs.at("kept");
  const int64_t W = (V + 31) / 32;
  for (int64_t r = 0; r < 2; ++r) {
    std::vector<int64_t> got;
    for (int64_t x = 0; x < V; ++x)
      if (decoding::mask_bit(kept, r, W, x)) got.push_back(x);
    CHECK(got == want_kept);
    for (int64_t w = 0; w < W; ++w) CHECK(word_at(kept, r * W + w) == word_at(ref.tensors.at("kept"), r * W + w));
  }
}

TEST_CASE("sampling cuda: kept sets are the reference's where no token is a boundary one, and the CPU's", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  // SET already fails a non-boundary difference; this also asks that such rows exist (else the
  // comparison says nothing) and, where the CPU backend is compiled in (the GPU machine's test
  // binary; the emulated one has only CUDA), that both backends keep the same bits and, away from a
  // race decided within rounding, draw the same token.
  Backend* cpu = nullptr;
  std::unique_ptr<Backend> cpu_owned;
  if (const BackendEntry* e = registry().find_backend("cpu")) {
    cpu_owned = e->make();
    if (cpu_owned->probe().available) cpu = cpu_owned.get();
  }
  // Cases whose rows mostly have no boundary token: top-p's crossing makes nearly every row of a
  // top-p case a boundary one (tokens within the mass slack of it), so these bind top-k and min-p.
  for (const std::string& id : {test::kSamplingCases[2], test::kSamplingCases[5], test::kSamplingCases[9],
                                test::kSamplingCases[12]}) {
    CAPTURE(id);
    const Case c = test::case_from_id(id);
    const decoding::SamplerParams s = decoding::sampler_params(c);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    const RowResult got = test::check_with_inputs(c, c.method->inputs(c), be, "radix_select");
    REQUIRE(test::status_and_reason(got) == "pass ");
    std::optional<RowResult> other;
    if (cpu) other = test::check_with_inputs(c, c.method->inputs(c), *cpu, "bucket_select");
    int64_t clean_rows = 0;
    for (int64_t r = 0; r < s.rows; ++r) {
      bool boundary = false;
      for (int64_t w = 0; w < s.mask_words; ++w) boundary = boundary || word_at(ref.tensors.at("kept_boundary"), r * s.mask_words + w) != 0;
      if (boundary) continue;
      ++clean_rows;
      for (int64_t w = 0; w < s.mask_words; ++w) {
        const int64_t i = r * s.mask_words + w;
        CHECK(word_at(got.outputs.at("kept"), i) == word_at(ref.tensors.at("kept"), i));
        if (other) CHECK(word_at(got.outputs.at("kept"), i) == word_at(other->outputs.at("kept"), i));
      }
      if (other && !race_is_boundary(ref.tensors.at("race_gap").get(r)))
        CHECK(got.outputs.at("token").get(r) == other->outputs.at("token").get(r));
    }
    CHECK(clean_rows > 0);
  }
}

TEST_CASE("epsilon cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kEpsilonCases, be) == std::vector<std::string>{});
}

TEST_CASE("eta cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kEtaCases, be) == std::vector<std::string>{});
}

TEST_CASE("typical cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTypicalCases, be) == std::vector<std::string>{});
}

TEST_CASE("top_h cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kTopHCases, be) == std::vector<std::string>{});
}

TEST_CASE("gumbel_topk cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kGumbelTopKCases, be) == std::vector<std::string>{});
}

TEST_CASE("arithmetic_sampling cuda: the shared cases pass", "[cuda]") {
  auto& be = test::require_backend("cuda");
  CHECK(test::rows_not_passing(test::kArithmeticCases, be) == std::vector<std::string>{});
}
