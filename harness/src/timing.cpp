#include "attnbench/timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attnbench/error.h"

namespace attnbench {

namespace {

// Receives Google Benchmark's runs (per repetition, then aggregates) for one benchmark.
class Collector final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) this->runs.push_back(r);
  }
  std::vector<Run> runs;
};

double to_seconds(double value, benchmark::TimeUnit unit) {
  switch (unit) {
    case benchmark::kNanosecond: return value * 1e-9;
    case benchmark::kMicrosecond: return value * 1e-6;
    case benchmark::kMillisecond: return value * 1e-3;
    default: return value;
  }
}

}  // namespace

double TimingResult::median_s() const {
  for (const auto& a : aggregates)
    if (a.name == "median") return a.value;
  return NAN;
}

double TimingResult::cv() const {
  for (const auto& a : aggregates)
    if (a.name == "cv") return a.value;
  return NAN;
}

TimingResult time_launches(const std::string& name, const std::function<void()>& launch, Backend& backend,
                           const TimingOptions& opt, bool cold) {
  DeviceTimer& timer = backend.timer();
  TimingResult result;
  // Calibrate on single launches (already warm from the checked run).
  double single = 0;
  for (int i = 0; i < 3; ++i) {
    timer.start();
    launch();
    timer.stop();
    const double t = timer.seconds();
    single = i ? std::min(single, t) : t;
  }
  // The flush's own time (host clock, through a synchronize): a repetition's min_time budgets the
  // flushes too, or a CPU with a large last-level cache spends seconds per row on them.
  double flush_s = 0;
  if (cold) {
    const auto t0 = std::chrono::steady_clock::now();
    if (backend.flush_cache()) {
      backend.synchronize();
      flush_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      cold = false;
      result.how = "cold requested, but this backend cannot flush its cache: ";
    }
  }
  result.mode = cold ? "cold" : "hot";
  const bool held = cold && backend.hold_stream();
  if (held) backend.release_stream();
  if (cold) {
    result.how += cat("one launch per sample after a flush of the last-level cache (", backend.cache_bytes() >> 20,
                      " MiB)", held ? ", stream held while enqueued" : "");
    result.batch = 1;
  } else {
    result.batch = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(opt.target_sample_s / std::max(single, 1e-9))), 1, 100000);
    result.how += cat(result.batch, " back-to-back launches per sample, inputs resident");
  }
  const int64_t batch = result.batch;

  benchmark::ClearRegisteredBenchmarks();
  auto* bench = benchmark::RegisterBenchmark(name.c_str(), [&](benchmark::State& state) {
    for (auto _ : state) {
      if (cold) backend.flush_cache();
      const bool hold = cold && backend.hold_stream();
      timer.start();
      for (int64_t i = 0; i < batch; ++i) launch();
      timer.stop();
      if (hold) backend.release_stream();
      state.SetIterationTime(timer.seconds());
    }
    if (Json t = backend.telemetry(); !t.is_null()) result.telemetry.push_back(t);
  });
  bench->UseManualTime()
      ->Repetitions(std::max(1, opt.repetitions))
      ->Unit(benchmark::kMicrosecond);  // mean, median, stddev and cv are Google Benchmark's defaults
  if (cold) {
    // A fixed count, as many launches as min_time holds with a flush before each (at least 2, at
    // most 20): flushes cost more than the launches, and Google Benchmark would otherwise keep
    // adding iterations until min_time of launch time accumulated. (Google Benchmark allows
    // no warm-up time with a fixed count; the calibration launches above warmed up.)
    bench->Iterations(
        std::clamp<int64_t>(static_cast<int64_t>(std::ceil(opt.min_time_s / std::max(single + flush_s, 1e-9))), 2, 20));
  } else {
    bench->MinTime(opt.min_time_s)->MinWarmUpTime(opt.warmup_s);
  }
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();

  for (const auto& r : collector.runs) {
    if (r.error_occurred) throw BackendError(cat("timing failed: ", r.error_message));
    if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Iteration) {
      const double launches = static_cast<double>(r.iterations) * static_cast<double>(batch);
      result.seconds.push_back(r.real_accumulated_time / launches);
      result.cpu_seconds.push_back(r.cpu_accumulated_time / launches);
      result.launches.push_back(static_cast<int64_t>(launches));
    } else {
      Aggregate a{r.aggregate_name, r.aggregate_unit == benchmark::kPercentage, 0, 0};
      if (a.percentage) {
        a.value = r.real_accumulated_time;  // Google Benchmark stores the fraction here
        a.cpu_value = r.cpu_accumulated_time;
      } else {
        a.value = to_seconds(r.GetAdjustedRealTime(), r.time_unit) / static_cast<double>(batch);
        a.cpu_value = to_seconds(r.GetAdjustedCPUTime(), r.time_unit) / static_cast<double>(batch);
      }
      result.aggregates.push_back(a);
    }
  }
  return result;
}

}  // namespace attnbench
