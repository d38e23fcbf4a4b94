// The leaderboard's rules (attnbench/leaderboard.h) on a hand-made results document whose methods,
// families, backends, quality keys and roles are invented: the leaderboard reads them from the
// records alone. Rendering a real run is tested in tests/cli (Markdown) and tests/browser (HTML); the
// last case reads the committed results/leaderboard.html.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>

#include <catch2/catch.hpp>

#include "attnbench/json.h"
#include "attnbench/leaderboard.h"

using namespace attnbench;

namespace {

Json record(const std::string& method, const std::string& family, const std::string& case_id, const std::string& status,
            double median_s, double flops) {
  Json r = {{"case_id", case_id}, {"label", ""},        {"headline", false}, {"catalog_id", "X-" + method},
            {"method", method},   {"family", family},   {"phase", ""},       {"backend", "zeta"},
            {"variant", "v1"},    {"device", "Zeta 9"}, {"dtype", "f16"},    {"params", {{"kv_len", 100}}},
            {"status", status},   {"reason", status == "pass" ? "" : "because " + status}, {"related_rank", 0}};
  if (status == "pass") {
    r["work"] = {{"flops", flops}, {"bytes", 1e6}, {"bound", "compute"}};
    r["checks"] = {{"O", {{"class", "TOL"}, {"pass", true}, {"max_abs", 1e-3}, {"gate", 4e-3}}},
                   {"I", {{"class", "SET"}, {"pass", true}, {"n_tie_swaps", 2}}}};
    r["deterministic"] = true;
    r["memory"] = {{"peak_bytes", 3 * 1048576.0}, {"input_bytes", 0}, {"output_bytes", 0}, {"workspace_peak_bytes", 0}};
    r["timing"] = {{"median_s", median_s}, {"cv", 0.01}, {"noisy", false}, {"repetitions", 9}, {"mode", "hot"}, {"how", "x"}};
    r["throughput"] = {{"flops_per_s", flops / median_s}, {"bytes_per_s", 1e6 / median_s}, {"peak", "fp32_flops_per_s"},
                       {"pct_of_peak", 12.5}, {"above_peak", false}};
  } else {
    r["work"] = {{"flops", flops}, {"bytes", 1e6}, {"bound", "compute"}};
  }
  return r;
}

Json doc_of(const std::vector<Json>& recs) {
  Json d = {{"context", {{"schema_version", 1}, {"git_commit", "0123456789abcdef0123"}, {"git_dirty", true},
                         {"compiler", "GNU 12"}, {"cpu", "Test CPU"}, {"date", "2025-01-01T00:00:00Z"},
                         {"backends", {{"zeta", {{"available", true}, {"device", "Zeta 9"},
                                                 {"peaks", {{"read_bytes_per_s", 1e11}, {"copy_bytes_per_s", 1e11}, {"fp32_flops_per_s", 2e12}}}}}}}}},
            {"benchmarks", Json::array()}};
  for (const auto& r : recs) d["benchmarks"].push_back({{"name", r["case_id"]}, {"run_type", "aggregate"}, {"attnbench", r}});
  return d;
}

const LbSection* section(const Leaderboard& lb, const std::string& family) {
  for (const auto& s : lb.sections)
    if (s.family == family) return &s;
  return nullptr;
}

std::string cell(const LbSection& s, size_t row, const std::string& key) {
  for (size_t k = 0; k < s.columns.size(); ++k)
    if (s.columns[k].key == key) return s.rows.at(row).at(k).text;
  return "<no column " + key + ">";
}

}  // namespace

TEST_CASE("leaderboard: headline cases, statuses, quality keys and related joins come from the records", "[unit]") {
  // alpha: no headline flag, so its case with the most flops (a2). beta: its flagged case, a
  // baseline of alpha's a1 (related_rank > 0 rows are never headline rows). gamma: companions
  // x_full / x_small and a figure nobody declared before.
  Json a1 = record("alpha", "famA", "alpha/a1", "pass", 2e-3, 1e9);
  Json a2 = record("alpha", "famA", "alpha/a2", "pass", 4e-3, 5e9);
  Json b1 = record("beta", "famA", "beta/b1", "pass", 1e-3, 1e9);
  b1["headline"] = true;
  b1["related"] = {{"baseline", "alpha/a1"}};
  Json b2 = record("beta", "famA", "beta/b2", "pass", 1e-3, 9e9);  // more flops, but not flagged
  Json g1 = record("gamma", "famB", "gamma/g1", "pass", 5e-6, 0);
  g1["work"]["bound"] = "memory";
  g1["quality"] = {{"novel_figure", 0.25}, {"kv_bytes_kept", 4096}, {"attn_recall", 0.5}, {"nested", {{"inner", 3}}}};
  g1["related"] = {{"x_small", "delta/d1"}, {"x_full", "delta/d2"}};
  Json d1 = record("delta", "famA", "delta/d1", "pass", 10e-6, 1e6);
  Json d2 = record("delta", "famA", "delta/d2", "pass", 80e-6, 8e6);
  d1["related_rank"] = d2["related_rank"] = 1;
  Json n1 = record("eta", "famB", "eta/n1", "pass", 1e-3, 1e6);
  n1["timing"]["noisy"] = true;
  n1["timing"]["cv"] = 0.2;
  Json u1 = record("theta", "famB", "theta/u1", "unsupported", 0, 1e6);
  Json c1 = record("iota", "famB", "iota/c1", "crashed", 0, 1e6);
  Json f1 = record("kappa", "famB", "kappa/f1", "fail", 0, 1e6);
  f1["checks"] = {{"O", {{"class", "TOL"}, {"pass", false}, {"max_abs", 1.0}, {"gate", 0.1}, {"message", "max_abs 1 > gate 0.1"}}}};

  const Leaderboard lb = build_leaderboard({doc_of({a1, a2, b1, b2, g1, d1, d2, n1, u1, c1, f1})}, {"r.json"}, "test");
  const LbSection* a = section(lb, "famA");
  const LbSection* b = section(lb, "famB");
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->rows.size() == 2);  // alpha and beta; delta is related-only
  CHECK(cell(*a, 0, "method") == "alpha");
  CHECK(a->cases[0].second == "alpha/a2");
  CHECK(a->cases[1].second == "beta/b1");
  CHECK(cell(*a, 0, "latency") == "4 ms");
  CHECK(cell(*a, 0, "throughput") == "1.25 TFLOP/s");
  CHECK(cell(*a, 0, "pct_peak") == "12.5% fp32");  // the cell names the ceiling
  CHECK(cell(*a, 0, "memory") == "3 MiB");
  CHECK(cell(*a, 0, "equivalence") == "0.25× gate (O), 2 tie swaps");
  CHECK(cell(*a, 1, "rel.baseline") == "2 ms");
  CHECK(cell(*a, 1, "speedup") == "2× vs alpha");

  // famB: gamma, eta, theta, iota, kappa — every status shown as itself.
  REQUIRE(b->rows.size() == 5);
  CHECK(cell(*b, 0, "throughput") == "200 GB/s");
  CHECK(cell(*b, 0, "q.novel_figure") == "0.25");
  CHECK(cell(*b, 0, "q.nested.inner") == "3");
  CHECK(cell(*b, 0, "q.kv_bytes_kept") == "4 KiB");
  CHECK(cell(*b, 0, "rel.x_small") == "10 µs");
  CHECK(cell(*b, 0, "speedup") == "8× x_small vs x_full");
  CHECK(cell(*b, 1, "status") == "pass (noisy, cv 20%)");
  CHECK(cell(*b, 2, "status") == "unsupported");
  CHECK(cell(*b, 2, "latency") == "—");
  CHECK(cell(*b, 3, "status") == "crashed");
  CHECK(cell(*b, 4, "status") == "fail");
  CHECK_THAT(cell(*b, 4, "equivalence"), Catch::StartsWith("FAIL 10× gate"));

  // Matrix and plots.
  REQUIRE(lb.matrix.columns == std::vector<std::string>{"[1] zeta"});
  const auto& m = lb.matrix;
  const size_t kappa = std::find(m.methods.begin(), m.methods.end(), "kappa") - m.methods.begin();
  CHECK(m.cells.at({kappa, 0}).worst == "fail");
  // A noisy pass is counted apart with its cv, and colours its cell as a pass, not a warning.
  const size_t eta = std::find(m.methods.begin(), m.methods.end(), "eta") - m.methods.begin();
  CHECK(m.cells.at({eta, 0}).worst == "pass");
  CHECK(lb::matrix_cell_text(m.cells.at({eta, 0})) == "1 noisy (cv up to 20%)");
  REQUIRE(lb.fidelity.size() == 1);
  CHECK(lb.fidelity[0].figure == "attn_recall");
  CHECK(lb.fidelity[0].points.size() == 1);

  const std::string md = leaderboard_markdown(lb);
  CHECK_THAT(md, Catch::Contains("| novel\\_figure |") && Catch::Contains("because crashed") &&
                     Catch::Contains("0123456789ab (dirty)") && Catch::Contains("## famB"));
  const std::string html = leaderboard_html(lb);
  CHECK_THAT(html, Catch::Contains("<svg class=\"plot\" data-kind=\"fidelity\"") && Catch::Contains("class=\"matrix\""));
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<script src") == std::string::npos);
}

TEST_CASE("leaderboard: a latency plot per method timed at several kv lengths of one series", "[unit]") {
  std::vector<Json> recs;
  for (int kv : {100, 1000, 4000}) {
    Json r = record("alpha", "famA", "alpha/kv" + std::to_string(kv), "pass", kv * 1e-8, 1e6);
    r["params"] = {{"batch", 2}, {"kv_len", kv}};
    recs.push_back(r);
  }
  Json other = record("alpha", "famA", "alpha/other", "pass", 1e-5, 1e6);
  other["params"] = {{"batch", 8}, {"kv_len", 100}};
  recs.push_back(other);
  const Leaderboard lb = build_leaderboard({doc_of(recs)}, {"r.json"}, "test");
  REQUIRE(lb.latency_plots.size() == 1);
  CHECK(lb.latency_plots[0].subtitle == "batch=2, f16");
  REQUIRE(lb.latency_plots[0].series.size() == 1);
  CHECK(lb.latency_plots[0].series[0].points.size() == 3);
  CHECK_THAT(latency_plot_svg(lb.latency_plots[0]), Catch::Contains("data-kind=\"latency\"") && Catch::Contains("kv_len (log)"));
}

TEST_CASE("leaderboard: a coverage file's rows are in the support matrix and side by side, never ranked or plotted", "[unit]") {
  // ranked.json: model-sized sweeps on zeta. edges.json: a CI-sized sweep of the same method on zeta
  // and on omega. Only ranked.json draws tables and latency plots; the matrix and the
  // side-by-side view hold both.
  std::vector<Json> big, tiny;
  for (int kv : {1024, 32768}) {
    Json r = record("alpha", "famA", "alpha/kv" + std::to_string(kv), "pass", kv * 1e-8, kv * 1e3);
    r["params"] = {{"kv_len", kv}};
    big.push_back(r);
  }
  for (int kv : {1, 20}) {
    Json r = record("alpha", "famA", "alpha/kv" + std::to_string(kv), "pass", 1e-6, kv * 1e3);
    r["params"] = {{"kv_len", kv}};
    tiny.push_back(r);
    r["backend"] = "omega";
    r["device"] = "Omega 1";
    r["timing"]["median_s"] = 2e-6;
    tiny.push_back(r);
  }
  Json edges = doc_of(tiny);
  edges["context"]["backends"]["omega"] = {{"available", true}, {"device", "Omega 1"}};
  const Leaderboard lb = build_leaderboard({doc_of(big), edges}, {"ranked.json", "edges.json"}, "test",
                                           {"", {"edges.json"}});
  REQUIRE(lb.sections.size() == 1);
  CHECK(lb.sections[0].rows.size() == 1);  // alpha on zeta from ranked.json
  CHECK(lb.sections[0].cases[0].second == "alpha/kv32768");
  REQUIRE(lb.latency_plots.size() == 1);
  REQUIRE(lb.latency_plots[0].series.size() == 1);
  CHECK(lb.latency_plots[0].series[0].points.front().first == 1024);
  CHECK(lb.matrix.columns.size() == 3);  // [1] zeta, [2] zeta, [2] omega
  REQUIRE(lb.across.columns.size() == 2);
  CHECK(lb.sources[1].coverage);
  CHECK_THAT(leaderboard_markdown(lb), Catch::Contains("coverage: its rows are in the support matrix"));
  CHECK_THROWS_WITH(build_leaderboard({doc_of(big)}, {"ranked.json"}, "test", {"", {"other.json"}}),
                    Catch::Contains("other.json is not among the results files"));
}

TEST_CASE("leaderboard: one fidelity figure per full cache, the largest first", "[unit]") {
  std::vector<Json> recs;
  for (int kv : {1000, 8000})
    for (double point : {2.0, 8.0}) {
      Json r = record("kappa", "famK", "kappa/" + std::to_string(kv) + "/" + std::to_string(point), "pass", 1e-3, 1e6);
      r["params"] = {{"kv_len", kv}, {"budget", kv / point}};
      r["quality"] = {{"kv_bytes_full", kv * 1024.0}, {"kv_bytes_kept", kv * 1024.0 / point}, {"attn_recall", 1 / point}};
      recs.push_back(r);
    }
  const Leaderboard lb = build_leaderboard({doc_of(recs)}, {"r.json"}, "test");
  REQUIRE(lb.fidelity.size() == 2);
  CHECK(lb.fidelity[0].subtitle == "full cache 7.81 MiB (kv_len 8000), f16; held-out queries");
  CHECK(lb.fidelity[0].points.size() == 2);
  CHECK(lb.fidelity[1].subtitle == "full cache 1000 KiB (kv_len 1000), f16; held-out queries");
  CHECK_THAT(fidelity_plot_svg(lb.fidelity[1]), Catch::Contains("data-kind=\"fidelity\"") && Catch::Contains("kv_len 1000"));
}

TEST_CASE("leaderboard: methods ranked by fidelity at each compression point, with its two plots", "[unit]") {
  // Invented methods at two points of one cache and at two lengths: a table per (cache, point),
  // rows that passed first then by attn_recall; fidelity against the point per cache, time against
  // kv_len per point; a method whose cases vary another parameter gets a line per value.
  std::vector<Json> recs;
  const auto add = [&](const std::string& method, const std::string& status, int kv, double point, double recall, double extra) {
    Json r = record(method, "famK", method + "/" + std::to_string(kv) + "/" + std::to_string(point) + "/" + std::to_string(extra),
                    status, kv * 1e-8 * point, 1e6);
    r["params"] = {{"kv_len", kv}, {"budget", kv / point}, {"layer", extra}};
    r["quality"] = {{"compression_point", point}, {"compression_ratio", point}, {"kv_bytes_full", kv * 1024.0},
                    {"kv_bytes_kept", kv * 1024.0 / point}, {"index_bytes", kv / point * 4}, {"attn_recall", recall},
                    {"out_rel_l2", 1 - recall}};
    recs.push_back(r);
  };
  for (int kv : {1000, 8000})
    for (double point : {2.0, 8.0}) {
      add("low", "pass", kv, point, 0.1 / point, 0);
      add("high", "pass", kv, point, 0.9 / point, 0);
      add("broken", "fail", kv, point, 0.99, 0);
      add("layered", "pass", kv, point, 0.5 / point, 0);
      add("layered", "pass", kv, point, 0.4 / point, 7);
    }
  const Leaderboard lb = build_leaderboard({doc_of(recs)}, {"r.json"}, "test");
  REQUIRE(lb.compression_points.size() == 4);  // two caches × two points
  const LbSection& first = lb.compression_points[0];
  CHECK_THAT(first.title, Catch::StartsWith("2×, kvpress compression_ratio 0.5 · kv_len 1000"));
  REQUIRE(first.rows.size() == 5);
  CHECK(cell(first, 0, "method") == "high");
  CHECK(cell(first, 1, "method") == "layered");
  CHECK(cell(first, 3, "method") == "low");
  CHECK(cell(first, 4, "method") == "broken");  // a failing row ranks last whatever its figures
  CHECK(cell(first, 0, "rank") == "1");
  CHECK(cell(first, 0, "kv_bytes") == "502 KiB");  // 1000·1024/2 bytes of K and V + 500·4 of indices
  CHECK(cell(first, 0, "read_per_step") == "502 KiB");  // a decode step reads the compacted cache
  size_t fidelity = 0, times = 0;
  for (const auto& p : lb.compression_plots) {
    fidelity += p.kind == "kv-fidelity";
    times += p.kind == "kv-time";
    if (p.kind == "kv-fidelity") CHECK(p.series.size() == 4);  // high, low, layered layer=0 and layer=7
    for (const auto& sr : p.series) CHECK(sr.points.size() == 2);
  }
  CHECK(fidelity == 2);
  CHECK(times == 2);
  CHECK_THAT(line_plot_svg(lb.compression_plots[0]), Catch::Contains("data-kind=\"kv-fidelity\""));
  CHECK_THAT(leaderboard_markdown(lb), Catch::Contains("## KV compression at each compression point"));
}

TEST_CASE("leaderboard: replayed rows are tabled and ranked apart from synthetic ones, named by file, model and layer", "[unit]") {
  // The same two methods at one point, on generated inputs and on a capture: two tables, two
  // rankings, two fidelity figures, each headed by its inputs; never one ranking of the four.
  std::vector<Json> recs;
  for (bool replayed : {false, true})
    for (const std::string method : {"low", "high"}) {
      Json r = record(method, "famK", method + (replayed ? "/s1@0123456789abcdef" : "/s1"), "pass", 1e-4, 1e6);
      const double recall = (method == "high" ? 0.9 : 0.5) - (replayed ? 0.3 : 0.0);
      r["quality"] = {{"compression_point", 4.0}, {"compression_ratio", 4.0}, {"kv_bytes_full", 1024000.0},
                      {"kv_bytes_kept", 256000.0}, {"attn_recall", recall}, {"out_rel_l2", 1 - recall}};
      if (replayed)
        r["replayed"] = {{"file", "cap/layer12.safetensors"}, {"hash", "0123456789abcdef"}, {"tensors", Json::object()},
                         {"metadata", {{"model_id", "org/model-8b"}, {"layer", "12"}}}};
      recs.push_back(r);
    }
  const Leaderboard lb = build_leaderboard({doc_of(recs)}, {"r.json"}, "test");
  const std::string from = "replayed: cap/layer12.safetensors (org/model-8b, layer 12)";
  std::vector<const LbSection*> tables;
  for (const auto& s : lb.sections)
    if (s.family == "famK") tables.push_back(&s);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0]->inputs.empty());
  CHECK(tables[1]->inputs == from);
  CHECK(tables[0]->rows.size() == 2);
  CHECK(tables[1]->rows.size() == 2);
  REQUIRE(lb.compression_points.size() == 2);
  CHECK(lb.compression_points[0].inputs.empty());
  CHECK_THAT(lb.compression_points[1].title, Catch::EndsWith(" · " + from));
  CHECK(lb.compression_points[1].rows.size() == 2);
  size_t replayed_figures = 0;
  for (const auto& f : lb.fidelity) replayed_figures += f.subtitle.find(from) != std::string::npos;
  CHECK(replayed_figures == 2);  // attn_recall and out_rel_l2
  CHECK_THAT(leaderboard_markdown(lb), Catch::Contains("### Zeta 9 · f16 · " + from));
}

TEST_CASE("leaderboard: a selection-only method ranks beside the compaction methods, marked, its bytes read per step shown", "[unit]") {
  std::vector<Json> recs;
  const auto add = [&](const std::string& method, double recall, bool selection_only) {
    Json r = record(method, "famK", method + "/8000", "pass", 1e-4, 1e6);
    r["params"] = {{"kv_len", 8000}, {"budget", 1000}};
    const double full = 8000 * 1024.0;
    r["quality"] = {{"compression_point", 8.0}, {"compression_ratio", 8.0}, {"kv_bytes_full", full},
                    {"kv_bytes_kept", selection_only ? full : full / 8}, {"index_bytes", selection_only ? 0.0 : 4000.0},
                    {"attn_recall", recall}, {"out_rel_l2", 1 - recall}};
    if (selection_only) {
      r["quality"]["selection_only"] = true;
      r["quality"]["kv_bytes_read_per_step"] = full / 8;
    }
    recs.push_back(r);
  };
  add("evicts", 0.5, false);
  add("selects", 0.9, true);
  const Leaderboard lb = build_leaderboard({doc_of(recs)}, {"r.json"}, "test");
  REQUIRE(lb.compression_points.size() == 1);
  const LbSection& sec = lb.compression_points[0];
  CHECK(cell(sec, 0, "method") == "selects (selection-only)");
  CHECK(cell(sec, 0, "kv_bytes") == "7.81 MiB");      // the whole cache stays
  CHECK(cell(sec, 0, "read_per_step") == "1000 KiB");  // what a step reads
  CHECK(cell(sec, 1, "method") == "evicts");
}

TEST_CASE("leaderboard.md escapes every text that came from a results file", "[unit]") {
  Json r = record("<script>alert(1)</script>", "fam<b>", "x/<img src=x onerror=alert(1)>", "crashed", 0, 1e6);
  r["label"] = "[click](javascript:alert(1)) `code` | pipe";
  r["device"] = "<iframe>";
  r["reason"] = "<img onerror=alert(2)>";
  const Leaderboard lb = build_leaderboard({doc_of({r})}, {"<b>r.json</b>"}, "attnbench leaderboard `<x>`");
  const std::string md = leaderboard_markdown(lb);
  // Outside code spans (where HTML is text already), no tag and no link survives.
  std::string prose;
  for (size_t i = 0; i < md.size();) {
    if (md[i] != '`' || (i > 0 && md[i - 1] == '\\')) {
      prose += md[i++];
      continue;
    }
    size_t n = 0;
    while (i + n < md.size() && md[i + n] == '`') ++n;
    const size_t close = md.find(std::string(n, '`'), i + n);
    i = close == std::string::npos ? md.size() : close + n;
  }
  for (const char* raw : {"<script>", "<img", "<iframe>", "<b>", "[click]("}) {
    INFO(raw);
    CHECK(prose.find(raw) == std::string::npos);
  }
  CHECK_THAT(md, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;") && Catch::Contains("&lt;img onerror=alert(2)&gt;") &&
                     Catch::Contains("\\[click\\]"));
  // Code spans: a backtick inside cannot close the span.
  CHECK_THAT(md, Catch::Contains("`` attnbench leaderboard `<x>` ``"));
}

TEST_CASE("leaderboard: the same case on several backends side by side, with ratios to the reference", "[unit]") {
  // Two files: zeta and eta on one machine, zeta on another device in the second file, and a
  // third file of the first machine's zeta, which joins its column.
  const auto on = [](Json r, const std::string& backend, const std::string& device, double median_s) {
    r["backend"] = backend;
    r["device"] = device;
    if (r.contains("timing")) r["timing"]["median_s"] = median_s;
    return r;
  };
  const Json x1 = record("alpha", "fam", "alpha/x1/f16/s1", "pass", 4e-3, 1e9);
  const Json x2 = record("alpha", "fam", "alpha/x2/f16/s1", "pass", 9e-3, 2e9);
  const Json y1 = record("beta", "other", "beta/y1/f16/s1", "pass", 1e-3, 1e9);
  const Json lone = record("beta", "other", "beta/lone/f16/s1", "pass", 1e-3, 1e9);
  Json slow_variant = on(x1, "eta", "Eta 1", 8e-3);
  slow_variant["variant"] = "v0";
  const Json file1 = doc_of({x1, x2, y1, lone, on(x1, "eta", "Eta 1", 1e-3), slow_variant, on(x2, "eta", "Eta 1", 1e-3),
                             on(record("beta", "other", "beta/y1/f16/s1", "fail", 0, 1e9), "eta", "Eta 1", 0)});
  const Json file2 = doc_of({on(x1, "zeta", "Zeta 10", 2e-3)});
  const Json file3 = doc_of({record("gamma", "fam", "gamma/z/f16/s1", "pass", 1e-3, 1e9)});
  const Leaderboard lb = build_leaderboard({file1, file2, file3}, {"a.json", "b.json", "c.json"}, "test");
  const LbAcross& a = lb.across;
  // A column is a backend on a device: zeta on Zeta 10 is another column, though the same backend.
  REQUIRE(a.columns == std::vector<std::string>{"zeta · Zeta 9", "eta · Eta 1", "zeta · Zeta 10"});
  CHECK(a.reference == 0);
  CHECK(a.column_help[2] == "[2] b.json");
  REQUIRE(a.sections.size() == 2);  // fam, then other; beta/lone ran on one column only
  const LbSection& fam = a.sections[0];
  REQUIRE(fam.rows.size() == 3);    // x1, x2, the geometric mean
  CHECK(cell(fam, 0, "case") == "x1/f16/s1");
  CHECK(cell(fam, 0, "ratio.1") == "×4");  // eta's faster variant: 4 ms over 1 ms
  CHECK(cell(fam, 0, "ratio.2") == "×2");
  CHECK(cell(fam, 1, "ratio.1") == "×9");
  CHECK(cell(fam, 1, "latency.2") == "—");  // x2 did not run on the second machine
  CHECK(cell(fam, 2, "ratio.1") == "×6");   // √(4·9)
  CHECK(cell(fam, 2, "ratio.2") == "×2");
  const LbSection& other = a.sections[1];
  REQUIRE(other.rows.size() == 2);
  CHECK(cell(other, 0, "latency.1") == "fail");
  CHECK(cell(other, 0, "ratio.1") == "—");
  REQUIRE(a.methods.size() == 2);
  CHECK(a.methods[0].method == "alpha");
  CHECK(a.methods[0].cases[1] == 2);
  CHECK(*a.methods[0].ratio[1] == Approx(6.0));
  CHECK_FALSE(a.methods[1].ratio[1].has_value());
  // Another reference: eta, so zeta's ratios are below 1.
  const Leaderboard by_eta = build_leaderboard({file1, file2}, {"a.json", "b.json"}, "test", {"eta"});
  CHECK(by_eta.across.reference == 1);
  CHECK(cell(by_eta.across.sections[0], 0, "ratio.0") == "×0.25");
  CHECK_THROWS_WITH(build_leaderboard({file1}, {"a.json"}, "test", {"gamma"}),
                    Catch::Contains("--reference gamma: no case ran on it beside another backend"));
  // Both renderings show it.
  CHECK_THAT(leaderboard_markdown(lb), Catch::Contains("## Backends side by side") && Catch::Contains("| alpha | 2 | ×6 | ×2 |"));
  const std::string html = leaderboard_html(lb);
  CHECK_THAT(html, Catch::Contains("<table class=\"lb across\">") && Catch::Contains("data-kind=\"across\""));
}

// The committed page (ci/leaderboard.sh): what the README promises of it, read from the file itself.
TEST_CASE("the committed leaderboard ranks model-sized runs, sweeps 1k-32k on the CPU, and sets the ci runs side by side", "[unit]") {
  std::ifstream in(std::string(ATTNBENCH_SOURCE_DIR) + "/results/leaderboard.html");
  REQUIRE(in.good());
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Coverage: the ci runs are in it, marked as such, and the side-by-side view is drawn.
  for (const char* f : {"results/cpu-ci.json", "results/lavapipe-ci.json"}) {
    INFO(f);
    CHECK_THAT(page, Catch::Contains(std::string("<td>") + f + "</td>"));
  }
  CHECK_THAT(page, Catch::Contains("coverage: its rows are in the support matrix"));
  CHECK_THAT(page, Catch::Contains("<h2>Backends side by side</h2>") && Catch::Contains("data-kind=\"across\""));
  // Latency plots: the widest kv_len span of one CPU series.
  double widest_lo = 0, widest_hi = 0;
  size_t plots = 0;
  for (size_t at = page.find("data-kind=\"latency\""); at != std::string::npos; at = page.find("data-kind=\"latency\"", at + 1)) {
    ++plots;
    const std::string svg = page.substr(at, page.find("</svg>", at) - at);
    CHECK_THAT(svg, Catch::Contains("kv_len (log)") && Catch::Contains("median µs (log)"));
    std::map<std::string, std::pair<double, double>> span;  // series -> (min, max) kv_len
    for (size_t t = svg.find("<title>"); t != std::string::npos; t = svg.find("<title>", t + 1)) {
      const size_t colon = svg.find(": kv_len=", t);
      if (colon == std::string::npos || colon > svg.find("</title>", t)) continue;
      const std::string series = svg.substr(t + 7, colon - t - 7);
      if (series.find(" cpu/") == std::string::npos) continue;
      const double kv = std::stod(svg.substr(colon + 9));
      auto [it, fresh] = span.try_emplace(series, kv, kv);
      it->second = {std::min(it->second.first, kv), std::max(it->second.second, kv)};
    }
    for (const auto& [s, lohi] : span)
      if (lohi.second / lohi.first > widest_hi / std::max(widest_lo, 1.0)) std::tie(widest_lo, widest_hi) = lohi;
  }
  CHECK(plots >= 5);
  CHECK(widest_lo <= 1024);
  CHECK(widest_hi >= 32768);
}
