#include "attnbench/compare.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/plan.h"
#include "attnbench/results.h"

namespace attnbench {

namespace {

// P(U ≤ u) under H0 for sample sizes m, n without ties, by the recurrence on the number of
// arrangements: c(m, n, u) = c(m − 1, n, u − n) + c(m, n − 1, u).
double exact_cdf(int m, int n, int u) {
  const int max_u = m * n;
  std::vector<std::vector<double>> prev(n + 1, std::vector<double>(max_u + 1, 0.0)), cur = prev;
  for (int j = 0; j <= n; ++j) prev[j][0] = 1;  // m = 0: one arrangement, U = 0
  for (int i = 1; i <= m; ++i) {
    for (int j = 0; j <= n; ++j) {
      std::fill(cur[j].begin(), cur[j].end(), 0.0);
      for (int k = 0; k <= i * j; ++k) {
        double c = (j > 0) ? cur[j - 1][k] : 0.0;  // last element from the second sample
        if (k - j >= 0) c += prev[j][k - j];       // last element from the first sample: beats j others
        cur[j][k] = c;
      }
      if (j == 0) cur[0][0] = 1;
    }
    std::swap(prev, cur);
  }
  double total = 0, below = 0;
  for (int k = 0; k <= max_u; ++k) {
    total += prev[n][k];
    if (k <= u) below += prev[n][k];
  }
  return below / total;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A row's place in the plan, as the runner orders a results file.
using PlanKey = std::tuple<int, int, std::string, std::string>;  // case_index, related_rank, backend, variant

struct TimedRow {
  std::vector<double> samples;
  std::string outputs_hash;
};

std::map<std::string, TimedRow> timed_rows(const Json& doc) {
  std::map<std::string, TimedRow> out;
  for (const auto& row : doc.at("benchmarks")) {
    if (row.value("error_occurred", false)) continue;
    const std::string name = row.value("run_name", row.value("name", ""));
    if (row.value("run_type", "") == "iteration") out[name].samples.push_back(row.at("real_time").get<double>());
    if (row.value("aggregate_name", "") == "median")
      if (const std::optional<Row> rec = full_record(row); rec && rec->hashes) out[name].outputs_hash = rec->hashes->outputs;
  }
  return out;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
  if (m == 0 || n == 0) return 1.0;
  std::vector<std::pair<double, int>> all;
  for (double x : a) all.push_back({x, 0});
  for (double x : b) all.push_back({x, 1});
  std::sort(all.begin(), all.end());
  // Midranks; tie groups feed the variance correction.
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i), midrank = 0.5 * static_cast<double>(i + 1 + j);
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += midrank;
    i = j;
  }
  // In double: m·n of two large samples overflows an int.
  const double dm = m, dn = n;
  const double u_a = rank_sum_a - dm * (dm + 1) / 2.0;
  const double mean = dm * dn / 2.0;
  if (!ties && m <= 30 && n <= 30) {
    const double u = std::min(u_a, dm * dn - u_a);
    return std::min(1.0, 2.0 * exact_cdf(m, n, static_cast<int>(std::floor(u + 1e-9))));
  }
  const double N = m + n;
  const double var = dm * dn / 12.0 * ((N + 1) - tie_term / (N * (N - 1)));
  if (var <= 0) return 1.0;
  const double z = (std::fabs(u_a - mean) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
}

CompareReport compare_results(const Json& a, const Json& b) {
  const auto ra = timed_rows(a), rb = timed_rows(b);
  CompareReport report;
  double log_sum = 0;
  int matched = 0;
  for (const auto& [name, x] : ra) {
    auto it = rb.find(name);
    if (it == rb.end()) {
      report.only_in_a.push_back(name);
      continue;
    }
    const TimedRow& y = it->second;
    if (x.samples.empty() || y.samples.empty()) {  // a median with no repetitions behind it: nothing to test
      report.untimed.push_back(name);
      continue;
    }
    RowComparison c;
    c.name = name;
    c.n_a = static_cast<int>(x.samples.size());
    c.n_b = static_cast<int>(y.samples.size());
    c.median_a = median_of(x.samples);
    c.median_b = median_of(y.samples);
    c.change = c.median_b / c.median_a - 1.0;
    c.p = mann_whitney_p(x.samples, y.samples);
    c.outputs_changed = !x.outputs_hash.empty() && !y.outputs_hash.empty() && x.outputs_hash != y.outputs_hash;
    if (c.n_a < 9 || c.n_b < 9) ++report.few_repetitions;
    if (c.n_a < 4 || c.n_b < 4) c.verdict = "UNCLEAR";
    else if (c.p < kSignificant) c.verdict = c.change > 0 ? "SLOWER" : "FASTER";
    else if (c.p >= kSame) c.verdict = "SAME";
    else c.verdict = "UNCLEAR";
    log_sum += std::log(c.median_b / c.median_a);
    ++matched;
    report.rows.push_back(c);
  }
  for (const auto& [name, y] : rb)
    if (!ra.count(name)) report.only_in_b.push_back(name);
  report.geomean_ratio = matched ? std::exp(log_sum / matched) : 1.0;
  return report;
}

Json parse_results_text(const std::string& text, const std::string& path) {
  const Json doc = parse_json_strict(text, path);
  const auto bad = [&](const std::string& where, const std::string& why) { return InputError(cat(path, ": ", where, ": ", why)); };
  if (!doc.is_object() || !doc.contains("context") || !doc.contains("benchmarks"))
    throw InputError(cat(path, ": not a results file (no context and benchmarks)"));
  const Json& ctx = doc["context"];
  if (!ctx.is_object()) throw bad("context", "is not an object");
  if (!ctx.contains("schema_version")) throw bad("context.schema_version", "is missing");
  const Json& v = ctx["schema_version"];
  if (!v.is_number_integer()) throw bad("context.schema_version", cat(v.dump(), " is not an integer"));
  if (v.get<int64_t>() != kSchemaVersion)
    throw bad("context.schema_version", cat(v.dump(), " is not understood (this build reads ", kSchemaVersion, ")"));
  for (const char* key : {"git_commit", "shard", "verb"})
    if (ctx.contains(key) && !ctx[key].is_string()) throw bad(cat("context.", key), cat(ctx[key].dump(), " is not a string"));
  if (ctx.contains("suite") && !(ctx["suite"].is_object() && ctx["suite"].value("hash", Json("")).is_string()))
    throw bad("context.suite", "is not an object with a string hash");
  if (!doc["benchmarks"].is_array()) throw bad("benchmarks", "is not an array");
  // Every row must read, so a verb never acts on half a file it does not understand.
  const Json& rows = doc["benchmarks"];
  for (size_t i = 0; i < rows.size(); ++i) {
    const Json& row = rows[i];
    const std::string where = json_path_index("benchmarks", i);
    if (!row.is_object()) throw bad(where, "is not an object");
    for (const char* key : {"name", "run_name", "run_type", "aggregate_name"})
      if (row.contains(key) && !row[key].is_string()) throw bad(json_path_join(where, key), cat(row[key].dump(), " is not a string"));
    if (!row.contains("name")) throw bad(where, "has no name");
    if (row.contains("error_occurred") && !row["error_occurred"].is_boolean())
      throw bad(json_path_join(where, "error_occurred"), "is not true or false");
    for (const char* key : {"real_time", "cpu_time"}) {
      if (!row.contains(key)) continue;
      const Json& t = row[key];
      if (!t.is_number() || !std::isfinite(t.get<double>()) || t.get<double>() < 0)
        throw bad(json_path_join(where, key), cat(t.dump(), " is not a time (a finite number of at least 0)"));
    }
    // A timed repetition is what compare's statistics rest on: it must have taken some time.
    if (row.value("run_type", "") == "iteration" && !row.value("error_occurred", false) &&
        !(row.contains("real_time") && row["real_time"].get<double>() > 0))
      throw bad(json_path_join(where, "real_time"), "a timed repetition needs a time above 0");
    try {
      full_record(row);
    } catch (const InputError& e) {
      throw InputError(cat(path, ": ", e.what()));
    } catch (const Json::exception& e) {
      throw bad(json_path_join(where, "attnbench"), e.what());
    }
  }
  return doc;
}

Json read_results_file(const std::string& path) { return parse_results_text(read_input_file(path, "results file"), path); }

namespace {

// The shards missing from the set; InputError unless it is one partition of one N, each shard
// once (missing ones allowed with `partial`).
std::vector<int> shard_partition(const std::vector<Json>& docs, const std::vector<std::string>& paths, bool partial) {
  int count = 0;
  std::map<int, std::string> seen;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string text = docs[i]["context"].value("shard", std::string());
    if (text == "merged") throw InputError(cat("merge: ", paths[i], " is itself a merge; merge the shard files it came from"));
    Shard s;
    try {
      s = Shard::parse(text);
    } catch (const InputError&) {
      throw InputError(cat("merge: ", paths[i], ": context.shard \"", text, "\" is not i/N"));
    }
    if (count && s.count != count)
      throw InputError(cat("merge: ", paths[i], " is shard ", text, " but ", paths[0], " is one of ", count, " shards"));
    count = s.count;
    if (auto [it, fresh] = seen.emplace(s.index, paths[i]); !fresh)
      throw InputError(cat("merge: shard ", text, " is given twice (", it->second, " and ", paths[i], ")"));
  }
  std::vector<int> missing;
  for (int i = 0; i < count; ++i)
    if (!seen.count(i)) missing.push_back(i);
  if (!missing.empty() && !partial) {
    std::string list;
    for (int i : missing) list += cat(list.empty() ? "" : ", ", i, "/", count);
    throw InputError(cat("merge: shards ", list, " are missing; a merge is one complete set of ", count,
                         " shards (--partial merges what is here and records what is not)"));
  }
  return missing;
}

}  // namespace

Json merge_results(const std::vector<Json>& docs, const std::vector<std::string>& paths, bool partial) {
  if (docs.empty()) throw InputError("merge needs at least one results file");
  const Json& first = docs.front()["context"];
  const auto field = [](const Json& ctx, const char* key) {
    if (std::string(key) == "suite_hash") return ctx.value("suite", Json::object()).value("hash", std::string());
    if (std::string(key) == "schema_version") return std::to_string(ctx.value("schema_version", 0));
    return ctx.value(key, std::string());
  };
  for (size_t i = 1; i < docs.size(); ++i)
    for (const char* key : {"suite_hash", "git_commit", "schema_version"})
      if (field(docs[i]["context"], key) != field(first, key))
        throw InputError(cat("merge: ", paths[i], " has ", key, " ", field(docs[i]["context"], key), " but ", paths[0],
                             " has ", field(first, key), "; only shards of one run merge"));
  const std::vector<int> missing = shard_partition(docs, paths, partial);
  // Group rows by the row they belong to (run_name). A row in several shards (a related case that
  // users in different shards share) is taken once: from the shard where it has its earliest
  // place, that of its first user, as in an unsharded run; on a tie the first file wins.
  std::map<std::string, std::vector<Json>> groups;
  std::map<std::string, PlanKey> keys;
  std::vector<std::string> order;
  for (size_t d = 0; d < docs.size(); ++d) {
    const Json& doc = docs[d];
    std::map<std::string, std::vector<Json>> here;
    std::map<std::string, PlanKey> here_keys;
    std::vector<std::string> here_order;
    for (const auto& row : doc["benchmarks"]) {
      const std::string name = row.value("run_name", row.value("name", ""));
      if (!here.count(name)) here_order.push_back(name);
      here[name].push_back(row);
      std::optional<Row> a;
      try {
        a = full_record(row);
      } catch (const InputError& e) {
        throw InputError(cat(paths[d], ": ", e.what()));
      }
      if (a && a->case_index) {
        const PlanKey k{*a->case_index, a->related_rank.value_or(0), a->backend, a->variant};
        if (!here_keys.count(name) || k < here_keys[name]) here_keys[name] = k;
      }
    }
    for (const auto& name : here_order) {
      if (!groups.count(name)) {
        order.push_back(name);
      } else if (!(here_keys.count(name) && keys.count(name) && here_keys[name] < keys[name])) {
        continue;
      }
      groups[name] = std::move(here[name]);
      if (here_keys.count(name)) keys[name] = here_keys[name];
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) {
    return keys[x] < keys[y];
  });
  Json out = Json::object();
  out["context"] = first;
  out["context"]["merged_from"] = paths;
  // Shards may run on different machines: each row keeps its device, and each shard's own
  // environment (CPU, drivers, devices, in-run peaks) is kept here, in merged_from's order.
  out["context"]["shard_contexts"] = Json::array();
  for (const Json& doc : docs) out["context"]["shard_contexts"].push_back(doc["context"]);
  out["context"]["shard"] = "merged";
  if (!missing.empty()) out["context"]["missing_shards"] = missing;
  out["benchmarks"] = Json::array();
  for (const auto& name : order)
    for (auto& row : groups[name]) out["benchmarks"].push_back(row);
  return out;
}

}  // namespace attnbench
