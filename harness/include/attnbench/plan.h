// What a run will do, decided before any case runs: the suite's cases after --filter and
// --shard, plus each case's related cases (its baseline and companions, docs/design.md "Contracts") so the
// leaderboard can join them; or, for --rerun, the cases recorded in a results file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attnbench/json.h"
#include "attnbench/row.h"
#include "attnbench/suite.h"

namespace attnbench {

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
  static Shard parse(const std::string& text);  // "i/N"; InputError otherwise
  // A stable hash of the case id decides the shard, so every machine splits a suite the same way.
  bool contains(const std::string& case_id) const;
};

struct PlannedRun {
  PlannedCase pc;
  // Position in the results file: a suite case's index in the expanded suite; a related case sits
  // right after the first (lowest-index) case that needs it, ranked by `related_rank` (≥ 1), so
  // the order is the same however the suite is sharded.
  int index = 0;
  int related_rank = 0;
  std::vector<RelatedRef> related;     // the cases this one is compared with, by role
  std::vector<RelatedRef> related_of;  // the cases compared with this one, and the role it plays there
};

struct RunPlan {
  std::string suite_name, suite_path, suite_hash;
  std::vector<PlannedRun> runs;
};

RunPlan plan_from_suite(const Suite& suite, const std::string& filter, const Shard& shard, bool with_related);

}  // namespace attnbench
