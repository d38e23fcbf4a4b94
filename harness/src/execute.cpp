#include "attnbench/execute.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/reference_cache.h"
#include "attnbench/replay.h"

namespace attnbench {

Buffer& IoBuffers::operator[](const std::string& name) const {
  auto it = buffers_.find(name);
  ATTNBENCH_ASSERT(it != buffers_.end(), "no input or output named \"", name, "\"");
  return *it->second;
}

namespace {

// Seconds since the last lap (or construction).
class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

CaseData prepare_case_data(const Case& c, const ReferenceCache* cache) {
  CaseData d{c, {}, {}, {}, {}, {}, {}};
  d.outputs = c.method->outputs(c);
  Stopwatch clock;
  d.inputs = case_inputs(c);
  d.input_hash = hash_tensors(d.inputs);
  d.inputs_s = clock.lap();
  d.reference_cached = cache && cache->load(c, d.input_hash, d.ref);
  if (!d.reference_cached) {
    d.ref = c.method->reference(c, d.inputs);
    if (cache) cache->store(c, d.input_hash, d.ref);
  }
  d.reference_s = clock.lap();
  d.work = c.method->work(c);
  d.reference_hash = hash_tensors(d.ref.tensors);
  return d;
}

namespace {

Json params_json(const Params& p) {
  Json j = Json::object();
  for (const auto& [name, v] : p.items()) {
    const std::string& key = name;  // a structured binding is not capturable before C++20's clang 16
    std::visit([&](const auto& x) { j[key] = x; }, v);
  }
  return j;
}

RowResult make_row(const Case& c, const std::string& backend, const std::string& variant, const std::string& device,
                   Status status, const std::string& reason) {
  const MethodInfo& info = c.method->info();
  RowResult row;
  Row& r = row.record;
  r.case_id = c.id();
  r.label = c.label;
  r.headline = c.headline;
  r.catalog_id = info.catalog_id;
  r.method = info.name;
  r.family = info.family;
  r.phase = c.phase;
  r.spec_version = info.spec_version;
  r.backend = backend;
  r.variant = variant;
  r.device = device;
  r.dtype = c.dtype;
  r.seed = c.seed;
  r.params = params_json(c.params);
  if (c.source) r.replayed = c.source->to_json();
  r.status = status;
  r.reason = reason;
  return row;
}

TensorMap download_outputs(Backend& be, const std::vector<OutputDecl>& decls, const IoBuffers& io) {
  TensorMap got;
  for (const auto& d : decls) {
    if (d.check_only) continue;
    HostTensor t(d.name, d.dtype, d.shape);
    be.download(io[d.name], t);
    got.emplace(d.name, std::move(t));
  }
  return got;
}

void upload_poisoned(Backend& be, const std::vector<OutputDecl>& decls, const IoBuffers& io) {
  for (const auto& d : decls) {
    if (d.check_only) continue;
    HostTensor t(d.name, d.dtype, d.shape);
    poison(t);
    be.upload(t, io[d.name]);
  }
}

RowCheck row_check(const OutputCheck& o) { return {o.output, o.cls, o.pass, o.message, o.metrics}; }

}  // namespace

RowResult status_row(const Case& c, const std::string& backend, const std::string& variant, const std::string& device,
                     Status status, const std::string& reason) {
  return make_row(c, backend, variant, device, status, reason);
}

RowResult unsupported_row(const Case& c, const BackendState& be, const std::string& reason) {
  return make_row(c, be.backend->name(), "-", be.probe.device.name, Status::unsupported, reason);
}

RowResult skipped_row(const Case& c, const std::string& backend, const std::string& reason) {
  return make_row(c, backend, "-", "", Status::skipped, reason);
}

RowResult execute_case(const CaseData& data, BackendState& state, const ImplEntry& entry, const ExecuteOptions& opt) {
  const Case& c = data.c;
  Backend& be = *state.backend;
  RowResult row = make_row(c, be.name(), entry.variant, state.probe.device.name, Status::pass, "");
  Row& rec = row.record;
  rec.hashes = RowHashes{data.input_hash, data.reference_hash, ""};
  rec.work = data.work;
  rec.checked_rows = CheckedRows{data.ref.checked_rows.empty(), data.ref.checked_rows.size()};
  const auto fail = [&](Status status, const std::string& reason) {
    rec.status = status;
    rec.reason = reason;
  };
  // Where this row's time went; inputs and reference are the case's, shared by its variants.
  RowSeconds seconds{data.inputs_s, data.reference_s, data.reference_cached, {}, {}, {}, {}};
  Stopwatch clock;
  std::string compute_ceiling;  // the impl's arithmetic path, once prepared
  try {
    Allocator& alloc = be.allocator();
    const size_t base_bytes = alloc.current_bytes();
    IoBuffers io;
    std::vector<BufferPtr> owned;
    for (const auto& [name, t] : data.inputs) {
      owned.push_back(alloc.allocate(t.bytes(), name, BufferRole::input));
      io.add(name, owned.back().get());
    }
    for (const auto& d : data.outputs) {
      if (d.check_only) continue;
      owned.push_back(alloc.allocate(static_cast<size_t>(numel(d.shape)) * dtype_size(d.dtype), d.name, BufferRole::output));
      io.add(d.name, owned.back().get());
    }
    alloc.reset_peak();
    const size_t io_bytes = alloc.current_bytes() - base_bytes;
    std::unique_ptr<Impl> impl = entry.make();
    impl->prepare(c, be, io);
    compute_ceiling = impl->compute_ceiling();
    for (const auto& [name, t] : data.inputs) be.upload(t, io[name]);
    upload_poisoned(be, data.outputs, io);
    be.synchronize();

    impl->run();
    be.synchronize();
    // Device state right after the checked run (clocks, throttling, memory the allocator does
    // not account for); null on backends that report none.
    rec.telemetry = be.telemetry();
    const TensorMap got = download_outputs(be, data.outputs, io);
    seconds.run = clock.lap();  // prepare, upload, one run, download
    rec.hashes->outputs = hash_tensors(got);
    if (opt.keep_outputs)
      for (const auto& [name, t] : got) row.outputs.emplace(name, t.clone());

    // Checks: guards, then layout of every output, then the method's comparison.
    CheckReport report;
    if (auto bad = alloc.check_guards(); !bad.empty()) {
      OutputCheck g{"guards", CheckClass::EXACT, false, "guard region overwritten: " + bad.front(), Json::object()};
      report.outputs.push_back(g);
    }
    bool layout_ok = true;
    for (const auto& d : data.outputs) {
      if (d.check_only) continue;
      OutputCheck lc = check_layout(d, got);
      if (!lc.pass) {
        layout_ok = false;
        report.outputs.push_back(lc);
      }
    }
    if (layout_ok && report.pass()) report = c.method->check(c, data.inputs, data.ref, got);
    rec.checks.emplace();
    for (const auto& o : report.outputs) {
      // One entry per output; a later check of the same output replaces the earlier.
      auto same = std::find_if(rec.checks->begin(), rec.checks->end(),
                               [&](const RowCheck& x) { return x.output == o.output; });
      if (same != rec.checks->end()) *same = row_check(o);
      else rec.checks->push_back(row_check(o));
    }
    if (!report.pass()) fail(Status::fail, report.first_failure());
    seconds.check = clock.lap();

    bool deterministic = true;
    if (rec.status == Status::pass && opt.timing) {
      const std::string& mode = opt.timing_opts.mode;
      const bool cold = mode == "cold" || (mode == "auto" && data.work.memory_bound());
      row.timing = time_launches(row.name(), [&] { impl->run(); }, be, opt.timing_opts, cold);
      // Race check: the outputs of one more run must hash the same as the checked run's.
      upload_poisoned(be, data.outputs, io);
      impl->run();
      be.synchronize();
      const TensorMap again = download_outputs(be, data.outputs, io);
      for (const auto& d : data.outputs) {
        if (d.check_only || again.at(d.name).hash() == got.at(d.name).hash()) continue;
        if (d.cls == CheckClass::TOL) {
          deterministic = false;
        } else {
          fail(Status::fail, cat(d.name, ": output differs between two runs (a race in an ",
                                 check_class_name(d.cls), " output)"));
        }
      }
      if (auto bad = alloc.check_guards(); !bad.empty())
        fail(Status::fail, "guard region overwritten during timing: " + bad.front());
      seconds.timing = clock.lap();
    }
    rec.deterministic = deterministic;

    const size_t peak = alloc.peak_bytes() - base_bytes;
    rec.memory = RowMemory{alloc.peak_bytes(BufferRole::input), alloc.peak_bytes(BufferRole::output),
                           peak > io_bytes ? peak - io_bytes : 0, peak};
    if (rec.status == Status::pass) {
      rec.quality = c.method->quality(c, data.inputs, got);
      seconds.quality = clock.lap();
    }
  } catch (const DeviceLostError& e) {
    fail(Status::error, e.what());
    rec.device_lost = true;
  } catch (const std::exception& e) {
    fail(Status::error, e.what());
  }
  rec.seconds = seconds;

  if (row.timing) {
    const TimingResult& t = *row.timing;
    const double median = t.median_s(), cv = t.cv();
    rec.timing = RowTiming{t.mode, t.how, t.batch, t.seconds.size(), opt.timing_opts.min_time_s, median, cv,
                           cv > opt.timing_opts.noisy_cv, t.telemetry};
    RowThroughput tp{data.work.flops / median, data.work.bytes / median, "", 0, false};
    if (state.peaks) {
      // The ceiling the row's work names; a compute path the impl names but the backend did not
      // measure (or none) falls back to the fp32 rate, and the row says so by the name it records.
      const bool memory = data.work.memory_bound();
      const std::string name = !memory && state.peaks->find(compute_ceiling) ? compute_ceiling
                                                                            : ceilings::for_bound(data.work.bound);
      const double peak = state.peaks->rate(name);
      const double achieved = memory ? data.work.bytes / median : data.work.flops / median;
      if (peak > 0) {
        tp.peak = name;
        tp.pct_of_peak = 100.0 * achieved / peak;
        tp.above_peak = achieved > peak;
      }
    }
    rec.throughput = tp;
  }
  return row;
}

}  // namespace attnbench
