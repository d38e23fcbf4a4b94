#include "attnbench/case_job.h"

#include <algorithm>

#include "attnbench/cases.h"
#include "attnbench/error.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"

namespace attnbench {

std::vector<const ImplEntry*> runnable_impls(const Case& c, const std::string& backend, const DeviceLimits& limits,
                                             const std::string& impl, std::string* why) {
  std::vector<const ImplEntry*> runnable;
  std::vector<std::string> reasons;
  // A case whose inputs and outputs alone exceed the device's memory is unsupported on every
  // backend alike, before any impl is asked (and before a byte of it is generated).
  const double bytes = c.method->work(c).bytes;
  if (limits.memory_bytes && bytes > static_cast<double>(limits.memory_bytes)) {
    *why = cat("its inputs and outputs alone take ", human_bytes(bytes), "; the device has ",
               human_bytes(static_cast<double>(limits.memory_bytes)));
    return {};
  }
  for (const ImplEntry* e : registry().impls(c.method_name(), backend)) {
    if (!impl.empty() && e->variant != impl) continue;
    const Support sup = e->make()->supports(c, limits);
    if (sup.ok) runnable.push_back(e);
    else reasons.push_back(e->variant + ": " + sup.reason);
  }
  if (reasons.empty()) reasons.push_back(cat("no ", backend, " impl of ", c.method_name(), impl.empty() ? "" : " with variant " + impl));
  why->clear();
  for (const auto& r : reasons) *why += (why->empty() ? "" : "; ") + r;
  return runnable;
}

void run_case_job(const CaseJob& job, BackendState& state, const ReferenceCache& cache, const JobCallbacks& cb) {
  const Case& c = job.c;
  std::string why;
  const std::vector<const ImplEntry*> runnable = runnable_impls(c, state.backend->name(), state.probe.limits, job.impl, &why);
  if (runnable.empty()) {
    cb.on_row(unsupported_row(c, state, why));
    return;
  }
  std::optional<CaseData> data;
  for (const ImplEntry* e : runnable) {
    if (std::find(job.skip_variants.begin(), job.skip_variants.end(), e->variant) != job.skip_variants.end()) continue;
    if (cb.on_start && !cb.on_start(e->variant)) return;
    if (!data) data = prepare_case_data(c, &cache);
    cb.on_row(execute_case(*data, state, *e, job.exec));
  }
}

Json job_to_json(const CaseJob& job) {
  const TimingOptions& t = job.exec.timing_opts;
  Json j = {{"op", "case"},
          {"case_id", job.c.id()},
          {"label", job.c.label},
          {"headline", job.c.headline},
          {"impl", job.impl},
          {"skip_variants", job.skip_variants},
          {"timing", job.exec.timing},
          {"timing_opts",
           {{"repetitions", t.repetitions}, {"min_time_s", t.min_time_s}, {"warmup_s", t.warmup_s},
            {"target_sample_s", t.target_sample_s}, {"noisy_cv", t.noisy_cv}, {"mode", t.mode}}}};
  if (job.c.source) j["inputs"] = job.c.source->to_json();
  return j;
}

CaseJob job_from_json(const Json& j) {
  CaseJob job;
  job.c = parse_case_id(j.at("case_id").get<std::string>());
  if (j.contains("inputs")) job.c = with_source(std::move(job.c), input_source_from_json(j["inputs"]));
  job.c.label = j.value("label", "");
  job.c.headline = j.value("headline", false);
  job.impl = j.value("impl", "");
  job.skip_variants = j.value("skip_variants", std::vector<std::string>{});
  job.exec.timing = j.value("timing", false);
  const Json& t = j.at("timing_opts");
  TimingOptions& o = job.exec.timing_opts;
  o.repetitions = t.at("repetitions");
  o.min_time_s = t.at("min_time_s");
  o.warmup_s = t.at("warmup_s");
  o.target_sample_s = t.at("target_sample_s");
  o.noisy_cv = t.at("noisy_cv");
  o.mode = t.at("mode");
  return job;
}

}  // namespace attnbench
