// The row type (attnbench/row.h): statuses by name, the record's JSON round trip key for key, and
// what a reader tolerates (unknown keys) and rejects (what it cannot understand).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "attnbench/error.h"
#include "attnbench/row.h"
#include "support.h"

using namespace attnbench;

namespace {

std::vector<std::string> keys_of(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

// A row as execute_case and the runner leave a timed pass: every part present.
Row timed_row() {
  Row r;
  r.case_id = "gqa/decode/batch=1,kv_len=64/f16/s7";
  r.label = "decode";
  r.headline = true;
  r.catalog_id = "A-GQA";
  r.method = "gqa";
  r.family = "attention";
  r.phase = "decode";
  r.spec_version = 2;
  r.backend = "cpu";
  r.variant = "blocked";
  r.device = "Some CPU (2 threads)";
  r.dtype = DType::f16;
  r.seed = 0x100000007ull;
  r.params = {{"batch", 1}, {"kv_len", 64}, {"causal", true}, {"scale", 0.125}};
  r.status = Status::pass;
  r.hashes = RowHashes{"00aa", "00bb", "00cc"};
  r.work = Work{1.5e6, 4096.0, Bound::read};
  r.checked_rows = CheckedRows{false, 12};
  r.telemetry = {{"sm_clock_mhz", 1980}};
  r.checks = std::vector<RowCheck>{
      {"O", CheckClass::TOL, true, "", {{"max_abs", 1e-3}, {"gate", 4e-3}, {"compared", 512}}},
      {"idx", CheckClass::SET, false, "idx: 3 not in the reference set", {{"n_tie_swaps", 2}}}};
  r.deterministic = false;
  r.memory = RowMemory{100, 200, 0, 300};
  r.quality = Json{{"kv_bytes_kept", 1024}, {"nested", {{"a", 1.5}}}};
  r.seconds = RowSeconds{0.25, 1.5, true, 0.01, 0.02, 0.5, 0.001};
  r.timing = RowTiming{"cold", "one launch per sample", 1, 9, 0.05, 1.25e-5, 0.02, false,
                       Json::array({{{"clock", 1}}, {{"clock", 2}}})};
  r.throughput = RowThroughput{1.2e11, 3.3e8, "read_bytes_per_s", 41.5, false};
  r.case_index = 3;
  r.related_rank = 0;
  r.related = {{"baseline", "mha/decode/x/f16/s7"}};
  r.related_of = {{"decode_full", "snapkv/decode/y/f16/s7"}};
  return r;
}

}  // namespace

TEST_CASE("row: statuses by name, and an unknown name is an input error", "[unit]") {
  for (Status s : kStatuses) CHECK(parse_status(status_name(s)) == s);
  CHECK(std::string(status_name(Status::unsupported)) == "unsupported");
  CHECK(is_bad(Status::fail));
  CHECK(is_bad(Status::timeout));
  CHECK(!is_bad(Status::skipped));
  CHECK(!is_bad(Status::pass));
  CHECK_THROWS_AS(parse_status("passed"), InputError);
  CHECK_THROWS_WITH(parse_status("Pass"), Catch::Contains("unknown status \"Pass\"") && Catch::Contains("crashed"));
}

TEST_CASE("row: the JSON of a timed row round-trips in the results file's key order", "[unit]") {
  const Row r = timed_row();
  const Json j = r;
  CHECK(keys_of(j) == std::vector<std::string>{"case_id",  "label",       "headline",     "catalog_id", "method",
                                               "family",   "phase",       "spec_version", "backend",    "variant",
                                               "device",   "dtype",       "seed",         "params",     "status",
                                               "reason",   "hashes",      "work",         "checked_rows", "telemetry",
                                               "checks",   "deterministic", "memory",     "quality",    "seconds",
                                               "timing",   "throughput",  "case_index",   "related_rank", "related",
                                               "related_of"});
  CHECK(j["dtype"] == "f16");
  CHECK(j["status"] == "pass");
  CHECK(j["work"]["bound"] == "read");
  CHECK(j["checked_rows"] == 12);
  CHECK(keys_of(j["checks"]["O"]) == std::vector<std::string>{"class", "pass", "max_abs", "gate", "compared"});
  CHECK(keys_of(j["checks"]["idx"]) == std::vector<std::string>{"class", "pass", "message", "n_tie_swaps"});
  CHECK(keys_of(j["seconds"]) ==
        std::vector<std::string>{"inputs", "reference", "reference_cached", "run", "check", "timing", "quality"});
  CHECK(keys_of(j["timing"]) == std::vector<std::string>{"mode", "how", "batch", "repetitions", "min_time_s", "median_s", "cv",
                                                         "noisy", "telemetry"});
  CHECK(j["timing"]["telemetry"].size() == 2);
  CHECK(j["related"] == Json{{"baseline", "mha/decode/x/f16/s7"}});
  CHECK(j["related_of"] == Json::array({{{"case_id", "snapkv/decode/y/f16/s7"}, {"role", "decode_full"}}}));

  const Row back = j.get<Row>();
  CHECK(Json(back).dump() == j.dump());
  CHECK(back.name() == "gqa/decode/batch=1,kv_len=64/f16/s7/cpu/blocked");
  CHECK(back.timing->telemetry == r.timing->telemetry);
  CHECK(back.checks->at(1).message == "idx: 3 not in the reference set");
  CHECK(back.checks->at(0).metrics == Json{{"max_abs", 1e-3}, {"gate", 4e-3}, {"compared", 512}});
  CHECK(back.seconds->quality == 0.001);
  CHECK(back.related_of == r.related_of);
}

TEST_CASE("row: a row that never ran an impl writes only its identity and status", "[unit]") {
  Row r = timed_row();
  r = Row{r.case_id, r.label, r.headline, r.catalog_id, r.method, r.family, r.phase, r.spec_version, r.backend, "-", "",
          r.dtype, r.seed, r.params, Status::skipped, "not on this backend"};
  const Json j = r;
  CHECK(keys_of(j) == std::vector<std::string>{"case_id", "label", "headline", "catalog_id", "method", "family", "phase",
                                               "spec_version", "backend", "variant", "device", "dtype", "seed", "params",
                                               "status", "reason"});
  CHECK(Json(j.get<Row>()).dump() == j.dump());
  CHECK(row_reference(r) == Json{{"case_id", r.case_id}, {"backend", "cpu"}, {"variant", "-"}, {"status", "skipped"}});
}

TEST_CASE("row: an untimed median (NaN) and an error row round-trip", "[unit]") {
  Row r = timed_row();
  r.timing->median_s = std::nan("");
  r.throughput->flops_per_s = std::nan("");
  r.hashes->outputs.clear();
  r.device_lost = true;
  r.status = Status::error;
  r.reason = "cuda: an illegal memory access";
  const Json j = Json::parse(Json(r).dump());
  CHECK(j["timing"]["median_s"].is_null());  // how a NaN is written
  CHECK(!j["hashes"].contains("outputs"));
  CHECK(j["device_lost"] == true);
  const Row back = j.get<Row>();
  CHECK(std::isnan(back.timing->median_s));
  CHECK(back.device_lost);
  CHECK(back.status == Status::error);
  CHECK(Json(back).dump() == j.dump());
}

TEST_CASE("row: readers tolerate unknown fields and reject what they cannot understand", "[unit]") {
  const Json good = timed_row();
  Json future = good;
  future["energy_j"] = 1.5;                          // a key a newer build writes
  future["timing"]["p99_s"] = 2e-5;
  future["checks"]["O"]["ulp"] = 3;                  // a metric joins the others
  future["memory"]["input_bytes"] = Json(int64_t{100});  // a signed count from another writer
  const Row r = future.get<Row>();
  CHECK(r.status == Status::pass);
  CHECK(r.timing->median_s == 1.25e-5);
  CHECK(r.checks->at(0).metrics["ulp"] == 3);
  Json expect = good;
  expect["checks"]["O"]["ulp"] = 3;
  CHECK(Json(r).dump() == expect.dump());

  const auto rejects = [&](const char* what, Json j, const std::string& message) {
    INFO(what);
    CHECK_THROWS_AS(j.get<Row>(), InputError);
    CHECK_THROWS_WITH(j.get<Row>(), Catch::Contains(message));
  };
  Json bad = good;
  bad["status"] = "exploded";
  rejects("unknown status", bad, "gqa/decode/batch=1,kv_len=64/f16/s7/cpu/blocked: `status` unknown status \"exploded\"");
  bad = good;
  bad["seed"] = "seven";
  rejects("seed of the wrong type", bad, "`seed` is \"seven\", not a non-negative integer");
  bad = good;
  bad["memory"]["peak_bytes"] = -1;
  rejects("negative count", bad, "`memory.peak_bytes` is -1, not a non-negative integer");
  bad = good;
  bad["timing"]["median_s"] = "fast";
  rejects("nested field of the wrong type", bad, "`timing.median_s` is string, not a number");
  bad = good;
  bad["checks"]["O"]["class"] = "ROUGH";
  rejects("unknown check class", bad, "`checks.O.class` \"ROUGH\" is not TOL");
  bad = good;
  bad["work"]["bound"] = "latency";
  rejects("unknown bound", bad, "`work.bound`");
  bad = good;
  bad["dtype"] = "f8";
  rejects("unknown dtype", bad, "unknown dtype \"f8\"");
  bad = good;
  bad.erase("case_id");
  rejects("no case id", bad, "`case_id` is missing");
  rejects("not an object", Json::array(), "not an object");
}

TEST_CASE("row: every record of the committed results files reads and writes back unchanged", "[unit]") {
  int records = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_path("results"))) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream f(entry.path());
    const Json doc = Json::parse(f);
    for (const Json& row : doc.at("benchmarks")) {
      if (!row.contains("attnbench") || !row["attnbench"].contains("method")) continue;  // a short reference
      const Json& a = row["attnbench"];
      INFO(entry.path().filename().string() << " " << row.value("name", ""));
      const Row r = a.get<Row>();
      CHECK(Json(r).dump() == a.dump());
      CHECK(row_reference(r).dump() ==
            Json{{"case_id", a["case_id"]}, {"backend", a["backend"]}, {"variant", a["variant"]}, {"status", a["status"]}}.dump());
      ++records;
    }
  }
  CHECK(records > 100);
}

TEST_CASE("a results file from before the ceilings table reads its memory-bound rows as read-bound", "[unit]") {
  Json j = Json(timed_row());
  j["work"]["bound"] = "memory";
  Row r;
  from_json(j, r);
  CHECK(r.work->bound == Bound::read);
  j["work"]["bound"] = "copy";
  from_json(j, r);
  CHECK(r.work->bound == Bound::copy);
  j["work"]["bound"] = "disk";
  CHECK_THROWS_WITH(from_json(j, r), Catch::Contains("is not compute, read or copy"));
}
