// compare and merge on documents built from typed rows: merge orders rows by their records' plan
// places, compare sees an output hash change, and a results file with a record this build cannot
// read is refused with the file and the field named.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "attnbench/compare.h"
#include "attnbench/error.h"
#include "attnbench/results.h"
#include "support.h"

using namespace attnbench;

namespace {

// A RowResult's parts (RowResult itself holds tensors and does not copy).
struct Made {
  Row record;
  std::optional<TimingResult> timing;
};

Made row(const std::string& case_id, int case_index, int related_rank, Status status = Status::pass) {
  Made r;
  r.record.case_id = case_id;
  r.record.method = "toy";
  r.record.backend = "cpu";
  r.record.variant = "v";
  r.record.status = status;
  r.record.case_index = case_index;
  r.record.related_rank = related_rank;
  return r;
}

// A timed row: nine samples around `us` microseconds, its median aggregate, and an output hash.
Made timed(const std::string& case_id, double us, const std::string& outputs_hash) {
  Made r = row(case_id, 0, 0);
  r.record.hashes = RowHashes{"in", "ref", outputs_hash};
  TimingResult t;
  for (int i = 0; i < 9; ++i) {
    t.seconds.push_back((us + 0.01 * i) * 1e-6);
    t.cpu_seconds.push_back(us * 1e-6);
    t.launches.push_back(100);
  }
  t.aggregates = {{"mean", false, us * 1e-6, us * 1e-6}, {"median", false, us * 1e-6, us * 1e-6}};
  r.timing = t;
  return r;
}

Json shard_doc(const std::vector<Made>& rows, const std::string& shard = "0/1") {
  Json d = {{"context", {{"schema_version", kSchemaVersion}, {"suite", {{"hash", "h"}}}, {"git_commit", "c"}, {"shard", shard}}},
            {"benchmarks", Json::array()}};
  for (const auto& m : rows) {
    RowResult r;
    r.record = m.record;
    r.timing = m.timing;
    for (auto& j : result_rows(r)) d["benchmarks"].push_back(std::move(j));
  }
  return d;
}

std::vector<std::string> names(const Json& doc) {
  std::vector<std::string> out;
  for (const auto& r : doc["benchmarks"]) out.push_back(r["name"]);
  return out;
}

}  // namespace

TEST_CASE("merge: plan order from the records; a shared related row is taken from its earliest place", "[unit]") {
  // The baseline x is related to a (case 0) in one shard and to b (case 1) in the other.
  const Json s0 = shard_doc({row("b", 1, 0), row("x", 1, 1)}, "0/2");
  const Json s1 = shard_doc({row("a", 0, 0), row("x", 0, 1)}, "1/2");
  const Json m = merge_results({s0, s1}, {"s0.json", "s1.json"});
  CHECK(names(m) == std::vector<std::string>{"a/cpu/v", "x/cpu/v", "b/cpu/v"});
  CHECK(m["benchmarks"][1]["attnbench"]["case_index"] == 0);
  CHECK(m["context"]["shard"] == "merged");
}

TEST_CASE("compare: an output hash change is flagged; rows are matched by name", "[unit]") {
  const Json a = shard_doc({timed("p", 10, "h1"), timed("q", 20, "h2")});
  const Json b = shard_doc({timed("p", 10, "h1"), timed("q", 20, "h3")});
  const CompareReport r = compare_results(a, b);
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].name == "p/cpu/v");
  CHECK_FALSE(r.rows[0].outputs_changed);
  CHECK(r.rows[1].outputs_changed);
  CHECK(r.rows[1].verdict == "SAME");
}

TEST_CASE("read_results_file refuses a record it cannot read, naming the file, the row and the field", "[unit]") {
  const std::string dir = test::scratch_dir("compare_refuse");
  Json doc = shard_doc({row("a", 0, 0, Status::fail)});
  const std::string good = dir + "/good.json", bad = dir + "/bad.json";
  std::ofstream(good) << doc.dump();
  CHECK(read_results_file(good)["benchmarks"].size() == 1);
  doc["benchmarks"][0]["attnbench"]["status"] = "melted";
  std::ofstream(bad) << doc.dump();
  CHECK_THROWS_AS(read_results_file(bad), InputError);
  CHECK_THROWS_WITH(read_results_file(bad),
                    Catch::Contains(bad + ": results row a/cpu/v: `status` unknown status \"melted\""));
}

TEST_CASE("merge takes exactly one complete set of shards, or says which are missing", "[unit]") {
  const Json s0_of_2 = shard_doc({row("a", 0, 0)}, "0/2"), s1_of_2 = shard_doc({row("b", 1, 0)}, "1/2");
  const Json s1_of_3 = shard_doc({row("b", 1, 0)}, "1/3");
  CHECK(merge_results({s0_of_2, s1_of_2}, {"a.json", "b.json"})["benchmarks"].size() == 2);
  CHECK_THROWS_WITH(merge_results({s0_of_2, s1_of_3}, {"a.json", "b.json"}),
                    Catch::Contains("b.json is shard 1/3 but a.json is one of 2 shards"));
  CHECK_THROWS_WITH(merge_results({s0_of_2, s0_of_2}, {"a.json", "c.json"}),
                    Catch::Contains("shard 0/2 is given twice (a.json and c.json)"));
  CHECK_THROWS_WITH(merge_results({s0_of_2}, {"a.json"}), Catch::Contains("shards 1/2 are missing"));
  const Json partial = merge_results({s0_of_2}, {"a.json"}, true);
  CHECK(partial["context"]["missing_shards"] == Json::array({1}));
  const Json merged = merge_results({s0_of_2, s1_of_2}, {"a.json", "b.json"});
  CHECK_THROWS_WITH(merge_results({merged}, {"m.json"}), Catch::Contains("m.json is itself a merge"));
}

TEST_CASE("compare: a row without timed repetitions is listed apart, never compared as nan", "[unit]") {
  Json a = shard_doc({timed("p", 10, "h1"), timed("q", 20, "h2")});
  Json b = a;
  // q in B keeps its median but loses its repetitions.
  Json kept = Json::array();
  for (const auto& r : b["benchmarks"])
    if (!(r["run_name"] == "q/cpu/v" && r["run_type"] == "iteration")) kept.push_back(r);
  b["benchmarks"] = kept;
  const CompareReport r = compare_results(a, b);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].name == "p/cpu/v");
  CHECK(r.untimed == std::vector<std::string>{"q/cpu/v"});
  CHECK(std::isfinite(r.geomean_ratio));
}
