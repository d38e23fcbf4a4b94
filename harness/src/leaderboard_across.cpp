// Backends side by side (leaderboard.h): the same case on every (file, backend, device) that ran
// it, in one row, with each column's ratio to the reference column, and the geometric means per
// family and per method that the page plots.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "attnbench/error.h"
#include "leaderboard_cells.h"

namespace attnbench::lb {

namespace {

// A column: one backend on one device, whichever files its records came from (one machine's
// suites are often run into several files).
struct Column {
  std::string backend, device;
  std::set<size_t> files;
  bool same(const Column& o) const { return backend == o.backend && device == o.device; }
};

// The record a column shows for a case: its fastest timed passing variant, else the first seen.
bool better(const Rec& r, const Rec* shown) {
  if (!shown) return true;
  const auto us = r.median_us(), shown_us = shown->median_us();
  if (!r.passed() || !us) return false;
  return !shown->passed() || !shown_us || *us < *shown_us;
}

std::optional<double> ratio(const Rec* ref, const Rec* other) {
  if (!ref || !other || !ref->passed() || !other->passed()) return std::nullopt;
  const auto a = ref->median_us(), b = other->median_us();
  if (!a || !b || !(*a > 0) || !(*b > 0)) return std::nullopt;
  return *a / *b;
}

// Geometric means of ratios, per column.
struct Means {
  std::vector<double> log_sum;
  std::vector<int> n;
  explicit Means(size_t columns) : log_sum(columns, 0.0), n(columns, 0) {}
  void add(size_t k, double r) {
    log_sum[k] += std::log(r);
    ++n[k];
  }
  LbAcrossMethod summary(const std::string& what, size_t reference) const {
    LbAcrossMethod m{what, {}, n};
    for (size_t k = 0; k < n.size(); ++k)
      m.ratio.push_back(k == reference ? std::optional<double>(1.0)
                                       : n[k] ? std::optional<double>(std::exp(log_sum[k] / n[k])) : std::nullopt);
    return m;
  }
};

LbCell ratio_cell(std::optional<double> r, const std::string& title) {
  if (!r) return dash(title);
  return {"×" + fmt_sig(*r), *r, "", title};
}

}  // namespace

void build_across(Leaderboard& lb, const std::vector<Rec>& recs, const std::string& reference_backend) {
  std::vector<Column> columns;
  const auto column_of = [&](const Rec& r) {
    const Column c{r.row.backend, device_of(lb.sources, r), {}};
    auto it = std::find_if(columns.begin(), columns.end(), [&](const Column& x) { return x.same(c); });
    if (it == columns.end()) it = columns.insert(columns.end(), c);
    it->files.insert(r.src);
    return static_cast<size_t>(it - columns.begin());
  };
  std::vector<std::string> case_order;
  std::map<std::string, std::map<size_t, const Rec*>> by_case;
  for (const Rec& r : recs) {
    const size_t k = column_of(r);
    auto& cells = by_case[r.row.case_id];
    if (cells.empty()) case_order.push_back(r.row.case_id);
    const Rec*& shown = cells[k];
    if (better(r, shown)) shown = &r;
  }
  // Only cases two columns or more ran, and only the columns that ran one of them.
  std::vector<std::string> cases;
  std::set<size_t> used;
  for (const auto& id : case_order)
    if (by_case[id].size() >= 2) {
      cases.push_back(id);
      for (const auto& [k, r] : by_case[id]) used.insert(k);
    }
  if (cases.empty()) {
    if (!reference_backend.empty())
      throw InputError(cat("--reference ", reference_backend, ": no case of these files ran on two backends or devices"));
    return;
  }
  LbAcross& a = lb.across;
  std::vector<size_t> shown(used.begin(), used.end());  // columns in first-seen order
  a.reference = shown.size();
  for (size_t i = 0; i < shown.size(); ++i) {
    const Column& c = columns[shown[i]];
    a.columns.push_back(c.backend + " · " + c.device);
    std::string files;
    for (size_t f : c.files) files += cat(files.empty() ? "" : ", ", "[", f + 1, "] ", lb.sources[f].path);
    a.column_help.push_back(files);
    if (a.reference == shown.size() && (reference_backend.empty() || c.backend == reference_backend)) a.reference = i;
  }
  if (a.reference == shown.size())
    throw InputError(cat("--reference ", reference_backend, ": no case ran on it beside another backend; the columns are ",
                         [&] {
                           std::string s;
                           for (const auto& c : a.columns) s += (s.empty() ? "" : ", ") + c;
                           return s;
                         }()));
  const std::string& ref_label = a.columns[a.reference];

  // Sections per family, in first-seen order; methods likewise.
  std::vector<std::string> families, methods;
  std::map<std::string, std::vector<const std::string*>> family_cases;
  for (const auto& id : cases) {
    const Rec& first = *by_case[id].begin()->second;
    if (std::find(families.begin(), families.end(), first.row.family) == families.end()) families.push_back(first.row.family);
    if (std::find(methods.begin(), methods.end(), first.method_label()) == methods.end()) methods.push_back(first.method_label());
    family_cases[first.row.family].push_back(&id);
  }
  std::map<std::string, Means> per_method;
  for (const auto& family : families) {
    LbSection sec;
    sec.family = family;
    sec.title = "backends side by side";
    sec.columns = {{"method", "method", "method and phase"},
                   {"case", "case", "the case id without its method and phase"},
                   {"dtype", "dtype", "storage dtype"}};
    for (size_t i = 0; i < a.columns.size(); ++i) {
      sec.columns.push_back({cat("latency.", i), a.columns[i] + " median",
                             "median device time of the column's fastest passing variant (" + a.column_help[i] + ")"});
      sec.columns.push_back({cat("pct_peak.", i), a.columns[i] + " % peak", "of that column's own in-run ceiling"});
    }
    for (size_t i = 0; i < a.columns.size(); ++i)
      if (i != a.reference)
        sec.columns.push_back({cat("ratio.", i), a.columns[i] + " vs " + ref_label,
                               ref_label + "'s median over " + a.columns[i] + "'s: above 1, " + a.columns[i] + " is faster"});
    Means family_means(a.columns.size());
    for (const std::string* id : family_cases[family]) {
      const auto& cells_of = by_case[*id];
      const Rec& first = *cells_of.begin()->second;
      const auto rec_at = [&](size_t i) -> const Rec* {
        const auto it = cells_of.find(shown[i]);
        return it == cells_of.end() ? nullptr : it->second;
      };
      std::vector<LbCell> cells;
      cells.push_back({first.method_label(), std::nullopt, "", first.row.catalog_id});
      const std::string prefix = first.row.method + "/" + (first.row.phase.empty() ? "" : first.row.phase + "/");
      cells.push_back({id->rfind(prefix, 0) == 0 ? id->substr(prefix.size()) : *id, std::nullopt, "", *id});
      cells.push_back({std::string(dtype_name(first.row.dtype)), std::nullopt, "", ""});
      for (size_t i = 0; i < a.columns.size(); ++i) {
        const Rec* r = rec_at(i);
        if (!r) {
          cells.push_back(dash("not run on " + a.columns[i]));
          cells.push_back(dash());
          continue;
        }
        LbCell t = r->passed() ? latency_cell(*r) : status_cell(*r);
        t.title += (t.title.empty() ? "" : "; ") + r->row.backend + "/" + r->row.variant;
        cells.push_back(t);
        cells.push_back(peak_cell(*r, lb.sources));
      }
      auto& method_means = per_method.try_emplace(first.method_label(), a.columns.size()).first->second;
      for (size_t i = 0; i < a.columns.size(); ++i) {
        if (i == a.reference) continue;
        const auto x = ratio(rec_at(a.reference), rec_at(i));
        if (x) {
          family_means.add(i, *x);
          method_means.add(i, *x);
        }
        cells.push_back(ratio_cell(x, x ? "" : "both must have passed and been timed"));
      }
      sec.rows.push_back(std::move(cells));
      sec.cases.push_back({first.method_label(), *id});
    }
    // The family's geometric mean, last.
    const LbAcrossMethod mean = family_means.summary(family, a.reference);
    std::vector<LbCell> last = {{"geometric mean", std::nullopt, "", "over the cases where both columns passed and were timed"},
                                {cat(family_cases[family].size(), " cases"), std::nullopt, "", ""},
                                dash()};
    for (size_t i = 0; i < a.columns.size(); ++i) {
      last.push_back(dash());
      last.push_back(dash());
    }
    for (size_t i = 0; i < a.columns.size(); ++i)
      if (i != a.reference) last.push_back(ratio_cell(mean.ratio[i], cat("geometric mean of ", mean.cases[i], " ratios")));
    sec.rows.push_back(std::move(last));
    a.families.push_back(mean);
    a.sections.push_back(std::move(sec));
  }
  for (const auto& m : methods) a.methods.push_back(per_method.at(m).summary(m, a.reference));
}

}  // namespace attnbench::lb
