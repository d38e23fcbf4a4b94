// The JSON lines of row_io.h: a RowResult survives the worker line and the journal with its timing
// samples, and a probe's typed limits survive the context (and are read from older files, which
// kept them as text among the feature flags).
#include <catch2/catch.hpp>

#include <fstream>

#include "attnbench/error.h"
#include "attnbench/row_io.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("row_io: a timed row survives its JSON line, samples included", "[unit]") {
  RowResult r;
  r.record.case_id = "toy/x=1/f32/s1";
  r.record.method = "toy";
  r.record.backend = "cpu";
  r.record.variant = "v";
  r.record.status = Status::pass;
  r.record.device_lost = false;
  r.record.timing = RowTiming{"hot", "4 back-to-back launches per sample", 4, 3, 0.01, 2e-6, 0.1, true, Json::array()};
  TimingResult t;
  t.mode = "hot";
  t.how = "4 back-to-back launches per sample";
  t.batch = 4;
  t.seconds = {2.1e-6, 1.9e-6, 2e-6};
  t.cpu_seconds = {2.2e-6, 2e-6, 2.1e-6};
  t.launches = {4000, 4400, 4200};
  t.aggregates = {{"median", false, 2e-6, 2.1e-6}, {"cv", true, 0.1, 0.05}};
  t.telemetry = Json::array({{{"clock_mhz", 1500}}, {{"clock_mhz", 1400}}, {{"clock_mhz", 1450}}});
  r.timing = t;

  const RowResult back = row_from_json(Json::parse(row_to_json(r).dump()));
  CHECK(Json(back.record).dump() == Json(r.record).dump());
  REQUIRE(back.timing);
  CHECK(back.timing->mode == "hot");
  CHECK(back.timing->how == t.how);
  CHECK(back.timing->batch == 4);
  CHECK(back.timing->seconds == t.seconds);
  CHECK(back.timing->cpu_seconds == t.cpu_seconds);
  CHECK(back.timing->launches == t.launches);
  REQUIRE(back.timing->aggregates.size() == 2);
  CHECK(back.timing->aggregates[1].name == "cv");
  CHECK(back.timing->aggregates[1].percentage);
  CHECK(back.timing->aggregates[1].cpu_value == 0.05);
  CHECK(back.timing->median_s() == 2e-6);
  CHECK(back.timing->telemetry == t.telemetry);
  CHECK(back.name() == "toy/x=1/f32/s1/cpu/v");

  // An untimed row has no samples; a line without its record is refused.
  r.timing.reset();
  CHECK_FALSE(row_from_json(row_to_json(r)).timing);
  CHECK_THROWS_AS(row_from_json(Json{{"name", "x"}}), InputError);
}

TEST_CASE("row_io: typed device limits round-trip; features hold only yes/no flags", "[unit]") {
  Probe p;
  p.available = true;
  p.device.name = "Some GPU";
  p.device.details = {{"driver", "1.2"}};
  DeviceLimits& l = p.limits;
  l.max_buffer_bytes = 1ull << 33;
  l.max_binding_bytes = 0xffffffffull;
  l.shared_mem_bytes = 49152;
  l.subgroup_size = 32;
  l.compute_units = 132;
  l.memory_bytes = 1ull << 37;
  l.min_subgroup_size = 16;
  l.max_subgroup_size = 64;
  l.max_workgroup_size = 1024;
  l.device_type = DeviceType::discrete;
  l.coopmat_f16_shapes = {{16, 8, 16}, {16, 16, 16}};
  l.compute_capability = {9, 0};
  l.isa = CpuIsa::avx512;
  l.forced_splits = 3;
  l.features = {{"coopmat_nv", true}, {"storage16", false}};

  const Json j = probe_to_json(p);
  const Json& lj = j["limits"];
  CHECK(lj["min_subgroup_size"] == 16);
  CHECK(lj["device_type"] == "discrete");
  CHECK(lj["coopmat_f16_shapes"] == Json::array({{16, 8, 16}, {16, 16, 16}}));
  CHECK(lj["compute_capability"] == Json{{"major", 9}, {"minor", 0}});
  CHECK(lj["isa"] == "avx512");
  CHECK(lj["forced_splits"] == 3);
  CHECK(lj["features"] == Json{{"coopmat_nv", "yes"}, {"storage16", "no"}});

  const Probe q = probe_from_json(Json::parse(j.dump()));
  CHECK(q.available);
  CHECK(q.device.name == "Some GPU");
  const DeviceLimits& m = q.limits;
  CHECK(m.max_buffer_bytes == l.max_buffer_bytes);
  CHECK(m.memory_bytes == l.memory_bytes);
  CHECK(m.min_subgroup_size == 16);
  CHECK(m.max_subgroup_size == 64);
  CHECK(m.max_workgroup_size == 1024);
  CHECK(m.device_type == DeviceType::discrete);
  CHECK(m.coopmat_f16_shapes == l.coopmat_f16_shapes);
  CHECK(m.compute_capability == ComputeCapability{9, 0});
  CHECK(m.isa == CpuIsa::avx512);
  CHECK(m.forced_splits == 3);
  CHECK(m.features == l.features);
  CHECK(m.has("coopmat_nv"));
  CHECK_FALSE(m.has("storage16"));
  CHECK_FALSE(m.has("sm_90a"));

  // A backend that fills none of the typed limits writes none of their keys.
  const Json bare = limits_to_json(DeviceLimits{});
  for (const char* k : {"min_subgroup_size", "max_workgroup_size", "device_type", "coopmat_f16_shapes",
                        "compute_capability", "isa", "forced_splits"})
    CHECK_FALSE(bare.contains(k));
  CHECK(limits_from_json(bare).device_type == DeviceType::unknown);
}

TEST_CASE("row_io: older results files' limits, text among the flags, read into the typed members", "[unit]") {
  // The limits of lavapipe and of the CPU as results files recorded them before the typed members
  // (the committed ones of 2026-11-30): min/max subgroup size, device type, splits, shapes and isa
  // as text among the feature flags.
  const DeviceLimits vk = limits_from_json(Json::parse(R"({"max_buffer_bytes": 2147481600,
      "max_binding_bytes": 134217728, "shared_mem_bytes": 32768, "subgroup_size": 8, "compute_units": 2,
      "memory_bytes": 2147483648, "features": {"coopmat_nv": "no", "coopmat_nv_f16_shapes": "", "device_type": "cpu",
      "f16": "yes", "forced_splits": "0", "max_subgroup_size": "8", "max_workgroup_size": "1024",
      "min_subgroup_size": "8", "storage16": "yes"}})"));
  CHECK(vk.min_subgroup_size == 8);
  CHECK(vk.max_subgroup_size == 8);
  CHECK(vk.max_workgroup_size == 1024);
  CHECK(vk.device_type == DeviceType::cpu);
  CHECK(vk.forced_splits == 0);
  CHECK(vk.coopmat_f16_shapes.empty());
  CHECK(vk.has("storage16"));
  CHECK_FALSE(vk.has("coopmat_nv"));
  for (const char* k : {"min_subgroup_size", "device_type", "forced_splits", "coopmat_nv_f16_shapes"})
    CHECK_FALSE(vk.features.count(k));
  const DeviceLimits cpu = limits_from_json(Json::parse(R"({"max_buffer_bytes": 25276510208, "max_binding_bytes": 0,
      "shared_mem_bytes": 0, "subgroup_size": 0, "compute_units": 2, "memory_bytes": 25276510208,
      "features": {"avx2": "yes", "avx512f": "yes", "fma": "yes", "isa": "avx512"}})"));
  CHECK(cpu.isa == CpuIsa::avx512);
  CHECK(cpu.has("avx512f"));
  CHECK_FALSE(cpu.features.count("isa"));
  // The committed results files, written with the typed members, read the same.
  const auto context = [](const char* file) {
    std::ifstream f(test::source_path(std::string("results/") + file));
    return Json::parse(f)["context"]["backends"];
  };
  CHECK(probe_from_json(context("lavapipe-ci.json")["vulkan"]).limits.min_subgroup_size == 8);
  CHECK(probe_from_json(context("cpu-ci.json")["cpu"]).limits.isa == CpuIsa::avx512);

  // The older text of the other typed limits, and the typed key winning over it.
  Json l = limits_to_json(DeviceLimits{});
  l["features"] = {
      {"coopmat_nv_f16_shapes", "16x8x16,16x16x16"}, {"compute_capability", "9.0"}, {"max_workgroup_size", "512"}};
  l["max_workgroup_size"] = 1024;
  const DeviceLimits old = limits_from_json(l);
  CHECK(old.coopmat_f16_shapes == std::vector<MatrixShape>{{16, 8, 16}, {16, 16, 16}});
  CHECK(old.compute_capability == ComputeCapability{9, 0});
  CHECK(old.max_workgroup_size == 1024);
  CHECK(old.features.empty());
}

TEST_CASE("row_io: limits a reader cannot understand are input errors naming the field", "[unit]") {
  const Json good = limits_to_json(DeviceLimits{});
  const auto rejects = [&](Json l, const std::string& message) {
    CHECK_THROWS_AS(limits_from_json(l), InputError);
    CHECK_THROWS_WITH(limits_from_json(l), Catch::Contains(message));
  };
  Json l = good;
  l["features"] = {{"f16", "maybe"}};
  rejects(l, "`features.f16` is \"maybe\", not yes or no");
  l = good;
  l["device_type"] = "quantum";
  rejects(l, "unknown device type \"quantum\"");
  l = good;
  l["features"] = {{"min_subgroup_size", "eight"}};
  rejects(l, "`features.min_subgroup_size` \"eight\" is not a count");
  l = good;
  l["coopmat_f16_shapes"] = Json::array({"16x8x16"});
  rejects(l, "not a list of [M, N, K]");
  l = good;
  l.erase("compute_units");
  rejects(l, "`compute_units` is missing");
  CHECK_THROWS_AS(probe_from_json(Json{{"device", "x"}}), InputError);
}
