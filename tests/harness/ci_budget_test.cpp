// The per-backend caps on suites/ci.json (docs/design.md "Tests and CI"), enforced over the suite's total work (no
// timing here): the CPU check within 60 s, a lavapipe check within 2 minutes, on the CI machine
// (2 cores), with a cold reference cache. A case added to ci.json that would break a cap fails
// this test with the breakdown, before it slows every CI run.
//
// The model: per case, the inputs are generated twice (by the parent for the fp64 reference, by
// the worker that runs the impl), the reference runs once (at most kFullReferenceFlops: larger
// cases check a sample of rows), the impl once, plus a fixed cost. The rates are those of this
// project's 2-core CI machine, from the rows' `seconds` of
//   attnbench check suites/ci.json --backends cpu --cache-dir EMPTY --out cpu.json
//   ATTNBENCH_VULKAN_VALIDATION=1 attnbench check suites/ci.json --backends vulkan --cache-dir EMPTY --out vk.json
// (2026-11-30: 8.8 s of inputs per pass for 481 MB of work bytes, 12 s of reference for 16.9
// GFLOP, lavapipe 11.5 s for 21.5 GFLOP; walls 32.5 s and 43.7 s, which the model reproduces
// within 3%).
#include <catch2/catch.hpp>

#include <algorithm>

#include "attnbench/registry.h"
#include "attnbench/suite.h"
#include "reference/attention/attention_spec.h"
#include "support.h"
#include "vulkan/device_limits.h"

using namespace attnbench;

namespace {

constexpr double kInputBytesPerS = 55e6;       // Philox and detmath Box–Muller, per byte of work.bytes
constexpr double kReferenceFlopsPerS = 1.4e9;  // fp64 reference and same-precision baseline
constexpr double kPerCaseS = 0.02;             // worker messages, hashing, checks, quality
constexpr double kCpuFlopsPerS = 30e9;         // the CPU backend's impls on 2 cores
constexpr double kLavapipeFlopsPerS = 1.9e9;   // the Vulkan shaders on lavapipe (2 cores)

struct Estimate {
  double inputs = 0, reference = 0, run = 0, fixed = 0;
  int cases = 0, not_run = 0;
  std::vector<std::pair<double, std::string>> costliest;  // (seconds, case id), to say what to trim
  double total() const { return inputs + reference + run + fixed; }
};

// runs(c): whether the backend runs the case (else only its row's bookkeeping counts).
template <typename Runs>
Estimate estimate(const Suite& suite, double backend_flops_per_s, Runs runs) {
  Estimate e;
  for (const PlannedCase& pc : suite.cases) {
    if (!pc.skip_reason.empty()) continue;
    const Case& c = pc.c;
    const Work w = c.method->work(c);
    ++e.cases;
    e.fixed += kPerCaseS;
    if (!runs(c)) {
      ++e.not_run;
      continue;
    }
    const double inputs = 2 * w.bytes / kInputBytesPerS;
    const double reference = std::min(w.flops, attention::kFullReferenceFlops) / kReferenceFlopsPerS;
    e.inputs += inputs;
    e.reference += reference;
    e.run += w.flops / backend_flops_per_s;
    e.costliest.emplace_back(inputs + reference + w.flops / backend_flops_per_s, c.id());
  }
  std::sort(e.costliest.rbegin(), e.costliest.rend());
  e.costliest.resize(std::min<size_t>(e.costliest.size(), 8));
  return e;
}

void require_within(const Estimate& e, double cap_s) {
  INFO(e.cases << " cases (" << e.not_run << " not run): inputs " << e.inputs << " s, reference " << e.reference
                << " s, impls " << e.run << " s, fixed " << e.fixed << " s; total " << e.total() << " s, cap " << cap_s
                << " s");
  std::string top;
  for (const auto& [sec, id] : e.costliest) top += "\n  " + std::to_string(sec) + " s  " + id;
  INFO("the costliest cases:" << top);
  CHECK(e.total() <= cap_s);
}

}  // namespace

TEST_CASE("suites/ci.json fits the CPU check's cap of 60 s by its total work", "[unit]") {
  const Suite suite = load_suite(test::source_path("suites/ci.json"));
  require_within(estimate(suite, kCpuFlopsPerS, [](const Case&) { return true; }), 60);
}

#if ATTNBENCH_HAS_VULKAN
TEST_CASE("suites/ci.json fits a lavapipe check's cap of 2 minutes by its total work", "[unit]") {
  const Suite suite = load_suite(test::source_path("suites/ci.json"));
  // Cases no lavapipe impl supports (over one binding) cost only their row; at subgroup 4 the
  // supported set is the same or smaller, so subgroup 8 is the bound.
  const DeviceLimits lavapipe = test::lavapipe_limits();
  const auto runs = [&](const Case& c) {
    for (const ImplEntry* e : registry().impls(c.method_name(), "vulkan"))
      if (e->make()->supports(c, lavapipe).ok) return true;
    return false;
  };
  require_within(estimate(suite, kLavapipeFlopsPerS, runs), 120);
}
#endif
