// Timing through Google Benchmark (DESIGN.md §6): each (case, impl) becomes a benchmark
// registered at run time with UseManualTime() and the backend's device timer, at least 9
// repetitions after a warm-up, and Google Benchmark's own statistics (mean, median, stddev, cv).
// A sample is a batch of back-to-back launches, sized so a sample lasts at least
// `target_sample_s`, so microsecond kernels are not measured by launch overhead.
//
// This file times hot (inputs resident in cache where they fit); the timing mode is recorded in
// every row so cold timing can sit beside it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnbench/backend.h"

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
  int64_t batch = 1;                    // launches per sample
  std::vector<double> seconds;          // per repetition: mean seconds per launch
  std::vector<double> cpu_seconds;      // per repetition: host CPU seconds per launch
  std::vector<int64_t> launches;        // per repetition
  std::vector<Aggregate> aggregates;
  double median_s() const;
  double cv() const;
};

// Times launch() (one enqueue of the impl) on the backend. The caller has run it at least once.
TimingResult time_launches(const std::string& name, const std::function<void()>& launch, Backend& backend,
                           const TimingOptions& opt);

}  // namespace attnbench
