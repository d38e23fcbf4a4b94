// The leaderboard's cells: numbers formatted, and how each column is derived from one record.
#include "leaderboard_cells.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnbench/backend.h"
#include "attnbench/error.h"

namespace attnbench::lb {

// Passes (then noisy passes) first, then what went wrong, then what did not run.
const std::vector<std::string>& shown_statuses() {
  static const std::vector<std::string> order = [] {
    std::vector<std::string> o;
    for (Status s : kStatuses) {
      o.push_back(status_name(s));
      if (s == Status::pass) o.push_back("noisy");
    }
    return o;
  }();
  return order;
}

std::string fmt_sig(double v, int digits) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : v < 0 ? "-inf" : "nan";
  if (v == 0) return "0";
  char buf[64];
  const int mag = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (mag >= 6 || mag < -4) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, digits - 1 - mag), v);
    std::string s = buf;
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
    return s;
  }
  return buf;
}

std::string fmt_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(b) >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return (u == 0 ? fmt_sig(b, 4) : fmt_sig(b, 3)) + " " + units[u];
}

std::string fmt_us(double us) {
  if (us >= 1e6) return fmt_sig(us / 1e6) + " s";
  if (us >= 1e3) return fmt_sig(us / 1e3) + " ms";
  return fmt_sig(us) + " µs";
}

std::string fmt_flops(double per_s) {
  return per_s >= 1e12 ? fmt_sig(per_s / 1e12) + " TFLOP/s" : fmt_sig(per_s / 1e9) + " GFLOP/s";
}

// A bandwidth in GB/s, an arithmetic rate in (G|T)FLOP/s.
std::string fmt_rate(bool bandwidth, double per_s) { return bandwidth ? fmt_sig(per_s / 1e9) + " GB/s" : fmt_flops(per_s); }

std::vector<std::pair<std::string, std::string>> source_summary(const LbSource& s) {
  const Json& c = s.context;
  const auto str = [&](const char* k) { return c.contains(k) && c[k].is_string() ? c[k].get<std::string>() : std::string(); };
  std::vector<std::pair<std::string, std::string>> out;
  out.push_back({"file", s.path});
  out.push_back({"date", str("date")});
  std::string commit = str("git_commit");
  if (commit.size() > 12) commit = commit.substr(0, 12);
  if (c.value("git_dirty", false)) commit += " (dirty)";
  out.push_back({"commit", commit});
  out.push_back({"build", str("build_type") + ", " + str("compiler")});
  out.push_back({"cpu", str("cpu") + " (" + std::to_string(c.value("num_cpus", 0)) + " threads)"});
  out.push_back({"os", str("os")});
  const Json suite = c.value("suite", Json::object());
  std::string verb = str("verb");
  std::string how = verb + " " + suite.value("name", std::string()) + " (" + suite.value("path", std::string()) + ")";
  if (c.contains("timing") && verb == "run")
    how += cat(", ", c["timing"].value("repetitions", 0), " repetitions of ≥ ", c["timing"].value("min_time_s", 0.0), " s");
  out.push_back({"suite", how});
  if (s.coverage) out.push_back({"role", "coverage: its rows are in the support matrix and the side-by-side view, not ranked or plotted"});
  const Json backends = c.value("backends", Json::object());  // a named copy: items() must not outlive it
  for (const auto& [name, b] : backends.items()) {
    std::string text;
    if (!b.value("available", true)) {
      text = "unavailable: " + b.value("reason", std::string());
    } else {
      text = b.value("device", std::string());
      const Json peaks = b.value("peaks", Json::object());
      std::string table;
      for (const auto& [name, v] : peaks.items()) {
        if (!v.is_number()) continue;
        const double rate = v.get<double>();
        table += cat(table.empty() ? "" : ", ", ceilings::short_name(name), " ", fmt_rate(ceilings::is_bandwidth(name), rate));
      }
      if (!table.empty()) text += "; in-run ceilings: " + table;
    }
    out.push_back({"backend " + name, text});
  }
  return out;
}

std::string matrix_cell_text(const LbMatrixCell& c) {
  std::string s;
  for (const auto& status : shown_statuses())
    if (auto it = c.counts.find(status); it != c.counts.end()) {
      s += (s.empty() ? "" : ", ") + std::to_string(it->second) + " " + status;
      if (status == "noisy") s += cat(" (cv up to ", fmt_sig(100 * c.noisy_cv), "%)");
    }
  return s.empty() ? "—" : s;
}

std::string shown_status(const Rec& r) { return r.passed() && r.noisy() ? "noisy" : status_name(r.row.status); }

std::string device_of(const std::vector<LbSource>& sources, const Rec& r) {
  if (!r.row.device.empty()) return r.row.device;
  const Json backends = sources[r.src].context.value("backends", Json::object());
  const std::string& b = r.row.backend;
  if (backends.contains(b) && backends[b].contains("device") && backends[b]["device"].is_string())
    return backends[b]["device"].get<std::string>();
  return b;
}

std::string inputs_of(const Rec& r) {
  const Json& rp = r.row.replayed;
  if (rp.is_null()) return {};
  std::string what = cat("replayed: ", rp.value("file", std::string("?")));
  const Json meta = rp.value("metadata", Json::object());
  std::string details;
  for (const char* k : {"model_id", "layer"})
    if (meta.contains(k) && meta[k].is_string())
      details += cat(details.empty() ? "" : ", ", std::string(k) == "layer" ? "layer " : "", meta[k].get<std::string>());
  return details.empty() ? what : cat(what, " (", details, ")");
}

LbCell dash(std::string title) { return {"—", std::nullopt, "", std::move(title)}; }

// quality, flattened one level: {"a": 1, "b": {"c": 2}} -> a, b.c
std::vector<std::pair<std::string, Json>> flat_quality(const Rec& r) {
  std::vector<std::pair<std::string, Json>> out;
  if (!r.row.quality) return out;
  for (const auto& [k, v] : r.row.quality->items()) {
    if (v.is_object()) {
      for (const auto& [k2, v2] : v.items()) out.push_back({k + "." + k2, v2});
    } else {
      out.push_back({k, v});
    }
  }
  return out;
}

LbCell value_cell(const std::string& key, const Json& v) {
  if (v.is_number()) {
    const double x = v.get<double>();
    // A figure in bytes says so in its name: kv_bytes_kept, index_bytes, bytes.
    const bool bytes = ("_" + key + "_").find("_bytes_") != std::string::npos;
    return {bytes ? fmt_bytes(x) : fmt_sig(x, 4), x, "", key + " = " + fmt_sig(x, 10)};
  }
  if (v.is_boolean()) return {v.get<bool>() ? "yes" : "no", v.get<bool>() ? 1.0 : 0.0, "", key};
  if (v.is_string()) return {v.get<std::string>(), std::nullopt, "", key};
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + (e.is_number() ? fmt_sig(e.get<double>(), 4) : e.dump());
    return {s, std::nullopt, "", key};
  }
  return dash();
}

LbCell status_cell(const Rec& r) {
  const std::string st = shown_status(r);
  if (st != "noisy") return {st, std::nullopt, st, r.row.reason};
  const std::string cv = fmt_sig(100 * r.row.timing->cv);
  return {cat("pass (noisy, cv ", cv, "%)"), std::nullopt, st,
          cat("passed; its time is not to be trusted: cv ", cv, "% is above the run's noisy target")};
}

LbCell latency_cell(const Rec& r) {
  const auto us = r.median_us();
  if (!us) return dash(r.passed() ? "not timed (check only)" : cat("not timed: ", status_name(r.row.status)));
  const RowTiming& t = *r.row.timing;
  return {fmt_us(*us), *us, r.noisy() ? "noisy" : "",
          cat("median of ", t.repetitions, " repetitions, cv ", fmt_sig(100 * t.cv), "%, ", t.mode, " (", t.how, ")")};
}

LbCell throughput_cell(const Rec& r) {
  if (!r.row.throughput) return dash();
  const RowThroughput& tp = *r.row.throughput;
  const bool memory = r.row.work && r.row.work->memory_bound();
  const double v = memory ? tp.bytes_per_s : tp.flops_per_s;
  // Sorted by the raw rate; shown in GB/s, or TFLOP/s (GFLOP/s below one, as on small CPUs).
  const std::string text = fmt_rate(memory, v);
  return {text, v, "",
          cat(r.row.work ? bound_name(r.row.work->bound) : "compute", "-bound: ", fmt_sig(r.flops()), " flop, ", fmt_bytes(r.bytes()),
              " moved per launch")};
}

LbCell peak_cell(const Rec& r, const std::vector<LbSource>& sources) {
  if (!r.row.throughput || r.row.throughput->peak.empty()) return dash();
  const RowThroughput& tp = *r.row.throughput;
  const double pct = tp.pct_of_peak;
  const std::string& peak = tp.peak;
  const Json peaks = sources[r.src].context.value("backends", Json::object()).value(r.row.backend, Json::object())
                         .value("peaks", Json::object());
  std::string title = "of the in-run ceiling " + peak;
  if (peaks.contains(peak) && peaks[peak].is_number())
    title += " = " + fmt_rate(ceilings::is_bandwidth(peak), peaks[peak].get<double>());
  if (peaks.contains("how") && peaks["how"].is_object() && peaks["how"].contains(peak) && peaks["how"][peak].is_string())
    title += " (" + peaks["how"][peak].get<std::string>() + ")";
  const bool above = tp.above_peak;
  return {fmt_sig(pct) + "% " + ceilings::short_name(peak) + (above ? " (above its ceiling)" : ""), pct,
          above ? "noisy" : "", title};
}

LbCell memory_cell(const Rec& r) {
  if (!r.row.memory) return dash();
  const RowMemory& m = *r.row.memory;
  const double peak = static_cast<double>(m.peak_bytes);
  return {fmt_bytes(peak), peak, "",
          cat("inputs ", fmt_bytes(static_cast<double>(m.input_bytes)), ", outputs ",
              fmt_bytes(static_cast<double>(m.output_bytes)), ", workspace ",
              fmt_bytes(static_cast<double>(m.workspace_peak_bytes)))};
}

// The checks in one cell: the worst TOL error as a fraction of its gate, tie swaps (SET), boundary
// cases (SEMI), the smallest p-value (STAT), whatever the outputs' classes are.
LbCell equivalence_cell(const Rec& r) {
  if (!r.row.checks || r.row.checks->empty()) return dash(cat("not checked: ", status_name(r.row.status)));
  double worst = -1, p_min = 2;
  std::string worst_out, failed;
  int64_t swaps = 0, boundary = 0;
  bool any_set = false, any_semi = false, all_exact = true;
  for (const RowCheck& check : *r.row.checks) {
    const std::string& out = check.output;
    const Json& ch = check.metrics;
    if (!check.pass && failed.empty()) failed = out + ": " + check.message;
    if (check.cls != CheckClass::EXACT) all_exact = false;
    if (ch.contains("max_abs") && ch.contains("gate") && ch["gate"].get<double>() > 0) {
      const double ratio = ch["max_abs"].get<double>() / ch["gate"].get<double>();
      if (ratio > worst) {
        worst = ratio;
        worst_out = out;
      }
    }
    if (ch.contains("n_tie_swaps")) {
      any_set = true;
      swaps += ch["n_tie_swaps"].get<int64_t>();
    }
    if (ch.contains("n_boundary_cases")) {
      any_semi = true;
      boundary += ch["n_boundary_cases"].get<int64_t>();
    }
    if (ch.contains("p_value")) p_min = std::min(p_min, ch["p_value"].get<double>());
  }
  std::vector<std::string> parts;
  if (worst >= 0) parts.push_back(cat(fmt_sig(worst, 2), "× gate (", worst_out, ")"));
  if (any_set) parts.push_back(cat(swaps, " tie swaps"));
  if (any_semi) parts.push_back(cat(boundary, " boundary"));
  if (p_min <= 1) parts.push_back("p=" + fmt_sig(p_min, 2));
  if (parts.empty() && all_exact) parts.push_back("exact");
  if (!r.row.deterministic.value_or(true)) parts.push_back("nondeterministic");
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
  LbCell c{text.empty() ? "checked" : text, worst >= 0 ? std::optional<double>(worst) : std::nullopt,
           status_name(failed.empty() ? Status::pass : Status::fail), failed};
  if (!failed.empty()) c.text = "FAIL " + c.text;
  if (c.title.empty())
    c.title = "worst max_abs / gate over TOL outputs; tie swaps (SET); boundary events (SEMI); smallest p (STAT)";
  return c;
}

}  // namespace attnbench::lb
