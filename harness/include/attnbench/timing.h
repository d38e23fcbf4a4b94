// Timing through Google Benchmark (docs/design.md "Timing"): each (case, impl) becomes a benchmark
// registered at run time with UseManualTime() and the backend's device timer, at least 9
// repetitions after a warm-up, and Google Benchmark's own statistics (mean, median, stddev, cv).
// A sample is a batch of back-to-back launches, sized so a sample lasts at least
// `target_sample_s`, so microsecond kernels are not measured by launch overhead.
//
// Hot samples time back-to-back launches with the inputs resident in cache where they fit. Cold
// samples defeat the last-level cache: the backend flushes it before each single launch (as
// nvbench does) and holds its stream while the launch is enqueued. The mode and how it was done
// are recorded in every row.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnbench/backend.h"
#include "attnbench/json.h"

namespace attnbench {

struct TimingOptions {
  int repetitions = 9;
  double min_time_s = 0.05;        // per repetition
  double warmup_s = 0.02;
  double target_sample_s = 2e-4;   // batch launches until one sample lasts this long
  double noisy_cv = 0.05;          // a row whose cv exceeds this is flagged noisy
  // cold: every sample is one launch after the backend flushed its last-level cache (nvbench's
  // way); hot: back-to-back launches with the inputs resident; auto: cold for memory-bound rows.
  std::string mode = "auto";
};

struct Aggregate {
  std::string name;    // mean, median, stddev, cv
  bool percentage;     // cv: a fraction, not a time
  double value;        // seconds per launch, or the fraction
  double cpu_value;
};

struct TimingResult {
  std::string mode = "hot";             // cold | hot, as run
  std::string how;                      // one line: what a sample is
  int64_t batch = 1;                    // launches per sample
  std::vector<double> seconds;          // per repetition: mean seconds per launch
  std::vector<double> cpu_seconds;      // per repetition: host CPU seconds per launch
  std::vector<int64_t> launches;        // per repetition
  std::vector<Aggregate> aggregates;
  Json telemetry = Json::array();       // the backend's per-repetition device state, if it has any
  double median_s() const;
  double cv() const;
};

// Times launch() (one enqueue of the impl) on the backend. The caller has run it at least once.
// `cold`: each sample is one launch after backend.flush_cache() (and hold_stream(), so launch
// latency stays out); a backend that cannot flush is timed hot, and the row says so.
TimingResult time_launches(const std::string& name, const std::function<void()>& launch, Backend& backend,
                           const TimingOptions& opt, bool cold);

}  // namespace attnbench
