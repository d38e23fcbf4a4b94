#include "attnbench/runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "attnbench/case_job.h"
#include "attnbench/compare.h"
#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/interrupt.h"
#include "attnbench/journal.h"
#include "attnbench/reference_cache.h"
#include "attnbench/replay.h"
#include "attnbench/registry.h"
#include "attnbench/results.h"
#include "attnbench/row_io.h"
#include "attnbench/worker.h"

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

// What a run shows while it works. On a terminal: one status line redrawn in place (cases done of
// the total, for every backend: a case gives a row per variant, so rows cannot be counted ahead;
// rows failed so far, elapsed and estimated time left), with a row's own line above it, numbered
// by its case, only when the row did not pass (every row with --verbose). Elsewhere (CI logs): one
// line per row. --quiet keeps only the rows that did not pass.
class Progress {
 public:
  Progress(size_t total, bool quiet, bool verbose)
      : total_(total), quiet_(quiet), verbose_(verbose), tty_(isatty(STDERR_FILENO) && !dumb_terminal()),
        start_(std::chrono::steady_clock::now()) {}

  void row(const RowResult& r) {
    const Row& rec = r.record;
    const bool bad = is_bad(rec.status);
    failed_ += bad;
    const bool show = bad || (!quiet_ && (verbose_ || !tty_));
    if (tty_) std::fputs("\r\033[K", stderr);  // the status line gives way to the row's
    if (show) {
      std::string time;
      if (r.timing) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " %.4g us", r.timing->median_s() * 1e6);
        time = buf;
      }
      std::fprintf(stderr, "[%zu/%zu] %-8s %s%s%s%s\n", done_ + 1, total_, status_name(rec.status), r.name().c_str(), time.c_str(),
                   rec.reason.empty() ? "" : "  ", rec.reason.c_str());
    }
    if (tty_ && done_ > 0) status_line();
    std::fflush(stderr);
  }

  // A case (on one backend) is done: all of its rows are in.
  void case_done() {
    ++done_;
    if (tty_) {
      std::fputs("\r\033[K", stderr);
      status_line();
      std::fflush(stderr);
    }
  }

  // Ends the status line, so the summary starts on a line of its own.
  void finish() {
    if (!tty_ || done_ == 0) return;
    std::fputs("\r\033[K", stderr);
    status_line();
    std::fputs("\n", stderr);
    std::fflush(stderr);
  }

 private:
  static bool dumb_terminal() {
    const char* term = std::getenv("TERM");
    return term && std::string_view(term) == "dumb";
  }
  static std::string duration(double s) {
    const auto t = static_cast<long>(s + 0.5);
    char buf[32];
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%lds", t);
    return buf;
  }
  void status_line() const {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string left =
        done_ < total_ ? "  ~" + duration(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_)) + " left" : "";
    std::fprintf(stderr, "[%zu/%zu] cases  %zu rows failed  %s elapsed%s", done_, total_, failed_, duration(elapsed).c_str(),
                 left.c_str());
  }

  size_t total_, done_ = 0, failed_ = 0;
  bool quiet_, verbose_, tty_;
  std::chrono::steady_clock::time_point start_;
};

void print_summary(const std::vector<RowResult>& rows) {
  std::map<std::string, std::map<Status, int>> counts;
  for (const auto& r : rows) counts[r.record.backend + "/" + r.record.variant][r.record.status]++;
  std::printf("\n%-28s", "backend/variant");
  for (Status s : kStatuses) std::printf(" %11s", status_name(s));
  std::printf("\n");
  for (const auto& [key, c] : counts) {
    std::printf("%-28s", key.c_str());
    for (Status s : kStatuses) {
      auto it = c.find(s);
      std::printf(" %11d", it == c.end() ? 0 : it->second);
    }
    std::printf("\n");
  }
  int shown = 0;
  for (const auto& r : rows) {
    if (!is_bad(r.record.status)) continue;
    if (shown++ == 0) std::printf("\nrows that failed:\n");
    if (shown > 40) {
      std::printf("  ...\n");
      break;
    }
    std::printf("  %-7s %s  %s\n", status_name(r.record.status), r.name().c_str(), r.record.reason.c_str());
  }
  std::fflush(stdout);
}

std::string utc_stamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  return buf;
}

// A backend as the runner drives it: in this process, or through a worker.
struct Lane {
  std::string name;
  BackendState state;
  std::unique_ptr<Backend> local;           // --no-isolate
  std::unique_ptr<WorkerProcess> worker;    // isolated
  std::vector<std::string> worker_args;
};

constexpr double kStartupTimeout = 180;  // opening a device, measuring peaks

// A worker ended by one of these was stopped by someone, not by its kernel: the run is interrupted.
bool stopped_from_outside(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP; }

void start_worker(Lane& lane, const std::string& exe) {
  lane.worker = std::make_unique<WorkerProcess>(exe, lane.worker_args);
  Json msg;
  const auto r = lane.worker->read(msg, kStartupTimeout);
  if (r == WorkerProcess::Read::message && msg.contains("input_error")) {
    lane.worker->kill();
    lane.worker.reset();
    throw InputError(msg["input_error"].get<std::string>());
  }
  // Stopped, not failed: the run's own interrupt, or a worker ended by SIGINT or SIGTERM (as in run_case).
  const int sig = r == WorkerProcess::Read::eof ? lane.worker->term_signal() : 0;
  if (r == WorkerProcess::Read::interrupted || stopped_from_outside(sig)) {
    lane.worker->kill();
    lane.worker.reset();
    if (sig) note_interrupt(sig);
    throw Interrupted(interrupt_signal());
  }
  if (r != WorkerProcess::Read::message || !msg.contains("hello")) {
    const std::string why = r == WorkerProcess::Read::timeout ? "timed out opening the device"
                            : r == WorkerProcess::Read::message && msg.contains("fatal")
                                ? msg["fatal"].get<std::string>()
                                : lane.worker->exit_description() + ": " + lane.worker->stderr_tail();
    lane.worker->kill();
    lane.worker.reset();
    throw BackendError(cat(lane.name, " worker did not start: ", why));
  }
  lane.state.probe = probe_from_json(msg["hello"]);
}

// The variants of a case this lane will run (by the impls' supports() on the lane's limits).
std::vector<std::string> runnable_variants(const Case& c, const Lane& lane, const std::string& impl,
                                           std::string* unsupported_reason) {
  std::vector<std::string> out;
  for (const ImplEntry* e : runnable_impls(c, lane.name, lane.state.probe.limits, impl, unsupported_reason))
    out.push_back(e->variant);
  return out;
}

// The parent builds a missing reference before a worker needs it (docs/design.md "Running"), so a crashing
// impl never costs the reference, and a worker's timeout never counts the reference's time. A
// cached case costs the parent nothing (the worker generates the inputs it runs on anyway).
// A replayed case whose file does not fit the case's parameters returns why: a `skipped` row, as
// a combination that breaks a method's rule is.
std::string ensure_reference(const Case& c, const ReferenceCache& cache) {
  if (cache.holds(c)) return {};
  TensorMap inputs;
  try {
    inputs = case_inputs(c);
  } catch (const ReplayMismatch& e) {
    return e.what();
  }
  cache.store(c, hash_tensors(inputs), c.method->reference(c, inputs));
  return {};
}

class Runner {
 public:
  explicit Runner(const RunRequest& req) : req_(req), cache_(req.cache_dir) {}
  ~Runner() { cache_.remove_run_entries(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs the case on the lane; emits each finished row. False when interrupted.
  bool run_case(Lane& lane, const PlannedRun& pr, std::vector<std::string> done_variants,
                const std::function<void(RowResult)>& emit) {
    CaseJob job{pr.pc.c, req_.impl, done_variants, req_.exec};
    if (!req_.isolate) {
      if (std::string why = ensure_reference(job.c, cache_); !why.empty()) {
        emit(skipped_row(job.c, lane.name, why));
        return true;
      }
      run_case_job(job, lane.state, cache_, {nullptr, emit});
      return interrupt_signal() == 0;
    }
    std::string why;
    const auto variants = runnable_variants(job.c, lane, req_.impl, &why);
    if (variants.empty()) {
      emit(unsupported_row(job.c, lane.state, why));
      return true;
    }
    if (std::string why = ensure_reference(job.c, cache_); !why.empty()) {
      emit(skipped_row(job.c, lane.name, why));
      return true;
    }
    std::set<std::string> killed_once;  // variants whose worker someone else killed with SIGKILL
    while (true) {
      std::vector<std::string> left;
      for (const auto& v : variants)
        if (std::find(job.skip_variants.begin(), job.skip_variants.end(), v) == job.skip_variants.end()) left.push_back(v);
      if (left.empty()) return true;
      if (!lane.worker) start_worker(lane, req_.executable);
      Json msg = job_to_json(job);
      if (lane.state.peaks) msg["peaks"] = peaks_to_json(*lane.state.peaks);
      lane.worker->send(msg);
      std::string running = left.front();  // a crash before the first "start" belongs to it
      while (true) {
        Json in;
        const auto r = lane.worker->read(in, req_.timeout_s);
        if (r == WorkerProcess::Read::message) {
          if (in.contains("start")) {
            running = in["start"].get<std::string>();
          } else if (in.contains("row")) {
            RowResult row = row_from_json(in["row"]);
            job.skip_variants.push_back(row.record.variant);
            emit(std::move(row));
          } else if (in.contains("done")) {
            return true;
          } else if (in.contains("restart")) {
            lane.worker->kill();
            lane.worker.reset();
            break;
          } else if (in.contains("fatal")) {
            emit(status_row(job.c, lane.name, running, lane.state.probe.device.name, Status::error,
                            "worker: " + in["fatal"].get<std::string>()));
            lane.worker->kill();
            lane.worker.reset();
            job.skip_variants.push_back(running);
            break;
          }
          continue;
        }
        if (r == WorkerProcess::Read::interrupted) {
          lane.worker->kill();
          lane.worker.reset();
          return false;
        }
        Status status;
        std::string reason;
        if (r == WorkerProcess::Read::timeout) {
          lane.worker->kill();
          status = Status::timeout;
          reason = cat("no result within ", req_.timeout_s, " s; the worker's process group was killed");
        } else {
          // A worker ended by SIGINT or SIGTERM was stopped by someone, not by its kernel: the run is
          // interrupted, as if the signal had come here. One killed outright (SIGKILL: the OOM
          // killer, a user) runs its variant once more in a fresh worker before the row says so.
          const int sig = lane.worker->term_signal();
          if (stopped_from_outside(sig)) {
            lane.worker.reset();
            note_interrupt(sig);
            return false;
          }
          if (sig == SIGKILL && killed_once.insert(running).second) {
            std::fprintf(stderr, "attnbench: %s worker was killed (SIGKILL) running %s/%s/%s; running it again\n",
                         lane.name.c_str(), job.c.id().c_str(), lane.name.c_str(), running.c_str());
            lane.worker.reset();
            break;
          }
          status = Status::crashed;
          reason = "worker died: " + lane.worker->exit_description() + (sig == SIGKILL ? " twice (out of memory?)" : "");
        }
        const std::string tail = lane.worker->stderr_tail(1024);
        if (!tail.empty()) reason += "; stderr: " + tail;
        emit(status_row(job.c, lane.name, running, lane.state.probe.device.name, status, reason));
        lane.worker.reset();  // a fresh worker takes what is left
        job.skip_variants.push_back(running);
        break;
      }
    }
  }

 private:
  const RunRequest& req_;
  ReferenceCache cache_;
};

RunPlan plan_from_results_doc(RunRequest& req, const Json& doc) {
  const Json& ctx = doc.at("context");
  // The recorded settings, unless the command line overrides them.
  if (ctx.contains("timing") && req.verb == "run") {
    const Json& t = ctx["timing"];
    TimingOptions& o = req.exec.timing_opts;
    o.repetitions = t.value("repetitions", o.repetitions);
    o.min_time_s = t.value("min_time_s", o.min_time_s);
    o.warmup_s = t.value("warmup_s", o.warmup_s);
    o.target_sample_s = t.value("target_sample_s", o.target_sample_s);
    o.noisy_cv = t.value("noisy_cv", o.noisy_cv);
    o.mode = t.value("mode", o.mode);
  }
  std::set<std::string> backends_used;
  const bool recorded_options = req.backend_opts.empty();
  if (ctx.contains("backends") && recorded_options)
    for (const auto& [name, b] : ctx["backends"].items()) {
      const Json options = b.value("options", Json::object());
      for (const auto& [k, v] : options.items())
        if (!v.get<std::string>().empty()) req.backend_opts.push_back(name + "." + k + "=" + v.get<std::string>());
    }
  Suite suite;
  suite.name = "rerun-" + ctx.value("suite", Json::object()).value("name", std::string("results"));
  suite.path = req.rerun_path;
  suite.hash = ctx.value("suite", Json::object()).value("hash", "");
  std::set<std::string> seen;
  for (const auto& row : doc.at("benchmarks")) {
    std::optional<Row> a;
    try {
      a = full_record(row);
    } catch (const InputError& e) {
      throw InputError(cat(req.rerun_path, ": ", e.what()));
    }
    if (!a) continue;  // the short references point at a full record
    const std::string& id = a->case_id;
    backends_used.insert(a->backend);
    if (!seen.insert(id).second || a->status == Status::skipped) continue;
    PlannedCase pc{parse_case_id(id), "", 0, {}};
    // Replayed inputs: the file --inputs names, else the one the row recorded (its hash must match).
    if (!req.inputs_path.empty()) pc.c = with_source(std::move(pc.c), open_input_source(req.inputs_path, req.input_tensors));
    else if (!a->replayed.is_null()) pc.c = with_source(std::move(pc.c), input_source_from_json(a->replayed));
    pc.c.label = a->label;
    pc.c.headline = a->headline;
    if (a->spec_version != pc.c.method->info().spec_version)
      std::fprintf(stderr, "attnbench: warning: %s was recorded at spec_version %d, this build has %d\n", id.c_str(),
                   a->spec_version, pc.c.method->info().spec_version);
    suite.cases.push_back(std::move(pc));
  }
  if (req.backends.empty())
    for (const auto& b : backends_used)
      if (registry().find_backend(b)) req.backends.push_back(b);
  return plan_from_suite(suite, req.filter, req.shard, false);
}

Suite load_run_suite(const RunRequest& req) {
  Suite suite = load_suite(req.suite_path);
  if (!req.inputs_path.empty()) replay_suite_inputs(suite, req.inputs_path, req.input_tensors);
  return suite;
}

RunPlan plan_from_results(RunRequest& req) {
  const Json doc = read_results_file(req.rerun_path);
  try {
    return plan_from_results_doc(req, doc);
  } catch (const Json::exception& e) {  // a recorded setting of the wrong type
    throw InputError(cat(req.rerun_path, ": ", e.what()));
  }
}

// Every setting that changes what a row holds: a resume must run with the same ones.
Json run_settings(const RunRequest& req) {
  Json s = {{"verb", req.verb},
            {"rerun", req.rerun_path},
            {"filter", req.filter},
            {"inputs", req.inputs_path},
            {"input_tensors", req.input_tensors},
            {"shard", cat(req.shard.index, "/", req.shard.count)},
            {"impl", req.impl},
            {"backends", req.backends},
            {"backend_opts", req.backend_opts},
            {"related", req.related},
            {"timeout_s", req.timeout_s}};
  if (req.verb == "run") {
    const TimingOptions& t = req.exec.timing_opts;
    s["repetitions"] = t.repetitions;
    s["min_time_s"] = t.min_time_s;
    s["warmup_s"] = t.warmup_s;
    s["timing"] = t.mode;
  }
  return s;
}

// A row's identity in a results file: it appears once.
using RowKey = std::tuple<std::string, std::string, std::string>;
RowKey key_of(const RowResult& r) { return {r.record.case_id, r.record.backend, r.record.variant}; }

}  // namespace

int exit_code_for(const std::vector<Status>& statuses) {
  for (const auto& s : statuses)
    if (is_bad(s)) return 1;
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

int run_suite(RunRequest req) {
  install_interrupt_handlers();
  // Everything that can be wrong with the input is found before any case runs.
  RunPlan plan = !req.rerun_path.empty()
                     ? plan_from_results(req)
                     : plan_from_suite(load_run_suite(req), req.filter, req.shard, req.related);
  if (!req.impl.empty()) {
    bool known = false;
    for (const auto& e : registry().all_impls()) known |= e.variant == req.impl;
    if (!known) throw InputError(cat("--impl \"", req.impl, "\": no impl has that variant"));
  }
  const bool timing = req.verb == "run";
  req.exec.timing = timing;
  const std::string out =
      !req.out.empty() ? req.out : (timing ? "results/local/" + plan.suite_name + "-" + utc_stamp() + ".json" : "");
  if (req.resume && out.empty()) throw InputError("--resume needs the results file (--out) whose journal to continue");
  ReferenceCache(req.cache_dir).check_usable();
  // The output: checked, locked and journaled before any backend opens, so a second run on it, a
  // journal --resume could finish, or an --out that names an input is refused at once.
  std::unique_ptr<OutputLock> lock;
  std::unique_ptr<Journal> journal;
  if (!out.empty()) {
    check_output_file(out, {req.suite_path, req.rerun_path, req.inputs_path}, "--out");
    check_output_file(out + ".journal", {req.suite_path, req.rerun_path, req.inputs_path}, "--out");
    lock = std::make_unique<OutputLock>(out);
    journal = std::make_unique<Journal>(out + ".journal", plan.suite_hash, run_settings(req), req.command_line, req.resume);
    set_interrupt_note(cat("every finished row is in ", journal->path(), "; the same command with --resume completes the run"));
  }
  // A run that ends before its first row leaves no journal behind (a resumed one keeps its own).
  const auto discard_empty_journal = [&] {
    if (journal && !req.resume) journal->remove();
  };

  // Backends: validated here (names, options); opened in-process or by their worker.
  std::vector<Lane> lanes;
  try {
    for (auto& b : open_backends(req.backends, req.backend_opts)) {
      throw_if_interrupted();
      Lane lane{b->name(), {nullptr, {}, std::nullopt}, nullptr, nullptr, {}};
      if (req.isolate) {
        const ReferenceCache cache(req.cache_dir);  // the workers share this run's key (and folder)
        lane.worker_args = {"--backend", lane.name, "--cache-dir", cache.dir(), "--cache-salt", cache.salt()};
        for (const auto& o : req.backend_opts)
          if (o.rfind(lane.name + ".", 0) == 0) lane.worker_args.insert(lane.worker_args.end(), {"--backend-opt", o});
        start_worker(lane, req.executable);
        lane.local = std::move(b);  // kept for options() in the context; never opened
        lane.state.backend = lane.local.get();
      } else {
        lane.local = std::move(b);
        lane.state = {lane.local.get(), lane.local->probe(), std::nullopt};
      }
      if (!lane.state.probe.available) {
        if (!req.backends.empty()) {
          std::fprintf(stderr, "attnbench: backend %s is compiled in but unavailable here: %s\n", lane.name.c_str(),
                       lane.state.probe.reason.c_str());
          discard_empty_journal();
          return 3;
        }
        std::fprintf(stderr, "attnbench: skipping backend %s: %s\n", lane.name.c_str(), lane.state.probe.reason.c_str());
        continue;
      }
      if (timing) {
        if (req.isolate) {
          lane.worker->send({{"op", "peaks"}});
          Json msg;
          if (lane.worker->read(msg, kStartupTimeout) != WorkerProcess::Read::message || !msg.contains("peaks")) {
            throw_if_interrupted();
            throw BackendError(cat(lane.name, " worker could not measure peaks: ", lane.worker->stderr_tail()));
          }
          lane.state.peaks = peaks_from_json(msg["peaks"]);
        } else {
          lane.state.peaks = lane.local->measure_peaks();
        }
      }
      lanes.push_back(std::move(lane));
    }
  } catch (...) {
    discard_empty_journal();
    throw;
  }

  RunContext rc;
  rc.command_line = req.command_line;
  rc.verb = req.verb;
  rc.suite_name = plan.suite_name;
  rc.suite_path = plan.suite_path;
  rc.suite_hash = plan.suite_hash;
  std::set<uint64_t> seeds;
  for (const auto& r : plan.runs) seeds.insert(r.pc.c.seed);
  rc.seeds.assign(seeds.begin(), seeds.end());
  for (const auto& lane : lanes) {
    Json j = probe_to_json(lane.state.probe);
    if (lane.state.peaks) j["peaks"] = peaks_to_json(*lane.state.peaks);
    Json opts = Json::object();
    for (const auto& o : lane.local->options()) opts[o.name] = lane.local->option(o.name);
    j["options"] = opts;
    rc.backends[lane.name] = j;
  }
  const TimingOptions& t = req.exec.timing_opts;
  rc.timing = {{"repetitions", t.repetitions}, {"min_time_s", t.min_time_s}, {"warmup_s", t.warmup_s},
               {"target_sample_s", t.target_sample_s}, {"noisy_cv", t.noisy_cv}, {"mode", t.mode}};
  rc.extra = {{"isolated", req.isolate}, {"timeout_s", req.timeout_s},
              {"shard", std::to_string(req.shard.index) + "/" + std::to_string(req.shard.count)},
              {"resumed", req.resume}};

  // Each row once: those the journal holds, then each new one whose key is not yet taken (a
  // resumed case re-emits the `unsupported` row whose case_done line the interruption cut).
  std::vector<RowResult> rows;
  std::set<RowKey> recorded;
  if (journal)
    for (RowResult& r : journal->take_previous_rows())
      if (recorded.insert(key_of(r)).second) rows.push_back(std::move(r));
  std::map<std::string, const PlannedRun*> by_id;
  for (const auto& r : plan.runs) by_id[r.pc.c.id()] = &r;
  Progress progress(plan.runs.size() * lanes.size(), req.quiet, req.verbose);
  Runner runner(req);
  bool interrupted = false;
  const auto emit = [&](RowResult row) {
    if (!recorded.insert(key_of(row)).second) return;
    if (journal) journal->append(row);
    progress.row(row);
    rows.push_back(std::move(row));
  };
  try {
    for (auto& lane : lanes) {
      for (const PlannedRun& pr : plan.runs) {
        const std::string id = pr.pc.c.id();
        if (journal && journal->case_done(id, lane.name)) {
          progress.case_done();
          continue;
        }
        if (!pr.pc.skip_reason.empty()) {
          emit(skipped_row(pr.pc.c, lane.name, pr.pc.skip_reason));
        } else {
          try {
            if (!runner.run_case(lane, pr, journal ? journal->variants_done(id, lane.name) : std::vector<std::string>{}, emit)) {
              interrupted = true;
              break;
            }
          } catch (const BackendError& e) {  // a worker that cannot start: every row of the case says so
            throw_if_interrupted();
            emit(status_row(pr.pc.c, lane.name, "-", lane.state.probe.device.name, Status::error, e.what()));
          }
        }
        if (journal) journal->mark_case_done(id, lane.name);
        progress.case_done();
        if (interrupt_signal()) {
          interrupted = true;
          break;
        }
      }
      lane.worker.reset();  // workers run one at a time
      if (interrupted) break;
    }
  } catch (const Interrupted&) {
    interrupted = true;
  }
  if (interrupted) stopping();  // the watchdog waits while what is here is written

  // Results: in plan order (suite order, then backend, then variant), whatever order they ran in.
  std::map<std::string, size_t> lane_order;
  for (size_t i = 0; i < lanes.size(); ++i) lane_order[lanes[i].name] = i;
  for (auto& r : rows) {
    auto it = by_id.find(r.record.case_id);
    if (it == by_id.end()) continue;
    r.record.case_index = it->second->index;
    r.record.related_rank = it->second->related_rank;
    r.record.related = it->second->related;
    r.record.related_of = it->second->related_of;
  }
  const auto key = [&](const RowResult& r) {
    return std::make_tuple(r.record.case_index.value_or(0), r.record.related_rank.value_or(0),
                           lane_order[r.record.backend], r.record.variant);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const RowResult& a, const RowResult& b) { return key(a) < key(b); });
  std::vector<Status> statuses;
  std::vector<Json> out_rows;
  for (const auto& r : rows) {
    statuses.push_back(r.record.status);
    for (auto& j : result_rows(r)) out_rows.push_back(std::move(j));
  }
  if (interrupted) rc.extra["interrupted"] = interrupt_signal();
  if (!out.empty()) {
    write_results(out, build_context(rc), out_rows);
    if (!interrupted) journal->remove();
  }
  progress.finish();
  print_summary(rows);
  if (!out.empty()) std::printf("\nresults: %s%s\n", out.c_str(), interrupted ? " (partial; --resume completes it)" : "");
  if (interrupted) return 128 + interrupt_signal();
  return exit_code_for(statuses);
}

}  // namespace attnbench
