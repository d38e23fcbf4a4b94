// `attnbench compare A.json B.json` and `attnbench merge`: two runs compared with statistics
// instead of eyeballing, and shard results joined into one file (docs/design.md "Beyond one machine").
#pragma once

#include <string>
#include <vector>

#include "attnbench/json.h"

namespace attnbench {

// Two-sided Mann–Whitney U test: the exact distribution for small samples without ties, the
// normal approximation with tie and continuity corrections otherwise.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

struct RowComparison {
  std::string name;            // <case id>/<backend>/<variant>
  double median_a = 0, median_b = 0;
  double change = 0;           // median_b / median_a − 1
  double p = 1;
  int n_a = 0, n_b = 0;
  std::string verdict;         // SAME | FASTER | SLOWER | UNCLEAR
  bool outputs_changed = false;
};

struct CompareReport {
  std::vector<RowComparison> rows;
  std::vector<std::string> only_in_a, only_in_b;
  std::vector<std::string> untimed;  // in both, but without timed repetitions on a side
  double geomean_ratio = 1;    // geometric mean of median_b / median_a over matched rows
  int few_repetitions = 0;     // rows with fewer than 9 repetitions on a side
};

// Significance levels of the verdict: p < kSignificant is FASTER/SLOWER, p ≥ kSame is SAME, and
// in between (or with fewer than 4 repetitions a side) UNCLEAR.
inline constexpr double kSignificant = 0.01;
inline constexpr double kSame = 0.05;

CompareReport compare_results(const Json& a, const Json& b);

// Joins results files of shards of one suite; InputError when their suite hash, commit or schema
// version differ, or when they are not exactly one complete partition: every shard i/N of one N,
// each once (`partial`: shards may be missing; the merged context lists them as missing_shards).
// Rows keep plan order; a row present in several shards (a shared baseline) is taken once.
Json merge_results(const std::vector<Json>& docs, const std::vector<std::string>& paths, bool partial = false);

// A results file we understand, or InputError naming the file, the place and what is wrong: the
// one reader behind compare, merge, leaderboard and run --rerun.
Json read_results_file(const std::string& path);
Json parse_results_text(const std::string& text, const std::string& path);  // the file's bytes

}  // namespace attnbench
