// The KV-selection family on CUDA (impls/cuda/kvcomp/scored_selection_cuda.h): every registered
// kvcomp method passes its cases, with the same bits run to run; the select kernel alone keeps
// exactly the spec's select_top_k on adversarial scores (duplicates, ±0, negatives, subnormals),
// with and without its shared-memory key cache, with sinks, recent tokens, per-row budgets and a
// ranking shared by a sequence's KV heads, a row's every candidate taken without reading its
// scores; and the across stage alone gives AdaKV's row budgets
// (floors of none, one, half and all of the share; shares of one, some and every candidate).
//
// The stage entries (impls/cuda/kvcomp/kv_stages.cu) are reached with dlsym, so this file builds
// whether or not the CUDA backend is compiled in (without it, require_backend skips).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "method_cases.h"
#include "reference/kvcomp/scored_selection_common.h"
#include "support.h"

using namespace attnbench;

namespace {

using SelectFn = int (*)(const kvcomp::SelectionParams* s, const float* scores, const int32_t* row_budget,
                         int32_t* kept_idx, int32_t* kept_len, char* err, size_t err_len);
using AcrossFn = int (*)(const kvcomp::SelectionParams* s, const float* scores, int32_t* row_budget, char* err,
                         size_t err_len);

// AdaKV's row budgets by the spec's select_top_k (scored_selection_common.h): per sequence, each
// row's floor counted first (+inf), then the best kv_heads·top_k of the sequence's flat scores.
std::vector<int32_t> budgets_across_heads(const kvcomp::SelectionParams& s, const std::vector<float>& scores) {
  const int64_t H = s.kv_heads, C = s.candidates, n = H * C;
  std::vector<int32_t> budgets(static_cast<size_t>(s.batch * H), s.sinks + s.recent), order(n), top(n);
  std::vector<float> boosted(n);
  for (int64_t b = 0; b < s.batch; ++b) {
    std::copy_n(scores.begin() + b * n, n, boosted.begin());
    for (int64_t g = 0; g < H; ++g) {
      kvcomp::select_top_k(scores.data() + (b * H + g) * C, C, int64_t{s.floor}, order.data(), top.data());
      for (int32_t i = 0; i < s.floor; ++i) boosted[g * C + top[i]] = INFINITY;
    }
    kvcomp::select_top_k(boosted.data(), n, H * s.top_k, order.data(), top.data());
    for (int64_t i = 0; i < H * s.top_k; ++i) ++budgets[b * H + top[i] / C];
  }
  return budgets;
}

}  // namespace

TEST_CASE("every KV-selection method passes on CUDA, the same bits run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  for (const Method* m : registry().methods()) {
    if (!test::selection_method(*m)) continue;
    INFO(m->info().name);
    REQUIRE(test::kvcomp_cases().count(m->info().name));  // a new method brings its cases
    const std::vector<std::string>& ids = test::kvcomp_cases().at(m->info().name);
    CHECK(test::rows_not_passing(ids, be) == std::vector<std::string>{});
    for (const std::string& id : {ids[0], ids[1]}) {
      const Case c = test::case_from_id(id);
      CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
    }
  }
}

TEST_CASE("the CUDA select kernel keeps exactly the spec's top-k", "[cuda]") {
  test::require_backend("cuda");
  const auto select = reinterpret_cast<SelectFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_kv_select"));
  REQUIRE(select != nullptr);
  const PhiloxStream rng(11, "kv_select.test", kDomainInputs);
  // Rows of candidates: uniform, all equal, a few values repeated (±0, negatives, a subnormal),
  // decreasing, increasing. 5000 candidates fit the key cache; 20000 do not.
  for (const int candidates : {5000, 20000}) {
    constexpr int kRows = 5, kSinks = 2, kRecent = 3;
    std::vector<float> scores(static_cast<size_t>(kRows) * candidates);
    const float few[] = {0.0f, -0.0f, 1e-3f, 1e-3f, -2.5f, 0x1p-140f, 7.0f, 1e-3f};
    for (int j = 0; j < candidates; ++j) {
      scores[j] = static_cast<float>(rng.uniform_f64(static_cast<uint64_t>(j)));
      scores[candidates + j] = 0.25f;
      scores[2 * candidates + j] = few[static_cast<int>(rng.uniform_f64(static_cast<uint64_t>(candidates + j)) * 8)];
      scores[3 * candidates + j] = static_cast<float>(candidates - j);
      scores[4 * candidates + j] = static_cast<float>(j);
    }
    for (const int top_k : {1, 777, candidates / 2, candidates - 1}) {
      for (const bool per_row : {false, true}) {
        CAPTURE(candidates, top_k, per_row);
        kvcomp::SelectionParams s{};
        s.batch = kRows, s.q_heads = s.kv_heads = s.group = 1, s.head_dim = 4;
        s.kv_len = kSinks + candidates + kRecent, s.sinks = kSinks, s.recent = kRecent, s.candidates = candidates;
        s.top_k = top_k, s.kept = kSinks + top_k + kRecent, s.capacity = s.kept + 1, s.elem_bytes = 2, s.row_budgets = per_row;
        s.across_heads = 0, s.floor = 0;  // budgets given, not chosen (the across stage's test below)
        // Per-row budgets: row r keeps r fewer candidates than top_k (at least none).
        std::vector<int32_t> budget(kRows), idx(static_cast<size_t>(kRows) * s.capacity), len(kRows);
        for (int r = 0; r < kRows; ++r) budget[r] = s.kept - (per_row ? std::min(r, top_k) : 0);
        char err[256] = {};
        REQUIRE(select(&s, scores.data(), budget.data(), idx.data(), len.data(), err, sizeof err) == 0);
        std::vector<int32_t> order(candidates), want(top_k);
        for (int r = 0; r < kRows; ++r) {
          CAPTURE(r);
          const int k = budget[r] - kSinks - kRecent;
          REQUIRE(len[r] == budget[r]);
          kvcomp::select_top_k(scores.data() + static_cast<size_t>(r) * candidates, candidates, k, order.data(), want.data());
          const int32_t* got = idx.data() + static_cast<size_t>(r) * s.capacity;
          int mismatches = 0;
          for (int i = 0; i < kSinks; ++i) mismatches += got[i] != i;
          for (int i = 0; i < k; ++i) mismatches += got[kSinks + i] != kSinks + want[i];
          for (int i = 0; i < kRecent; ++i) mismatches += got[kSinks + k + i] != kSinks + candidates + i;
          for (int i = budget[r]; i < s.capacity; ++i) mismatches += got[i] != -1;
          CHECK(mismatches == 0);
        }
      }
    }
  }
}

TEST_CASE("the CUDA select kernel: per-row budgets, shared rankings, forced tokens, rows keeping none or all", "[cuda]") {
  test::require_backend("cuda");
  const auto select = reinterpret_cast<SelectFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_kv_select"));
  REQUIRE(select != nullptr);
  // method_cases.h: by hand; and rows keeping none or every candidate, whose NaN scores are not read
  for (const test::SelectStageCase& t : {test::select_stage_case(), test::select_all_case()}) {
    const int rows = static_cast<int>(kvcomp::cache_rows(t.s)), cap = t.s.capacity;
    std::vector<int32_t> idx(rows * cap), len(rows);
    char err[256] = {};
    REQUIRE(select(&t.s, t.scores.data(), t.budgets.data(), idx.data(), len.data(), err, sizeof err) == 0);
    for (int row = 0; row < rows; ++row) {
      CAPTURE(rows, row);
      CHECK(std::vector<int32_t>(idx.begin() + row * cap, idx.begin() + row * cap + len[row]) == t.kept[row]);
      for (int r = len[row]; r < cap; ++r) CHECK(idx[row * cap + r] == -1);
    }
  }
}

TEST_CASE("the CUDA across stage gives AdaKV's row budgets", "[cuda]") {
  test::require_backend("cuda");
  const auto across = reinterpret_cast<AcrossFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_kv_across"));
  REQUIRE(across != nullptr);
  const PhiloxStream rng(12, "kv_across.test", kDomainInputs);
  // Three sequences of four KV heads; rows of uniform, all-equal, few-valued (±0, negatives, a
  // subnormal) and decreasing scores. 4·300 flat candidates fit the select kernel's key cache;
  // 4·4000 do not.
  for (const int candidates : {300, 4000}) {
    kvcomp::SelectionParams s{};
    s.batch = 3, s.q_heads = 8, s.kv_heads = 4, s.group = 2, s.head_dim = 4, s.elem_bytes = 2;
    s.sinks = 2, s.recent = 3, s.candidates = candidates, s.kv_len = s.sinks + candidates + s.recent;
    s.row_budgets = 1, s.across_heads = 1;
    const int rows = s.batch * s.kv_heads;
    std::vector<float> scores(static_cast<size_t>(rows) * candidates);
    const float few[] = {0.0f, -0.0f, 1e-3f, 1e-3f, -2.5f, 0x1p-140f, 7.0f, 1e-3f};
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < candidates; ++j) {
        const uint64_t at = static_cast<uint64_t>(r) * candidates + j;
        float& x = scores[at];
        switch (r % 4) {
          case 0: x = static_cast<float>(rng.uniform_f64(at)); break;
          case 1: x = 0.25f; break;
          case 2: x = few[static_cast<int>(rng.uniform_f64(at) * 8)]; break;
          default: x = static_cast<float>(candidates - j); break;
        }
      }
    for (const int top_k : {1, 37, candidates}) {
      for (const int floor_k : {0, 1, top_k / 2, top_k}) {
        CAPTURE(candidates, top_k, floor_k);
        s.top_k = top_k, s.floor = floor_k;
        s.kept = s.capacity = s.sinks + s.recent + std::min(candidates, floor_k + s.kv_heads * (top_k - floor_k));
        std::vector<int32_t> got(rows, -1);
        char err[256] = {};
        REQUIRE(across(&s, scores.data(), got.data(), err, sizeof err) == 0);
        CHECK(got == budgets_across_heads(s, scores));
      }
    }
  }
}
