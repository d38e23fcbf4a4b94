#include "attnbench/runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "attnbench/results.h"
#include "attnbench/suite.h"

namespace attnbench {

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string compiled_backends() {
  std::vector<std::string> names;
  for (const auto& b : registry().backends()) names.push_back(b.name);
  return joined(names);
}

Json backend_context(const BackendState& s) {
  Json j = Json::object();
  j["available"] = s.probe.available;
  if (!s.probe.available) j["reason"] = s.probe.reason;
  j["device"] = s.probe.device.name;
  j["details"] = s.probe.device.details;
  const DeviceLimits& l = s.probe.limits;
  j["limits"] = {{"max_buffer_bytes", l.max_buffer_bytes}, {"max_binding_bytes", l.max_binding_bytes},
                 {"shared_mem_bytes", l.shared_mem_bytes}, {"subgroup_size", l.subgroup_size},
                 {"compute_units", l.compute_units},      {"memory_bytes", l.memory_bytes},
                 {"features", l.features}};
  if (s.peaks)
    j["peaks"] = {{"copy_bytes_per_s", s.peaks->copy_bytes_per_s}, {"flops_per_s", s.peaks->flops_per_s},
                  {"how", s.peaks->how}};
  Json opts = Json::object();
  for (const auto& o : s.backend->options()) opts[o.name] = s.backend->option(o.name);
  j["options"] = opts;
  return j;
}

// One line per row on a terminal, and always for rows that need attention.
class Progress {
 public:
  Progress(size_t total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}
  void row(const RowResult& r) {
    ++done_;
    const bool bad = r.status == "fail" || r.status == "error" || r.status == "crashed" || r.status == "timeout";
    if (quiet_ && !bad) return;
    if (!tty_ && !bad) return;
    std::string time;
    if (r.timing) {
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.4g us", r.timing->median_s() * 1e6);
      time = buf;
    }
    std::fprintf(stderr, "[%zu/%zu] %-8s %s%s%s%s\n", done_, total_, r.status.c_str(), r.name.c_str(), time.c_str(),
                 r.reason.empty() ? "" : "  ", r.reason.c_str());
  }

 private:
  size_t total_, done_ = 0;
  bool quiet_, tty_;
};

void print_summary(const std::vector<RowResult>& rows) {
  static const char* kStatuses[] = {"pass", "fail", "error", "crashed", "timeout", "unsupported", "skipped"};
  std::map<std::string, std::map<std::string, int>> counts;
  for (const auto& r : rows) {
    const std::string key = r.record.value("backend", "?") + "/" + r.record.value("variant", "?");
    counts[key][r.status]++;
  }
  std::printf("\n%-28s", "backend/variant");
  for (const char* s : kStatuses) std::printf(" %11s", s);
  std::printf("\n");
  for (const auto& [key, c] : counts) {
    std::printf("%-28s", key.c_str());
    for (const char* s : kStatuses) {
      auto it = c.find(s);
      std::printf(" %11d", it == c.end() ? 0 : it->second);
    }
    std::printf("\n");
  }
  int shown = 0;
  for (const auto& r : rows) {
    if (r.status != "fail" && r.status != "error" && r.status != "crashed" && r.status != "timeout") continue;
    if (shown++ == 0) std::printf("\nrows that failed:\n");
    if (shown > 40) {
      std::printf("  ...\n");
      break;
    }
    std::printf("  %-7s %s  %s\n", r.status.c_str(), r.name.c_str(), r.reason.c_str());
  }
  std::fflush(stdout);
}

std::string default_out(const std::string& suite_name) {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  return "results/local/" + suite_name + "-" + buf + ".json";
}

}  // namespace

int exit_code_for(const std::vector<std::string>& statuses) {
  for (const auto& s : statuses)
    if (s == "fail" || s == "error" || s == "crashed" || s == "timeout") return 1;
  return 0;
}

std::vector<std::unique_ptr<Backend>> open_backends(const std::vector<std::string>& names,
                                                    const std::vector<std::string>& options) {
  std::vector<std::unique_ptr<Backend>> out;
  std::vector<std::string> wanted = names;
  if (wanted.empty())
    for (const auto& b : registry().backends()) wanted.push_back(b.name);
  std::set<std::string> seen;
  for (const auto& name : wanted) {
    const BackendEntry* e = registry().find_backend(name);
    if (!e) throw InputError(cat("unknown backend \"", name, "\"; compiled in: ", compiled_backends()));
    if (!seen.insert(name).second) continue;
    out.push_back(e->make());
  }
  for (const auto& opt : options) {
    const size_t dot = opt.find('.'), eq = opt.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      throw InputError(cat("--backend-opt \"", opt, "\" is not <backend>.<option>=<value>"));
    const std::string backend = opt.substr(0, dot), key = opt.substr(dot + 1, eq - dot - 1), value = opt.substr(eq + 1);
    if (!registry().find_backend(backend))
      throw InputError(cat("--backend-opt ", opt, ": unknown backend \"", backend, "\"; compiled in: ", compiled_backends()));
    for (auto& b : out)
      if (b->name() == backend) b->set_option(key, value);
  }
  return out;
}

int run_suite(const RunRequest& req) {
  // Everything that can be wrong with the input is found before any case runs.
  const Suite suite = load_suite(req.suite_path);
  std::regex filter;
  try {
    filter = std::regex(req.filter.empty() ? std::string(".") : req.filter);
  } catch (const std::regex_error& e) {
    throw InputError(cat("--filter \"", req.filter, "\" is not a valid regular expression: ", e.what()));
  }
  if (!req.impl.empty()) {
    bool known = false;
    for (const auto& e : registry().all_impls()) known |= e.variant == req.impl;
    if (!known) throw InputError(cat("--impl \"", req.impl, "\": no impl has that variant"));
  }
  auto backends = open_backends(req.backends, req.backend_opts);
  std::vector<BackendState> states;
  for (auto& b : backends) {
    BackendState s{b.get(), b->probe(), std::nullopt};
    if (!s.probe.available) {
      if (!req.backends.empty()) {
        std::fprintf(stderr, "attnbench: backend %s is compiled in but unavailable here: %s\n", b->name().c_str(),
                     s.probe.reason.c_str());
        return 3;
      }
      std::fprintf(stderr, "attnbench: skipping backend %s: %s\n", b->name().c_str(), s.probe.reason.c_str());
      continue;
    }
    states.push_back(std::move(s));
  }
  const bool timing = req.verb == "run";
  if (timing)
    for (auto& s : states) s.peaks = s.backend->measure_peaks();

  std::vector<const PlannedCase*> selected;
  for (const auto& pc : suite.cases)
    if (std::regex_search(pc.c.id(), filter)) selected.push_back(&pc);

  RunContext rc;
  rc.command_line = req.command_line;
  rc.verb = req.verb;
  rc.suite_name = suite.name;
  rc.suite_path = suite.path;
  rc.suite_hash = suite.hash;
  std::set<uint64_t> seeds;
  for (const auto* pc : selected) seeds.insert(pc->c.seed);
  rc.seeds.assign(seeds.begin(), seeds.end());
  for (const auto& s : states) rc.backends[s.backend->name()] = backend_context(s);
  const TimingOptions& t = req.exec.timing_opts;
  rc.timing = {{"repetitions", t.repetitions}, {"min_time_s", t.min_time_s}, {"warmup_s", t.warmup_s},
               {"target_sample_s", t.target_sample_s}, {"noisy_cv", t.noisy_cv}};

  ExecuteOptions exec = req.exec;
  exec.timing = timing;
  std::vector<RowResult> rows;
  Progress progress(selected.size() * states.size(), req.quiet);
  for (const PlannedCase* pc : selected) {
    const Case& c = pc->c;
    if (!pc->skip_reason.empty()) {
      for (const auto& s : states) {
        rows.push_back(skipped_row(c, s.backend->name(), pc->skip_reason));
        progress.row(rows.back());
      }
      continue;
    }
    std::optional<CaseData> data;  // generated once, for the first backend that runs the case
    for (auto& s : states) {
      std::vector<const ImplEntry*> runnable;
      std::vector<std::string> reasons;
      for (const ImplEntry* e : registry().impls(c.method_name(), s.backend->name())) {
        if (!req.impl.empty() && e->variant != req.impl) continue;
        const Support sup = e->make()->supports(c, s.probe.limits);
        if (sup.ok) runnable.push_back(e);
        else reasons.push_back(e->variant + ": " + sup.reason);
      }
      if (runnable.empty()) {
        if (reasons.empty())
          reasons.push_back(cat("no ", s.backend->name(), " impl of ", c.method_name(),
                                req.impl.empty() ? "" : " with variant " + req.impl));
        rows.push_back(unsupported_row(c, s, joined(reasons, "; ")));
        progress.row(rows.back());
        continue;
      }
      if (!data) data = prepare_case_data(c);
      for (const ImplEntry* e : runnable) {
        rows.push_back(execute_case(*data, s, *e, exec));
        progress.row(rows.back());
      }
    }
  }

  std::vector<std::string> statuses;
  std::vector<Json> out_rows;
  for (const auto& r : rows) {
    statuses.push_back(r.status);
    for (auto& j : result_rows(r)) out_rows.push_back(std::move(j));
  }
  const std::string out = !req.out.empty() ? req.out : (timing ? default_out(suite.name) : "");
  if (!out.empty()) write_results(out, build_context(rc), out_rows);
  print_summary(rows);
  if (!out.empty()) std::printf("\nresults: %s\n", out.c_str());
  return exit_code_for(statuses);
}

}  // namespace attnbench
