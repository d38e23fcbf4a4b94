// The leaderboard's model: records in, sections of cells out (rules: leaderboard.h): headline
// cases, sections, related joins and speedups, the support matrix and the plots' data. Each
// column's cell comes from leaderboard_cells.cpp; the renderers (leaderboard_markdown.cpp,
// leaderboard_html.cpp) only lay the cells out.
#include "attnbench/leaderboard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "attnbench/compare.h"
#include "attnbench/error.h"
#include "attnbench/results.h"
#include "leaderboard_cells.h"

namespace attnbench {

namespace {

using namespace lb;

// First-seen order of keys.
struct FirstSeen {
  std::vector<std::string> keys;
  void add(const std::string& k) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  size_t rank(const std::string& k) const { return std::find(keys.begin(), keys.end(), k) - keys.begin(); }
};

// The record of a related case on the same backend and device in the same file: the same variant
// when it passed, else the fastest passing variant, else any row of it (to show its status).
const Rec* related_rec(const std::vector<Rec>& recs, const std::vector<LbSource>& sources, const Rec& self,
                       const std::string& case_id) {
  const Rec *same = nullptr, *fastest = nullptr, *any = nullptr;
  for (const Rec& r : recs) {
    if (r.src != self.src || r.row.case_id != case_id || r.row.backend != self.row.backend ||
        device_of(sources, r) != device_of(sources, self))
      continue;
    if (!any) any = &r;
    if (!r.passed() || !r.median_us()) continue;
    if (r.row.variant == self.row.variant) same = &r;
    if (!fastest || *r.median_us() < *fastest->median_us()) fastest = &r;
  }
  return same ? same : fastest ? fastest : any;
}

// Columns every table of records shows, with their cells.
const LbColumn kMethodColumn{"method", "method", "method and phase; the catalog id in the tooltip"};
const LbColumn kBackendColumn{"backend", "backend/variant", "where it ran"};
const LbColumn kStatusColumn{"status", "status",
                             "pass, fail, error, crashed, timeout, unsupported, skipped; pass (noisy): cv above the target"};
LbCell method_cell(const Rec& r) { return {r.method_label(), std::nullopt, "", r.row.catalog_id}; }

// The median times of a record's related cases that passed, by role, and their methods.
struct RelatedTimes {
  std::map<std::string, double> us;
  std::map<std::string, std::string> methods;
};

RelatedTimes related_times(const std::vector<Rec>& recs, const std::vector<LbSource>& sources, const Rec& r) {
  RelatedTimes t;
  for (const RelatedRef& rel_ref : r.row.related) {
    const Rec* rel = related_rec(recs, sources, r, rel_ref.case_id);
    if (!rel || !rel->passed() || !rel->median_us()) continue;
    t.us[rel_ref.role] = *rel->median_us();
    t.methods[rel_ref.role] = rel->method_label();
  }
  return t;
}

// Baseline time over the method's own; <x>_full over every other <x>_<y> companion.
LbCell speedup_cell(const Rec& r, const RelatedTimes& t) {
  std::vector<std::string> parts;
  std::optional<double> first;
  const auto self_us = r.median_us();
  if (t.us.count("baseline") && self_us && r.passed()) {
    const double s = t.us.at("baseline") / *self_us;
    parts.push_back(fmt_sig(s) + "× vs " + t.methods.at("baseline"));
    first = s;
  }
  for (const auto& [full_role, full_us] : t.us) {
    const size_t cut = full_role.rfind("_full");
    if (cut == std::string::npos || cut + 5 != full_role.size()) continue;
    const std::string stem = full_role.substr(0, cut + 1);
    for (const auto& [role, us] : t.us) {
      if (role == full_role || role.rfind(stem, 0) != 0) continue;
      const double sp = full_us / us;
      parts.push_back(fmt_sig(sp) + "× " + role + " vs " + full_role);
      if (!first) first = sp;
    }
  }
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : "; ") + p;
  return text.empty() ? dash("no timed baseline or companion pair") : LbCell{text, first, "", text};
}

// The suite cases of a row's method on its backend and device in its file, the row's variant (or
// none: unsupported and skipped rows), the row itself first.
std::vector<const Rec*> siblings(const std::vector<Rec>& recs, const std::vector<LbSource>& sources, const Rec& self) {
  std::vector<const Rec*> out = {&self};
  for (const Rec& r : recs)
    if (&r != &self && r.src == self.src && r.related_rank() == 0 && r.method_label() == self.method_label() &&
        r.row.backend == self.row.backend && device_of(sources, r) == device_of(sources, self) &&
        (r.row.variant == self.row.variant || r.row.variant == "-"))
      out.push_back(&r);
  return out;
}

// "12/12 pass" or "10/12 pass, 1 fail, 1 unsupported": every suite case of the row's method there.
LbCell all_cases_cell(const std::vector<const Rec*>& sibs) {
  std::map<Status, int> counts;
  for (const Rec* r : sibs) counts[r->row.status]++;
  const int n = static_cast<int>(sibs.size()), pass = counts[Status::pass];
  std::string text = cat(pass, "/", n, " pass");
  bool bad = false;
  for (const auto& [st, k] : counts) {
    if (st == Status::pass || k == 0) continue;
    text += cat(", ", k, " ", status_name(st));
    bad = bad || is_bad(st);
  }
  std::string title;
  for (const Rec* r : sibs)
    if (!r->passed()) title += cat(title.empty() ? "" : "\n", r->row.case_id, ": ", status_name(r->row.status), " ", r->row.reason);
  const Status colour = bad ? Status::fail : pass == n ? Status::pass : Status::unsupported;
  return {text, n ? static_cast<double>(pass) / n : 0.0, status_name(colour), title};
}

// One section's table: the fixed columns, the quality keys and related roles of its rows.
void fill_section(LbSection& sec, const std::vector<const Rec*>& rows, const std::vector<Rec>& recs,
                  const std::vector<LbSource>& sources, bool several_sources) {
  FirstSeen quality, roles;
  for (const Rec* r : rows) {
    for (const Rec* s : siblings(recs, sources, *r))
      for (const auto& [k, v] : flat_quality(*s)) quality.add(k);
    for (const RelatedRef& rel : r->row.related) roles.add(rel.role);
  }
  sec.columns = {kMethodColumn, {"case", "case", "the headline case's label (its id in the tooltip and below the table)"}};
  if (several_sources) sec.columns.push_back({"run", "run", "the results file, numbered as in the runs table"});
  sec.columns.insert(sec.columns.end(),
                     {kBackendColumn,
                      kStatusColumn,
                      {"latency", "median", "median device time per launch over the repetitions"},
                      {"throughput", "throughput", "work.flops (TFLOP/s) or work.bytes (GB/s) per second, by work.bound"},
                      {"pct_peak", "% peak", "of the ceiling the row names, measured in the same run: read or copy bandwidth, or the rate of the compute path its kernel took (fp32 FMA, a 16-bit unit); the cell names it"},
                      {"memory", "peak mem", "peak bytes the impl held: inputs, outputs and workspace"},
                      {"equivalence", "equivalence", "worst max_abs/gate of TOL outputs, SET tie swaps, SEMI boundary cases, STAT p-value"},
                      {"cases", "all cases", "statuses of every suite case of the method on this backend and device"}});
  for (const auto& k : quality.keys)
    sec.columns.push_back({"q." + k, k, "quality: " + k + " of the headline case (marked * when from another case of the method)"});
  for (const auto& role : roles.keys)
    sec.columns.push_back({"rel." + role, role, "median time of the related `" + role + "` case on the same backend"});
  if (!roles.keys.empty())
    sec.columns.push_back({"speedup", "speedup", "baseline time over the method's; <x>_full over the other <x>_ companions"});

  for (const Rec* r : rows) {
    std::vector<LbCell> cells;
    const std::string& label = r->row.label;
    cells.push_back(method_cell(*r));
    cells.push_back({label.empty() ? (r->row.headline ? "headline" : "most work") : label, std::nullopt, "", r->row.case_id});
    if (several_sources) cells.push_back({cat("[", r->src + 1, "]"), static_cast<double>(r->src + 1), "", sources[r->src].path});
    cells.push_back({r->row.backend + "/" + r->row.variant, std::nullopt, "", device_of(sources, *r)});
    cells.push_back(status_cell(*r));
    cells.push_back(latency_cell(*r));
    cells.push_back(throughput_cell(*r));
    cells.push_back(peak_cell(*r, sources));
    cells.push_back(memory_cell(*r));
    cells.push_back(equivalence_cell(*r));
    const std::vector<const Rec*> sibs = siblings(recs, sources, *r);
    cells.push_back(all_cases_cell(sibs));
    // A figure the headline case lacks comes from the first other case that has it (a STAT case's
    // p-value, say), marked with * and that case's id.
    for (const auto& k : quality.keys) {
      LbCell cell = dash();
      for (const Rec* s : sibs) {
        const auto q = flat_quality(*s);
        auto it = std::find_if(q.begin(), q.end(), [&](const auto& kv) { return kv.first == k; });
        if (it == q.end()) continue;
        cell = value_cell(k, it->second);
        if (s != r) {
          cell.text += "*";
          cell.title += " (from " + s->row.case_id + ")";
        }
        break;
      }
      cells.push_back(cell);
    }
    // Related rows and the speedups they give.
    RelatedTimes rt;
    for (const auto& role : roles.keys) {
      const auto it = std::find_if(r->row.related.begin(), r->row.related.end(),
                                   [&](const RelatedRef& x) { return x.role == role; });
      if (it == r->row.related.end()) {
        cells.push_back(dash());
        continue;
      }
      const std::string id = it->case_id;
      const Rec* rel = related_rec(recs, sources, *r, id);
      if (!rel) {
        cells.push_back(dash("not in this file: " + id));
        continue;
      }
      rt.methods[role] = rel->method_label();
      const auto us = rel->median_us();
      if (!rel->passed() || !us) {
        cells.push_back({shown_status(*rel), std::nullopt, shown_status(*rel), id + ": " + rel->row.reason});
        continue;
      }
      rt.us[role] = *us;
      const bool other_variant = rel->row.variant != r->row.variant;
      cells.push_back({fmt_us(*us) + (other_variant ? " (" + rel->row.variant + ")" : ""), *us,
                       rel->noisy() ? "noisy" : "", id + " on " + rel->row.backend + "/" + rel->row.variant});
    }
    if (!roles.keys.empty()) cells.push_back(speedup_cell(*r, rt));
    sec.rows.push_back(std::move(cells));
    sec.cases.push_back({r->method_label() + (label.empty() ? "" : " (" + label + ")"), r->row.case_id});
  }
  // Each headline case once.
  std::vector<std::pair<std::string, std::string>> unique;
  for (const auto& c : sec.cases)
    if (std::find(unique.begin(), unique.end(), c) == unique.end()) unique.push_back(c);
  sec.cases = unique;
}

// Headline cases of one file: per (method, phase), the flagged cases (most flops per dtype) or
// the suite case with the most work.
std::set<std::string> headline_cases(const std::vector<Rec>& recs, size_t src) {
  struct CaseWork {
    double flops = 0, bytes = 0;
    bool headline = false;
    std::string dtype, method;
  };
  std::map<std::string, CaseWork> cases;
  for (const Rec& r : recs) {
    if (r.src != src || r.related_rank() != 0) continue;
    CaseWork& w = cases[r.row.case_id];
    w.flops = std::max(w.flops, r.flops());
    w.bytes = std::max(w.bytes, r.bytes());
    w.headline = w.headline || r.row.headline;
    w.dtype = dtype_name(r.row.dtype);
    w.method = r.method_label() + "\n" + inputs_of(r);  // a headline per inputs source
  }
  const auto more = [](const CaseWork& a, const CaseWork& b) {
    return a.flops != b.flops ? a.flops > b.flops : a.bytes > b.bytes;
  };
  std::map<std::pair<std::string, std::string>, std::string> best;  // (method, dtype or "") -> case id
  std::set<std::string> flagged_methods;
  for (const auto& [id, w] : cases)
    if (w.headline) flagged_methods.insert(w.method);
  for (const auto& [id, w] : cases) {
    const bool flagged = flagged_methods.count(w.method) != 0;
    if (flagged && !w.headline) continue;
    const auto key = std::make_pair(w.method, flagged ? w.dtype : std::string());
    auto it = best.find(key);
    if (it == best.end() || more(w, cases[it->second])) best[key] = id;
  }
  std::set<std::string> out;
  for (const auto& [k, id] : best) out.insert(id);
  return out;
}

void build_matrix(Leaderboard& lb, const std::vector<Rec>& recs) {
  LbMatrix& m = lb.matrix;
  FirstSeen methods, columns;
  std::map<std::string, std::string> help;
  for (const Rec& r : recs) {
    const std::string col = cat("[", r.src + 1, "] ", r.row.backend);
    methods.add(r.method_label());
    columns.add(col);
    help[col] = device_of(lb.sources, r) + " — " + lb.sources[r.src].path;
  }
  m.methods = methods.keys;
  m.columns = columns.keys;
  for (const auto& c : m.columns) m.column_help.push_back(help[c]);
  // Worst first: what colours a cell (unsupported and skipped only when nothing ran). A noisy pass
  // is a pass whose time is not to be trusted, not a failure: it colours as a pass.
  const std::vector<std::string> severity = {status_name(Status::crashed), status_name(Status::timeout),
                                             status_name(Status::error),   status_name(Status::fail),
                                             status_name(Status::pass),    "noisy",
                                             status_name(Status::unsupported), status_name(Status::skipped)};
  for (const Rec& r : recs) {
    const std::string st = shown_status(r);
    LbMatrixCell& cell = m.cells[{methods.rank(r.method_label()), columns.rank(cat("[", r.src + 1, "] ", r.row.backend))}];
    cell.counts[st]++;
    if (st == "noisy") cell.noisy_cv = std::max(cell.noisy_cv, r.row.timing->cv);
    if (!r.passed() && !r.row.reason.empty() && cell.reasons.size() < 4 &&
        std::find(cell.reasons.begin(), cell.reasons.end(), r.row.reason) == cell.reasons.end())
      cell.reasons.push_back(r.row.reason);
  }
  for (auto& [k, cell] : m.cells)
    for (const auto& s : severity)
      if (cell.counts.count(s)) {
        cell.worst = s == "noisy" ? status_name(Status::pass) : s;
        break;
      }
}

void build_latency_plots(Leaderboard& lb, const std::vector<Rec>& recs) {
  FirstSeen methods;
  for (const Rec& r : recs)
    if (r.passed() && r.median_us() && r.row.params.contains("kv_len"))
      methods.add(r.method_label());
  for (const auto& method : methods.keys) {
    // Series key: everything but kv_len (dtype included).
    std::map<std::string, std::set<double>> lengths;
    std::map<std::string, int> count;
    std::map<std::string, std::string> subtitle;
    const auto key_of = [](const Rec& r) {
      Json p = r.row.params;
      p.erase("kv_len");
      std::string s;
      for (const auto& [k, v] : p.items()) s += (s.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
      return s + ", " + std::string(dtype_name(r.row.dtype));
    };
    // A sweep the suite asked for beats lengths that related cases happen to share: series of
    // suite cases first, then the most kv lengths, then the most rows.
    std::map<std::string, bool> from_suite;
    for (const Rec& r : recs) {
      if (r.method_label() != method || !r.passed() || !r.median_us() || !r.row.params.contains("kv_len")) continue;
      const std::string k = key_of(r);
      lengths[k].insert(r.row.params.at("kv_len").get<double>());
      count[k]++;
      from_suite[k] = from_suite[k] || r.related_rank() == 0;
    }
    std::string best;
    const auto rank = [&](const std::string& k) {
      return std::make_tuple(from_suite[k] && lengths[k].size() >= 2, lengths[k].size(), count[k]);
    };
    for (const auto& [k, l] : lengths)
      if (l.size() >= 2 && (best.empty() || rank(k) > rank(best))) best = k;
    if (best.empty()) continue;
    LbLatencyPlot plot{method, best, {}};
    FirstSeen names;
    std::map<std::string, std::map<double, double>> pts;
    for (const Rec& r : recs) {
      if (r.method_label() != method || !r.passed() || !r.median_us() || !r.row.params.contains("kv_len") ||
          key_of(r) != best)
        continue;
      const std::string name = cat("[", r.src + 1, "] ", r.row.backend, "/", r.row.variant);
      names.add(name);
      pts[name][r.row.params.at("kv_len").get<double>()] = *r.median_us();
    }
    for (const auto& n : names.keys) plot.series.push_back({n, {pts[n].begin(), pts[n].end()}});
    lb.latency_plots.push_back(std::move(plot));
  }
}

// Compression points (leaderboard.h): the KV family's quality figures, read by name only.
constexpr const char* kPointKey = "compression_point";

std::optional<double> quality_number(const Rec& r, const char* key) {
  if (!r.row.quality || !r.row.quality->contains(key) || !(*r.row.quality)[key].is_number()) return std::nullopt;
  return (*r.row.quality)[key].get<double>();
}

// The KV family's quality figures (reference/kvcomp/compacted_cache.h), plotted wherever records carry them.
constexpr const char* kKvBytesKey = "kv_bytes_kept";
const std::vector<std::string> kFidelityKeys = {"attn_recall", "out_rel_l2"};

void build_fidelity(Leaderboard& lb, const std::vector<Rec>& recs) {
  // (figure, full-cache bytes, dtype) -> points; a case once, whichever backend ran it.
  using Key = std::tuple<size_t, std::string, double, std::string>;  // (figure, inputs, −full bytes, dtype)
  std::map<Key, LbFidelityFigure> figures;
  std::map<Key, double> kv_len;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Rec& r : recs) {
    if (!r.passed() || !r.row.quality) continue;
    const Json& q = *r.row.quality;
    if (!q.contains(kKvBytesKey) || !q[kKvBytesKey].is_number()) continue;
    if (!seen.insert({r.row.method, r.row.case_id}).second) continue;
    const double full = quality_number(r, "kv_bytes_full").value_or(0.0);
    const std::string dtype(dtype_name(r.row.dtype));
    for (size_t k = 0; k < kFidelityKeys.size(); ++k) {
      if (!q.contains(kFidelityKeys[k]) || !q[kFidelityKeys[k]].is_number()) continue;
      // Largest cache first: the model-sized cases lead.
      const Key key{k, inputs_of(r), -full, dtype};
      LbFidelityFigure& f = figures[key];
      f.figure = kFidelityKeys[k];
      f.points.push_back({r.row.method, r.row.case_id, q[kKvBytesKey].get<double>(), {{f.figure, q[f.figure].get<double>()}}});
      if (r.row.params.contains("kv_len") && r.row.params.at("kv_len").is_number())
        kv_len[key] = r.row.params.at("kv_len").get<double>();
    }
  }
  for (auto& [key, f] : figures) {
    const double full = -std::get<2>(key);
    f.subtitle = full > 0 ? cat("full cache ", fmt_bytes(full)) : std::string("full cache not reported");
    if (kv_len.count(key)) f.subtitle += cat(" (kv_len ", fmt_sig(kv_len.at(key), 12), ")");
    f.subtitle += cat(", ", std::get<3>(key), "; held-out queries");
    if (!std::get<1>(key).empty()) f.subtitle += cat("; ", std::get<1>(key));
    lb.fidelity.push_back(std::move(f));
  }
}

// "8×, kvpress compression_ratio 0.875".
std::string point_label(double point) {
  return cat(fmt_sig(point), "×, kvpress compression_ratio ", fmt_sig(1 - 1 / point));
}

std::string series_name(const Rec& r) { return cat(r.method_label(), " ", r.row.backend, "/", r.row.variant); }

double kv_len_of(const Rec& r) { return r.row.params.contains("kv_len") ? r.row.params.at("kv_len").get<double>() : 0.0; }

void build_compression_points(Leaderboard& lb, const std::vector<Rec>& recs, bool several_sources) {
  // (file, device, dtype, full-cache bytes, point to 3 digits) -> records, in order.
  using Key = std::tuple<size_t, std::string, std::string, std::string, double, double>;
  std::map<Key, std::vector<const Rec*>> points;
  for (const Rec& r : recs) {
    const auto point = quality_number(r, kPointKey), full = quality_number(r, "kv_bytes_full");
    if (r.related_rank() != 0 || !point || !full) continue;
    points[{r.src, inputs_of(r), device_of(lb.sources, r), std::string(dtype_name(r.row.dtype)), *full,
            std::stod(fmt_sig(*point))}]
        .push_back(&r);
  }
  const auto recall = [](const Rec* r) { return quality_number(*r, "attn_recall").value_or(-1.0); };
  const auto rel_l2 = [](const Rec* r) { return quality_number(*r, "out_rel_l2").value_or(INFINITY); };
  for (auto& [key, rows] : points) {
    const auto& [src, replayed, device, dtype, full, point] = key;
    // A ranking needs two methods: a suite's edge cases (everything kept, one token) stand alone.
    std::set<std::string> methods_here;
    for (const Rec* r : rows) methods_here.insert(r->method_label());
    if (methods_here.size() < 2) continue;
    // Rows that passed first, then by fidelity on the held-out queries.
    std::stable_sort(rows.begin(), rows.end(), [&](const Rec* a, const Rec* b) {
      return std::make_tuple(!a->passed(), -recall(a), rel_l2(a)) < std::make_tuple(!b->passed(), -recall(b), rel_l2(b));
    });
    LbSection sec;
    sec.family = "compression points";
    sec.device = device;
    sec.dtype = dtype;
    // The label from a record's own value (the key is rounded to 3 digits: 1.33 for 4/3).
    const double asked = *quality_number(*rows[0], kPointKey);
    sec.title = cat(point_label(asked), " · kv_len ", fmt_sig(kv_len_of(*rows[0]), 12), ", full cache ", fmt_bytes(full),
                    several_sources ? cat(" · [", src + 1, "]") : "", replayed.empty() ? "" : cat(" · ", replayed));
    sec.inputs = replayed;
    sec.columns = {{"rank", "rank", "by attn_recall on the held-out queries (then out_rel_l2), rows that passed first"},
                   kMethodColumn,
                   kBackendColumn,
                   kStatusColumn,
                   {"q.attn_recall", "attn_recall", "attention mass the kept keys hold for the held-out queries (a selection-only row: for the decode query its set was chosen for, as it chooses again at every step; its held-out figure is quality heldout_attn_recall)"},
                   {"q.out_rel_l2", "out_rel_l2", "relative L2 error of attention over the kept keys for the held-out queries (a selection-only row: for its decode query)"},
                   {"q.compression_ratio", "achieved", "kv_len over the mean kept tokens; ≠ where a per-layer or per-head budget keeps more or less than the point"},
                   {"kv_bytes", "KV bytes", "kept K and V plus the kept indices (quality kv_bytes_kept + index_bytes); a selection-only method keeps the whole cache"},
                   {"read_per_step", "read / step", "K and V bytes one decode step reads (quality kv_bytes_read_per_step; else the kept cache and its indices)"},
                   {"latency", "compression", "median time of the compression step (scoring, selection, compaction)"},
                   {"vs_decode", "× decode step", "the compression's time over one decode step on the full cache (the <x>_full companion)"},
                   {"speedup", "decode speedup", "the full-cache decode companion over the compressed one"}};
    int rank = 0;
    for (const Rec* r : rows) {
      std::vector<LbCell> cells;
      ++rank;
      cells.push_back({cat(rank), static_cast<double>(rank), "", ""});
      // Selection-only methods keep the cache and save bandwidth: marked, and their timed row is a
      // whole decode step (choosing the set, then reading it), not a compression.
      const bool selection_only = r->row.quality->contains("selection_only") && (*r->row.quality)["selection_only"] == true;
      cells.push_back(method_cell(*r));
      if (selection_only) {
        cells.back().text += " (selection-only)";
        cells.back().title = cat(r->row.catalog_id, ": memory unchanged; each decode step reads the kept set alone");
      }
      cells.push_back({r->row.backend + "/" + r->row.variant, std::nullopt, "", r->row.case_id});
      cells.push_back(status_cell(*r));
      for (const char* k : {"attn_recall", "out_rel_l2", "compression_ratio"}) {
        const auto v = quality_number(*r, k);
        cells.push_back(v ? value_cell(k, Json(*v)) : dash());
      }
      // A layer's or a head's own budget can keep more or less than the point asks: say so.
      const auto achieved = quality_number(*r, "compression_ratio");
      if (achieved && std::abs(*achieved / asked - 1) > 0.02) {
        cells.back().text += " ≠";
        cells.back().title = cat("keeps ", *achieved < asked ? "more" : "less", " than the point asks (", fmt_sig(*achieved),
                                 "× against ", fmt_sig(asked), "×): its budget is per layer or per head; compare it with ",
                                 "rows of equal achieved compression");
      }
      const auto kept = quality_number(*r, "kv_bytes_kept"), index = quality_number(*r, "index_bytes");
      cells.push_back(kept ? LbCell{fmt_bytes(*kept + index.value_or(0)), *kept + index.value_or(0), "",
                                    cat(fmt_bytes(*kept), " of K and V, ", fmt_bytes(index.value_or(0)), " of indices")}
                           : dash());
      const auto read = quality_number(*r, "kv_bytes_read_per_step");
      const std::optional<double> step_bytes = read ? read : kept ? std::optional<double>(*kept + index.value_or(0)) : std::nullopt;
      cells.push_back(step_bytes ? LbCell{fmt_bytes(*step_bytes), *step_bytes, "",
                                          read ? "what one decode step reads (kv_bytes_read_per_step)"
                                               : "a decode step over the compacted cache reads all of it"}
                                 : dash());
      cells.push_back(latency_cell(*r));
      if (selection_only) cells.back().title = "median time of one decode step: choosing the set, then attention over it";
      const RelatedTimes rt = related_times(recs, lb.sources, *r);
      LbCell per_step = dash("no timed full-cache companion");
      for (const auto& [role, us] : rt.us)
        if (role.size() > 5 && role.compare(role.size() - 5, 5, "_full") == 0 && r->passed() && r->median_us()) {
          const double x = *r->median_us() / us;
          per_step = {fmt_sig(x) + "×", x, "", cat(fmt_us(*r->median_us()), " over ", fmt_us(us), " (", role, ")")};
        }
      cells.push_back(per_step);
      cells.push_back(speedup_cell(*r, rt));
      sec.rows.push_back(std::move(cells));
      sec.cases.push_back({r->method_label(), r->row.case_id});
    }
    lb.compression_points.push_back(std::move(sec));
  }

  // A line per method, and per value of any other parameter its cases there vary (pyramidkv's
  // layer): what the points of a line share but the kv length and the budget that set them.
  std::map<const Rec*, std::string> line_of;
  {
    std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // series -> param -> values
    for (const auto& [key, rows] : points)
      for (const Rec* r : rows)
        for (const auto& [k, v] : r->row.params.items()) values[series_name(*r)][k].insert(v.dump());
    for (const auto& [key, rows] : points)
      for (const Rec* r : rows) {
        std::string name = series_name(*r);
        for (const auto& [k, vs] : values[series_name(*r)])
          if (vs.size() > 1 && k != "kv_len" && k != "budget") name += cat(" ", k, "=", r->row.params.at(k).dump());
        line_of[r] = name;
      }
  }
  // Fidelity against the point: per (file, inputs, device, dtype, full-cache bytes).
  using PlotKey = std::tuple<size_t, std::string, std::string, std::string, double>;
  std::map<PlotKey, std::map<std::string, std::map<double, double>>> fidelity;
  // Compression time against kv_len: per (file, inputs, device, dtype, point).
  std::map<PlotKey, std::map<std::string, std::map<double, double>>> times;
  for (const auto& [key, rows] : points) {
    const auto& [src, replayed, device, dtype, full, point] = key;
    for (const Rec* r : rows) {
      if (!r->passed()) continue;
      if (const auto v = quality_number(*r, "attn_recall")) fidelity[{src, replayed, device, dtype, full}][line_of[r]][point] = *v;
      if (r->median_us()) times[{src, replayed, device, dtype, point}][line_of[r]][kv_len_of(*r)] = *r->median_us();
    }
  }
  const auto inputs_note = [](const std::string& replayed) { return replayed.empty() ? std::string() : cat(" · ", replayed); };
  const auto add = [&](LbLinePlot plot, const std::map<std::string, std::map<double, double>>& lines) {
    bool two = false;
    for (const auto& [name, pts] : lines) {
      plot.series.push_back({name, {pts.begin(), pts.end()}});
      two = two || pts.size() >= 2;
    }
    if (two) lb.compression_plots.push_back(std::move(plot));
  };
  for (const auto& [key, lines] : fidelity) {
    const auto& [src, replayed, device, dtype, full] = key;
    add({"kv-fidelity", "attn_recall against compression", cat(device, " · ", dtype, ", full cache ", fmt_bytes(full),
                                                              several_sources ? cat(" · [", src + 1, "]") : "",
                                                              inputs_note(replayed)),
         "compression (kv_len / budget, log)", "attn_recall", "compression", true, false, "", {}},
        lines);
  }
  for (const auto& [key, lines] : times) {
    const auto& [src, replayed, device, dtype, point] = key;
    add({"kv-time", "compression time against kv_len", cat(point_label(point), " · ", device, " · ", dtype,
                                                           several_sources ? cat(" · [", src + 1, "]") : "",
                                                           inputs_note(replayed)),
         "kv_len (log)", "median µs (log)", "kv_len", true, true, "us", {}},
        lines);
  }
}

}  // namespace

Leaderboard build_leaderboard(const std::vector<Json>& docs, const std::vector<std::string>& paths,
                              const std::string& command_line, const LeaderboardOptions& options) {
  ATTNBENCH_ASSERT(docs.size() == paths.size(), "one path per results document");
  Leaderboard lb;
  lb.command_line = command_line;
  std::vector<Rec> all;
  for (const auto& c : options.coverage)
    if (std::find(paths.begin(), paths.end(), c) == paths.end())
      throw InputError(cat("leaderboard: the coverage file ", c, " is not among the results files"));
  for (size_t i = 0; i < docs.size(); ++i) {
    const bool coverage = std::find(options.coverage.begin(), options.coverage.end(), paths[i]) != options.coverage.end();
    lb.sources.push_back({paths[i], docs[i]["context"], coverage});
    for (const auto& row : docs[i]["benchmarks"]) {
      // The row standing for its case carries the whole record; the others only point at it.
      try {
        if (std::optional<Row> rec = full_record(row)) all.push_back({i, std::move(*rec)});
      } catch (const InputError& e) {
        throw InputError(cat(paths[i], ": ", e.what()));
      }
    }
  }
  // The ranked tables, compression points and plots read the ranked files' records only.
  std::vector<Rec> recs;
  for (const Rec& r : all)
    if (!lb.sources[r.src].coverage) recs.push_back(r);
  const bool several = std::count_if(lb.sources.begin(), lb.sources.end(), [](const LbSource& s) { return !s.coverage; }) > 1;

  // Sections: family, then device, then dtype, each in first-seen order.
  FirstSeen families, devices, dtypes, methods, inputs;
  inputs.add("");  // generated inputs first
  for (const Rec& r : recs) {
    families.add(r.row.family);
    inputs.add(inputs_of(r));
    devices.add(device_of(lb.sources, r));
    dtypes.add(std::string(dtype_name(r.row.dtype)));
    methods.add(r.method_label());
  }
  std::vector<std::set<std::string>> headline(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) headline[i] = headline_cases(recs, i);
  std::map<std::tuple<size_t, size_t, size_t, size_t>, std::vector<const Rec*>> grouped;
  for (const Rec& r : recs) {
    if (r.related_rank() != 0 || !headline[r.src].count(r.row.case_id)) continue;
    grouped[{families.rank(r.row.family), devices.rank(device_of(lb.sources, r)),
             dtypes.rank(std::string(dtype_name(r.row.dtype))), inputs.rank(inputs_of(r))}]
        .push_back(&r);
  }
  for (auto& [key, rows] : grouped) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Rec* a, const Rec* b) {
      return std::make_tuple(methods.rank(a->method_label()), a->src, a->row.backend, a->row.variant) <
             std::make_tuple(methods.rank(b->method_label()), b->src, b->row.backend, b->row.variant);
    });
    LbSection sec;
    sec.family = families.keys[std::get<0>(key)];
    sec.device = devices.keys[std::get<1>(key)];
    sec.dtype = dtypes.keys[std::get<2>(key)];
    sec.inputs = inputs.keys[std::get<3>(key)];
    fill_section(sec, rows, recs, lb.sources, several);
    lb.sections.push_back(std::move(sec));
  }
  build_matrix(lb, all);
  build_latency_plots(lb, recs);
  build_fidelity(lb, recs);
  build_compression_points(lb, recs, several);
  build_across(lb, all, options.reference_backend);
  return lb;
}

Leaderboard build_leaderboard(const std::vector<std::string>& paths, const std::string& command_line,
                              const LeaderboardOptions& options) {
  std::vector<Json> docs;
  for (const auto& p : paths) docs.push_back(read_results_file(p));
  return build_leaderboard(docs, paths, command_line, options);
}

}  // namespace attnbench
