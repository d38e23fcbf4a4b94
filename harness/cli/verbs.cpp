#include "verbs.h"

#include <cstdio>
#include <set>

#include "args.h"
#include "attnbench/error.h"
#include "attnbench/json.h"
#include "attnbench/registry.h"
#include "attnbench/replay.h"
#include "attnbench/row_io.h"
#include "attnbench/runner.h"
#include "attnbench/suite.h"

namespace attnbench::cli {

int verb_list(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {
      {"help", false, false, "this text"},
      {"json", false, false, "machine-readable: each method's info and impls, the backends, every impl with its source file"},
      {"markdown", false, false, "the method catalog (docs/methods.md): info, parameters, outputs and impls of each method"},
      {"inputs", true, false, "FILE.safetensors: the suite's cases replaying the file's inputs (their ids carry its hash)"},
      {"input-tensor", true, true, "INPUT=TENSOR: with --inputs, an input read from a tensor of another name (repeatable)"}};
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench list [SUITE] [--json | --markdown]\n\nWithout a suite: every method with its impls per backend.\n"
                "With a suite: its expanded case ids, and why any is skipped.\n\n%s",
                flags_help(flags).c_str());
    return 0;
  }
  if (args.has("json") && args.has("markdown")) throw InputError("list: --json and --markdown exclude each other");
  if (!args.positional().empty()) {
    Suite suite = load_suite(args.positional()[0]);
    if (args.has("inputs")) replay_suite_inputs(suite, args.get("inputs"), parse_tensor_map(args.all("input-tensor")));
    for (const auto& pc : suite.cases)
      std::printf("%s%s%s\n", pc.c.id().c_str(), pc.skip_reason.empty() ? "" : "  [skipped: ",
                  pc.skip_reason.empty() ? "" : (pc.skip_reason + "]").c_str());
    return 0;
  }
  if (args.has("markdown")) {
    std::printf("%s", method_catalog_markdown().c_str());
    return 0;
  }
  if (args.has("json")) {
    // "methods" and "impls" keep their first keys (name, family, source; method, backend,
    // variant, source) for the scripts that read them; each method also carries its own impls.
    Json out = {{"methods", Json::array()}, {"backends", Json::array()}, {"impls", Json::array()}};
    for (const Method* m : registry().methods()) {
      const MethodInfo& info = m->info();
      Json dtypes = Json::array(), impls = Json::array();
      for (DType t : info.dtypes) dtypes.push_back(std::string(dtype_name(t)));
      for (const auto& b : registry().backends())
        for (const ImplEntry* e : registry().impls(info.name, b.name))
          impls.push_back({{"backend", e->backend}, {"variant", e->variant}, {"source", e->source_file}});
      out["methods"].push_back({{"name", info.name},
                                {"family", info.family},
                                {"source", registry().method_source(info.name)},
                                {"catalog_id", info.catalog_id},
                                {"summary", info.summary},
                                {"paper", info.paper},
                                {"spec_version", info.spec_version},
                                {"phases", info.phases},
                                {"dtypes", dtypes},
                                {"impls", impls}});
    }
    for (const auto& b : registry().backends()) out["backends"].push_back({{"name", b.name}, {"source", b.source_file}});
    for (const auto& e : registry().all_impls())
      out["impls"].push_back({{"method", e.method}, {"backend", e.backend}, {"variant", e.variant}, {"source", e.source_file}});
    std::printf("%s\n", out.dump(1).c_str());
    return 0;
  }
  std::vector<std::string> backends;
  for (const auto& b : registry().backends()) backends.push_back(b.name);
  std::printf("%-22s %-10s %-10s %-16s", "method", "family", "catalog", "dtypes");
  for (const auto& b : backends) std::printf(" %-22s", b.c_str());
  std::printf("\n");
  for (const Method* m : registry().methods()) {
    const MethodInfo& info = m->info();
    std::string dtypes;
    for (DType t : info.dtypes) {
      if (!dtypes.empty()) dtypes += ',';
      dtypes += dtype_name(t);
    }
    std::printf("%-22s %-10s %-10s %-16s", info.name.c_str(), info.family.c_str(), info.catalog_id.c_str(), dtypes.c_str());
    for (const auto& b : backends) {
      std::string variants;
      for (const ImplEntry* e : registry().impls(info.name, b)) variants += (variants.empty() ? "" : ",") + e->variant;
      std::printf(" %-22s", variants.empty() ? "-" : variants.c_str());
    }
    std::printf("\n");
  }
  return 0;
}

int verb_env(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {
      {"help", false, false, "this text"},
      {"backend-opt", true, true, "<backend>.<option>=<value> (repeatable)"},
      {"peaks", false, false, "also measure each backend's ceilings: read, write and copy bandwidth, and each compute path's rate"},
  };
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench env [options]\n\nBackends compiled in, whether each is available here, its device,\n"
                "limits and options (JSON on stdout).\n\n%s", flags_help(flags).c_str());
    return 0;
  }
  Json out = Json::object();
  for (auto& b : open_backends({}, args.all("backend-opt"))) {
    const Probe p = b->probe();
    Json j = probe_to_json(p);  // as the results' context shows it
    Json opts = Json::array();
    for (const auto& o : b->options())
      opts.push_back({{"option", b->name() + "." + o.name}, {"value", b->option(o.name)}, {"doc", o.doc}});
    j["options"] = opts;
    if (args.has("peaks") && p.available) {
      j["peaks"] = peaks_to_json(b->measure_peaks());
    }
    out[b->name()] = j;
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace attnbench::cli
