// compare and merge.
#include <cmath>
#include <cstdio>
#include <fstream>

#include "args.h"
#include "attnbench/compare.h"
#include "attnbench/error.h"
#include "attnbench/files.h"
#include "attnbench/plan.h"
#include "attnbench/results.h"
#include "verbs.h"

namespace attnbench::cli {

int verb_compare(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {
      {"help", false, false, "this text"},
      {"fail-on-regression", true, false, "PCT: exit 1 when a row is significantly SLOWER by more than PCT percent"},
      {"json", false, false, "print the comparison as JSON"},
  };
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench compare A.json B.json [options]\n\nRows are matched by case id, backend and variant. Per row: the change in\n"
                "median time from A to B, a two-sided Mann-Whitney U test on the repetitions, a\n"
                "verdict (SLOWER/FASTER at p < %.2g, SAME at p >= %.2g, else UNCLEAR), and whether the\n"
                "output hashes changed; then the geometric mean of the time ratios.\n\n%s",
                kSignificant, kSame, flags_help(flags).c_str());
    return 0;
  }
  if (args.positional().size() != 2) throw InputError("compare needs two results files: attnbench compare A.json B.json");
  const double threshold = args.get_double("fail-on-regression", -1);
  const Json a = read_results_file(args.positional()[0]), b = read_results_file(args.positional()[1]);
  const CompareReport r = compare_results(a, b);
  int regressions = 0;
  for (const auto& c : r.rows)
    if (threshold >= 0 && c.verdict == "SLOWER" && 100.0 * c.change > threshold) ++regressions;
  if (args.has("json")) {
    Json j = {{"rows", Json::array()}, {"only_in_a", r.only_in_a}, {"only_in_b", r.only_in_b}, {"untimed", r.untimed},
              {"geomean_ratio", r.geomean_ratio}, {"regressions", regressions}};
    for (const auto& c : r.rows)
      j["rows"].push_back({{"name", c.name}, {"median_a_us", c.median_a}, {"median_b_us", c.median_b}, {"change", c.change},
                           {"p", c.p}, {"n_a", c.n_a}, {"n_b", c.n_b}, {"verdict", c.verdict},
                           {"outputs_changed", c.outputs_changed}});
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("%-8s %9s %12s %12s %9s  %s\n", "verdict", "change", "A median us", "B median us", "p", "row");
    for (const auto& c : r.rows)
      std::printf("%-8s %+8.1f%% %12.4g %12.4g %9.2g  %s%s\n", c.verdict.c_str(), 100 * c.change, c.median_a, c.median_b,
                  c.p, c.name.c_str(), c.outputs_changed ? "  [outputs changed]" : "");
    if (!r.only_in_a.empty()) std::printf("\n%zu rows only in A (e.g. %s)\n", r.only_in_a.size(), r.only_in_a.front().c_str());
    if (!r.only_in_b.empty()) std::printf("%zu rows only in B (e.g. %s)\n", r.only_in_b.size(), r.only_in_b.front().c_str());
    if (!r.untimed.empty())
      std::printf("%zu rows without timed repetitions on a side, not compared (e.g. %s)\n", r.untimed.size(), r.untimed.front().c_str());
    std::printf("\n%zu rows compared; geometric mean of B/A: %.4f (%+.1f%%)\n", r.rows.size(), r.geomean_ratio,
                100 * (r.geomean_ratio - 1));
  }
  if (r.few_repetitions)
    std::fprintf(stderr, "attnbench: warning: %d rows have fewer than 9 repetitions; the U test has little power there\n",
                 r.few_repetitions);
  if (regressions) {
    std::fprintf(stderr, "attnbench: %d rows are significantly slower by more than %g%%\n", regressions, threshold);
    return 1;
  }
  return 0;
}

int verb_merge(const std::vector<std::string>& argv) {
  const std::vector<FlagSpec> flags = {{"help", false, false, "this text"},
                                       {"out", true, false, "the merged results file (required)"},
                                       {"partial", false, false, "merge an incomplete set of shards, recording which are missing"}};
  const Args args(flags, argv);
  if (args.has("help")) {
    std::printf("usage: attnbench merge SHARD.json ... --out MERGED.json\n\nJoins the results of `run --shard i/N` runs of one suite: exactly one\n"
                "complete set of shards 0/N ... N-1/N. Refuses files whose suite hash, git commit or schema\n"
                "version differ, a shard given twice, and (without --partial) a missing shard.\n\n%s", flags_help(flags).c_str());
    return 0;
  }
  if (args.positional().empty()) throw InputError("merge needs results files: attnbench merge A.json B.json --out M.json");
  if (!args.has("out")) throw InputError("merge needs --out");
  check_output_file(args.get("out"), args.positional(), "--out");
  std::vector<Json> docs;
  for (const auto& p : args.positional()) docs.push_back(read_results_file(p));
  const Json merged = merge_results(docs, args.positional(), args.has("partial"));
  std::vector<Json> rows(merged["benchmarks"].begin(), merged["benchmarks"].end());
  write_results(args.get("out"), merged["context"], rows);
  std::printf("merged %zu files, %zu rows: %s\n", docs.size(), rows.size(), args.get("out").c_str());
  if (merged["context"].contains("missing_shards")) {
    std::string list;
    const int n = Shard::parse(docs.front()["context"]["shard"].get<std::string>()).count;
    for (const auto& i : merged["context"]["missing_shards"]) list += cat(list.empty() ? "" : ", ", i.get<int>(), "/", n);
    std::fprintf(stderr, "attnbench: merge --partial: shards %s are missing; their rows are not in %s\n", list.c_str(),
                 args.get("out").c_str());
  }
  return 0;
}

}  // namespace attnbench::cli
