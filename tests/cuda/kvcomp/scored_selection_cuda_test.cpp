// The KV-selection family on CUDA (impls/cuda/kvcomp/scored_selection_cuda.h): every registered
// kvcomp method passes its cases, with the same bits run to run; the select kernel alone keeps
// exactly the spec's select_top_k on adversarial scores (duplicates, ±0, negatives, subnormals),
// with and without its shared-memory key cache, with sinks, recent tokens, per-row budgets and a
// ranking shared by a sequence's KV heads, a row's every candidate taken without reading its
// scores; and the across stage alone gives AdaKV's row budgets
// (floors of none, one, half and all of the share; shares of one, some and every candidate).
// The selection cache (tokenselect's): its kernels alone decide each score row by the fp32 cosine
// (as the fp64 one outside the check's band, a zero norm a miss) and write the hit rows' kept
// lists only; tokenselect's cases pass (a step whose every row hits, one whose every row misses,
// the threshold's edge) with the same bits run to run, and a hit step is timed (run()'s copy of
// the decision, behind the stream hold of a cold sample).
//
// The stage entries (impls/cuda/kvcomp/kv_stages.cu) are reached with dlsym, so this file builds
// whether or not the CUDA backend is compiled in (without it, require_backend skips).
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attnbench/dtype.h"
#include "attnbench/registry.h"
#include "attnbench/rng.h"
#include "method_cases.h"
#include "reference/kvcomp/scored_selection_common.h"
#include "reference/kvcomp/selection_cache.h"
#include "support.h"

using namespace attnbench;

namespace {

using SelectFn = int (*)(const kvcomp::SelectionParams* s, const float* scores, const int32_t* row_budget,
                         int32_t* kept_idx, int32_t* kept_len, char* err, size_t err_len);
using AcrossFn = int (*)(const kvcomp::SelectionParams* s, const float* scores, int32_t* row_budget, char* err,
                         size_t err_len);
using CacheFn = int (*)(const kvcomp::SelectionParams* s, int elem, float threshold, const void* q, const void* q_cached,
                        const int32_t* topk_cached, int32_t* cache_hit, int32_t* kept_idx, int32_t* kept_len, char* err,
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

TEST_CASE("the CUDA selection cache's kernels: each score row's decision by the cosine, the hit rows' kept lists", "[cuda]") {
  test::require_backend("cuda");
  const auto cache = reinterpret_cast<CacheFn>(dlsym(RTLD_DEFAULT, "attnbench_cuda_kv_cache"));
  REQUIRE(cache != nullptr);
  const PhiloxStream rng(13, "kv_cache.test", kDomainInputs);
  // Six sequences of 6 query heads over 2 KV heads at head_dim 100: a score row of 600 values per
  // sequence, or of 300 per KV head, more than a CTA's threads either way. Row 0's q is zero (a
  // miss whatever the threshold's sign), row 1's q_cached is q (a hit), the rest have q_cached =
  // ρ·q + √(1 − ρ²)·u for ρ across [−1, 1], stored in f32 or bf16.
  for (const bool per_sequence : {true, false}) {
    for (const int elem : {0, 2}) {  // attn::Elem: f32, bf16
      CAPTURE(per_sequence, elem);
      kvcomp::SelectionParams s{};
      s.batch = 6, s.q_heads = 6, s.kv_heads = 2, s.group = 3, s.head_dim = 100, s.elem_bytes = elem == 0 ? 4 : 2;
      s.kv_len = 60, s.sinks = 2, s.recent = 4, s.candidates = 54, s.top_k = 5, s.kept = 11, s.capacity = 14;
      s.shared_scores = per_sequence, s.sparse_step = 1;
      const int64_t score_rows = kvcomp::score_rows(s), rows = kvcomp::cache_rows(s);
      const int64_t n = int64_t{kvcomp::heads_per_score_row(s)} * s.head_dim, total = score_rows * n;
      const float threshold = 0.3f;
      std::vector<double> a(total), b(total);  // the values as stored
      std::vector<float> a32(total), b32(total);
      std::vector<uint16_t> a16(total), b16(total);
      const auto store = [&](std::vector<double>& v, std::vector<float>& v32, std::vector<uint16_t>& v16, int64_t i, double x) {
        if (elem == 0) v[i] = v32[i] = static_cast<float>(x);
        else v[i] = bf16_to_f32(v16[i] = f64_to_bf16(x));
      };
      for (int64_t r = 0; r < score_rows; ++r) {
        const double rho = -1.0 + 2.0 * static_cast<double>(r) / static_cast<double>(score_rows - 1);
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t at = static_cast<uint64_t>(r * n + i);
          const double x = r == 0 ? 0.0 : rng.normal(2 * at), u = rng.normal(2 * at + 1);
          store(a, a32, a16, r * n + i, x);
          store(b, b32, b16, r * n + i, r == 0 ? u : r == 1 ? a[r * n + i] : rho * x + std::sqrt(1.0 - rho * rho) * u);
        }
      }
      std::vector<int32_t> topk(score_rows * s.top_k);
      for (int64_t r = 0; r < score_rows; ++r)
        for (int i = 0; i < s.top_k; ++i) topk[r * s.top_k + i] = s.sinks + static_cast<int32_t>(r) + 10 * i;  // ascending
      // kept_idx and kept_len as a select left them: marks that a missed row keeps.
      std::vector<int32_t> hit(score_rows, -7), idx(rows * s.capacity, 777), len(rows, 555);
      char err[256] = {};
      const void* q = elem == 0 ? static_cast<const void*>(a32.data()) : a16.data();
      const void* qc = elem == 0 ? static_cast<const void*>(b32.data()) : b16.data();
      REQUIRE(cache(&s, elem, threshold, q, qc, topk.data(), hit.data(), idx.data(), len.data(), err, sizeof err) == 0);
      const double band = kvcomp::cache_cosine_band(s);
      int hits = 0, misses = 0;
      for (int64_t r = 0; r < score_rows; ++r) {
        double dot = 0, na = 0, nb = 0;
        for (int64_t i = r * n; i < (r + 1) * n; ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
        const double cos = na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
        CAPTURE(r, cos);
        REQUIRE((hit[r] == 0 || hit[r] == 1));
        if (std::abs(cos - threshold) > band) CHECK(hit[r] == (cos >= threshold ? 1 : 0));
        (hit[r] ? hits : misses) += 1;
      }
      CHECK(hit[0] == 0);
      CHECK(hit[1] == 1);
      CHECK(hits > 1);
      CHECK(misses > 1);
      for (int64_t row = 0; row < rows; ++row) {
        CAPTURE(row);
        const int64_t sr = kvcomp::score_row_of(s, row);
        std::vector<int32_t> want(s.capacity, 777);
        int32_t want_len = 555;
        if (hit[sr]) {
          for (int p = 0; p < s.capacity; ++p) want[p] = -1;
          for (int p = 0; p < s.sinks; ++p) want[p] = p;
          for (int i = 0; i < s.top_k; ++i) want[s.sinks + i] = topk[sr * s.top_k + i];
          for (int i = 0; i < s.recent; ++i) want[s.sinks + s.top_k + i] = s.kv_len - s.recent + i;
          want_len = s.kept;
        }
        CHECK(std::vector<int32_t>(idx.begin() + row * s.capacity, idx.begin() + (row + 1) * s.capacity) == want);
        CHECK(len[row] == want_len);
      }
    }
  }
}

TEST_CASE("tokenselect's selection cache on CUDA: hits, misses and the threshold's edge pass, the same bits run to run", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  const std::vector<std::string>& ids = test::kTokenselectCases;
  CHECK(test::rows_not_passing(ids, be) == std::vector<std::string>{});
  // method_cases.h: the last three use the cache; the first of them is one score row that hits
  // (the step runs no scorer and no select), the second three that miss.
  const std::vector<std::string> cached(ids.end() - 3, ids.end());
  for (const std::string& id : cached) {
    INFO(id);
    const Case c = test::case_from_id(id);
    REQUIRE(kvcomp::selection_cache_on(c));
    CHECK(test::output_hash(test::check_case(c, be).at(0)) == test::output_hash(test::check_case(c, be).at(0)));
  }
  for (const int want_hit : {1, 0}) {
    const std::string& id = cached[want_hit ? 0 : 1];
    INFO(id);
    const Case c = test::case_from_id(id);
    const kvcomp::SelectionParams s = kvcomp::selection_params(c);
    const TensorMap in = c.method->inputs(c);
    const RowResult r = test::check_with_inputs(c, c.method->inputs(c), be, "radix");
    REQUIRE(test::status_and_reason(r) == "pass ");
    const HostTensor& hit = r.outputs.at("cache_hit");
    for (int64_t sr = 0; sr < hit.numel(); ++sr) CHECK(hit.get(sr) == want_hit);
    if (!want_hit) continue;
    const HostTensor &idx = r.outputs.at("kept_idx"), &len = r.outputs.at("kept_len"), &topk = in.at("topk_cached");
    for (int64_t row = 0; row < kvcomp::cache_rows(s); ++row) {
      CAPTURE(row);
      const int64_t sr = kvcomp::score_row_of(s, row);
      std::vector<double> want, got;
      for (int64_t j = 0; j < s.sinks; ++j) want.push_back(static_cast<double>(j));
      for (int64_t i = 0; i < s.top_k; ++i) want.push_back(topk.get(sr * s.top_k + i));
      for (int64_t j = s.kv_len - s.recent; j < s.kv_len; ++j) want.push_back(static_cast<double>(j));
      for (int64_t p = 0; p < s.capacity; ++p) got.push_back(idx.get(row * s.capacity + p));
      want.resize(static_cast<size_t>(s.capacity), -1.0);
      CHECK(len.get(row) == s.kept);
      CHECK(got == want);
    }
  }
}

TEST_CASE("a CUDA step whose every selection-cache row hits is timed: the decision's copy inside run()", "[cuda]") {
  Backend& be = test::require_backend("cuda");
  Peaks peaks;
  for (const char* name : {"read_bytes_per_s", "copy_bytes_per_s", "fp32_flops_per_s"}) peaks.add(name, 1e12, "test");
  peaks.how = "test";
  // Memory-bound: timed cold, each sample's launches enqueued behind the stream hold, which run()
  // lets go before it waits for the decision (else the copy would wait out the hold's timeout).
  const std::string& id = *(test::kTokenselectCases.end() - 3);
  const Row row = test::timed_row(id, peaks, be);
  CHECK(row.timing->mode == "cold");
}
