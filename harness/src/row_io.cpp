#include "attnbench/row_io.h"

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

Json probe_to_json(const Probe& p) {
  Json j = Json::object();
  j["available"] = p.available;
  if (!p.available) j["reason"] = p.reason;
  j["device"] = p.device.name;
  j["details"] = p.device.details;
  const DeviceLimits& l = p.limits;
  j["limits"] = {{"max_buffer_bytes", l.max_buffer_bytes}, {"max_binding_bytes", l.max_binding_bytes},
                 {"shared_mem_bytes", l.shared_mem_bytes}, {"subgroup_size", l.subgroup_size},
                 {"compute_units", l.compute_units},      {"memory_bytes", l.memory_bytes},
                 {"features", l.features}};
  return j;
}

Probe probe_from_json(const Json& j) {
  Probe p;
  p.available = j.at("available").get<bool>();
  p.reason = j.value("reason", "");
  p.device.name = j.value("device", "");
  p.device.details = j.value("details", Json::object());
  const Json& l = j.at("limits");
  p.limits.max_buffer_bytes = l.at("max_buffer_bytes");
  p.limits.max_binding_bytes = l.at("max_binding_bytes");
  p.limits.shared_mem_bytes = l.at("shared_mem_bytes");
  p.limits.subgroup_size = l.at("subgroup_size");
  p.limits.compute_units = l.at("compute_units");
  p.limits.memory_bytes = l.at("memory_bytes");
  p.limits.features = l.at("features").get<std::map<std::string, std::string>>();
  return p;
}

Json peaks_to_json(const Peaks& p) {
  return {{"copy_bytes_per_s", p.copy_bytes_per_s}, {"flops_per_s", p.flops_per_s}, {"how", p.how}};
}

Peaks peaks_from_json(const Json& j) {
  return {j.at("copy_bytes_per_s").get<double>(), j.at("flops_per_s").get<double>(), j.value("how", "")};
}

}  // namespace attnbench
