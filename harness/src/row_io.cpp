#include "attnbench/row_io.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>

#include "attnbench/error.h"

namespace attnbench {

Json row_to_json(const RowResult& row) {
  Json j = {{"record", row.record}};
  if (row.timing) {
    const TimingResult& t = *row.timing;
    Json aggs = Json::array();
    for (const auto& a : t.aggregates)
      aggs.push_back({{"name", a.name}, {"percentage", a.percentage}, {"value", a.value}, {"cpu_value", a.cpu_value}});
    j["timing"] = {{"mode", t.mode}, {"how", t.how}, {"telemetry", t.telemetry}, {"batch", t.batch}, {"seconds", t.seconds}, {"cpu_seconds", t.cpu_seconds},
                   {"launches", t.launches}, {"aggregates", aggs}};
  }
  return j;
}

RowResult row_from_json(const Json& j) {
  if (!j.is_object() || !j.contains("record")) throw InputError("a row line without its record");
  RowResult row;
  row.record = j["record"].get<Row>();
  if (j.contains("timing")) {
    const Json& t = j["timing"];
    TimingResult r;
    r.mode = t.value("mode", "hot");
    r.how = t.value("how", "");
    r.telemetry = t.value("telemetry", Json::array());
    r.batch = t.at("batch").get<int64_t>();
    r.seconds = t.at("seconds").get<std::vector<double>>();
    r.cpu_seconds = t.at("cpu_seconds").get<std::vector<double>>();
    r.launches = t.at("launches").get<std::vector<int64_t>>();
    for (const auto& a : t.at("aggregates"))
      r.aggregates.push_back({a.at("name").get<std::string>(), a.at("percentage").get<bool>(), a.at("value").get<double>(),
                              a.at("cpu_value").get<double>()});
    row.timing = std::move(r);
  }
  return row;
}

namespace {

// Counts and names of the limits JSON, read with errors that say which field is wrong.
[[noreturn]] void bad_limit(const std::string& field, const std::string& what) {
  throw InputError(cat("device limits: `", field, "` ", what));
}

uint64_t limit_count(const Json& l, const char* key, bool required) {
  auto it = l.find(key);
  if (it == l.end()) {
    if (required) bad_limit(key, "is missing");
    return 0;
  }
  if (it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0)) return it->get<uint64_t>();
  bad_limit(key, cat("is ", it->dump(), ", not a non-negative integer"));
}

uint32_t count_text(const std::string& field, const std::string& text) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end || v > UINT32_MAX) bad_limit(field, cat("\"", text, "\" is not a count"));
  return static_cast<uint32_t>(v);
}

// "16x8x16,16x16x16" (the features string of results files before the shapes had a field).
std::vector<MatrixShape> shapes_text(const std::string& field, const std::string& text) {
  std::vector<MatrixShape> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string one = text.substr(start, comma - start);
    const size_t x1 = one.find('x'), x2 = one.find('x', x1 == std::string::npos ? x1 : x1 + 1);
    if (x1 == std::string::npos || x2 == std::string::npos) bad_limit(field, cat("\"", one, "\" is not MxNxK"));
    out.push_back({count_text(field, one.substr(0, x1)), count_text(field, one.substr(x1 + 1, x2 - x1 - 1)),
                   count_text(field, one.substr(x2 + 1))});
    start = comma + 1;
  }
  return out;
}

template <typename Parse>
auto named(const std::string& field, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const InputError& e) {
    bad_limit(field, e.what());
  }
}

}  // namespace

Json limits_to_json(const DeviceLimits& l) {
  Json j = {{"max_buffer_bytes", l.max_buffer_bytes}, {"max_binding_bytes", l.max_binding_bytes},
            {"shared_mem_bytes", l.shared_mem_bytes}, {"subgroup_size", l.subgroup_size},
            {"compute_units", l.compute_units},      {"memory_bytes", l.memory_bytes}};
  // The typed limits a backend fills; the others stay out, as not applicable.
  if (l.min_subgroup_size) j["min_subgroup_size"] = l.min_subgroup_size;
  if (l.max_subgroup_size) j["max_subgroup_size"] = l.max_subgroup_size;
  if (l.max_workgroup_size) j["max_workgroup_size"] = l.max_workgroup_size;
  if (l.device_type != DeviceType::unknown) j["device_type"] = device_type_name(l.device_type);
  if (!l.coopmat_f16_shapes.empty()) {
    Json shapes = Json::array();
    for (const MatrixShape& m : l.coopmat_f16_shapes) shapes.push_back({m.m, m.n, m.k});
    j["coopmat_f16_shapes"] = shapes;
  }
  if (l.compute_capability != ComputeCapability{})
    j["compute_capability"] = {{"major", l.compute_capability.major}, {"minor", l.compute_capability.minor}};
  if (l.isa != CpuIsa::none) j["isa"] = cpu_isa_name(l.isa);
  if (l.forced_splits) j["forced_splits"] = l.forced_splits;
  if (l.max_loop_iterations) j["max_loop_iterations"] = l.max_loop_iterations;
  Json features = Json::object();
  for (const auto& [name, on] : l.features) features[name] = on ? "yes" : "no";
  j["features"] = features;
  return j;
}

DeviceLimits limits_from_json(const Json& j) {
  if (!j.is_object()) bad_limit("limits", cat("is ", j.type_name(), ", not an object"));
  DeviceLimits l;
  l.max_buffer_bytes = limit_count(j, "max_buffer_bytes", true);
  l.max_binding_bytes = limit_count(j, "max_binding_bytes", true);
  l.shared_mem_bytes = limit_count(j, "shared_mem_bytes", true);
  const auto u32 = [&](const char* key, bool required) {
    const uint64_t v = limit_count(j, key, required);
    if (v > UINT32_MAX) bad_limit(key, cat(v, " is out of range"));
    return static_cast<uint32_t>(v);
  };
  l.subgroup_size = u32("subgroup_size", true);
  l.compute_units = u32("compute_units", true);
  l.memory_bytes = limit_count(j, "memory_bytes", false);  // older `attnbench env` output lacks it
  l.min_subgroup_size = u32("min_subgroup_size", false);
  l.max_subgroup_size = u32("max_subgroup_size", false);
  l.max_workgroup_size = u32("max_workgroup_size", false);
  l.forced_splits = u32("forced_splits", false);
  l.max_loop_iterations = u32("max_loop_iterations", false);
  const auto text = [&](const char* key) {
    const Json& v = j[key];
    if (!v.is_string()) bad_limit(key, cat("is ", v.type_name(), ", not a string"));
    return v.get<std::string>();
  };
  if (j.contains("device_type")) l.device_type = named("device_type", text("device_type"), parse_device_type);
  if (j.contains("isa")) l.isa = named("isa", text("isa"), parse_cpu_isa);
  if (j.contains("coopmat_f16_shapes")) {
    const Json& shapes = j["coopmat_f16_shapes"];
    const auto shape_ok = [](const Json& m) {
      return m.is_array() && m.size() == 3 && m[0].is_number_unsigned() && m[1].is_number_unsigned() &&
             m[2].is_number_unsigned();
    };
    if (!shapes.is_array() || !std::all_of(shapes.begin(), shapes.end(), shape_ok))
      bad_limit("coopmat_f16_shapes", cat("is ", shapes.dump(), ", not a list of [M, N, K]"));
    for (const Json& m : shapes)
      l.coopmat_f16_shapes.push_back({m[0].get<uint32_t>(), m[1].get<uint32_t>(), m[2].get<uint32_t>()});
  }
  if (j.contains("compute_capability")) {
    const Json& cc = j["compute_capability"];
    if (!cc.is_object() || !cc.contains("major") || !cc["major"].is_number_integer() || !cc.contains("minor") ||
        !cc["minor"].is_number_integer())
      bad_limit("compute_capability", cat("is ", cc.dump(), ", not {major, minor}"));
    l.compute_capability = {cc["major"].get<int>(), cc["minor"].get<int>()};
  }
  // Flags are "yes"/"no". Results files written before the typed members carried those limits here
  // as text; they are read into their members (unless the member's own key was there).
  const Json& features = j.contains("features") ? j["features"] : Json::object();
  if (!features.is_object()) bad_limit("features", cat("is ", features.type_name(), ", not an object"));
  for (const auto& [name, v] : features.items()) {
    const std::string field = "features." + name;
    if (v.is_boolean()) {
      l.features[name] = v.get<bool>();
      continue;
    }
    if (!v.is_string()) bad_limit(field, cat("is ", v.type_name(), ", not yes or no"));
    const std::string s = v.get<std::string>();
    if (s == "yes" || s == "no") {
      l.features[name] = s == "yes";
    } else if (j.contains(name) || (name == "coopmat_nv_f16_shapes" && j.contains("coopmat_f16_shapes"))) {
      continue;  // the typed key wins
    } else if (name == "min_subgroup_size") {
      l.min_subgroup_size = count_text(field, s);
    } else if (name == "max_subgroup_size") {
      l.max_subgroup_size = count_text(field, s);
    } else if (name == "max_workgroup_size") {
      l.max_workgroup_size = count_text(field, s);
    } else if (name == "forced_splits") {
      l.forced_splits = count_text(field, s);
    } else if (name == "device_type") {
      l.device_type = named(field, s, parse_device_type);
    } else if (name == "isa") {
      l.isa = named(field, s, parse_cpu_isa);
    } else if (name == "coopmat_nv_f16_shapes") {
      l.coopmat_f16_shapes = shapes_text(field, s);
    } else if (name == "compute_capability") {
      const size_t dot = s.find('.');
      if (dot == std::string::npos) bad_limit(field, cat("\"", s, "\" is not <major>.<minor>"));
      l.compute_capability = {static_cast<int>(count_text(field, s.substr(0, dot))),
                              static_cast<int>(count_text(field, s.substr(dot + 1)))};
    } else {
      bad_limit(field, cat("is \"", s, "\", not yes or no"));
    }
  }
  return l;
}

Json probe_to_json(const Probe& p) {
  Json j = Json::object();
  j["available"] = p.available;
  if (!p.available) j["reason"] = p.reason;
  j["device"] = p.device.name;
  j["details"] = p.device.details;
  j["limits"] = limits_to_json(p.limits);
  return j;
}

Probe probe_from_json(const Json& j) {
  if (!j.is_object() || !j.contains("available") || !j["available"].is_boolean() || !j.contains("limits"))
    throw InputError("a probe without `available` and `limits`");
  Probe p;
  p.available = j["available"].get<bool>();
  p.reason = j.value("reason", "");
  p.device.name = j.value("device", "");
  p.device.details = j.value("details", Json::object());
  p.limits = limits_from_json(j["limits"]);
  return p;
}

// {"read_bytes_per_s": 2.6e10, ..., "how": {"read_bytes_per_s": "...", ...}, "probe": "..."}: the rates
// flat, so a script reads peaks["read_bytes_per_s"].
Json peaks_to_json(const Peaks& p) {
  Json j = Json::object(), how = Json::object();
  for (const Ceiling& c : p.ceilings) {
    j[c.name] = c.per_s;
    how[c.name] = c.how;
  }
  j["how"] = how;
  j["probe"] = p.how;
  return j;
}

Peaks peaks_from_json(const Json& j) {
  Peaks p;
  const Json how = j.contains("how") && j["how"].is_object() ? j["how"] : Json::object();
  for (const auto& [name, v] : j.items()) {
    if (!v.is_number()) continue;
    // Files written before the table named the fp32 FMA rate flops_per_s.
    const std::string key = name == "flops_per_s" ? ceilings::fp32 : name;
    p.add(key, v.get<double>(), how.value(name, std::string()));
  }
  p.how = j.contains("how") && j["how"].is_string() ? j["how"].get<std::string>() : j.value("probe", std::string());
  return p;
}

}  // namespace attnbench
