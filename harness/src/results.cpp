#include "attnbench/results.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "attnbench/error.h"
#include "attnbench/files.h"

namespace attnbench {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string os_string() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  std::string pretty;
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      pretty = line.substr(12);
      if (pretty.size() >= 2 && pretty.front() == '"') pretty = pretty.substr(1, pretty.size() - 2);
    }
  return (pretty.empty() ? std::string(u.sysname) : pretty) + " (" + u.sysname + " " + u.release + " " + u.machine + ")";
}

std::string host_cpu() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

Json build_context(const RunContext& rc) {
  const BuildInfo& b = build_info();
  Json c = Json::object();
  // Google Benchmark's own context fields first, so its tools read them.
  c["date"] = utc_now();
  c["host_name"] = host_name();
  c["executable"] = "attnbench";
  c["num_cpus"] = std::thread::hardware_concurrency();
  c["library_build_type"] = b.build_type;
  c["schema_version"] = kSchemaVersion;
  c["attnbench_version"] = b.version;
  c["git_commit"] = b.git_commit;
  c["git_dirty"] = b.git_dirty;
  c["build_type"] = b.build_type;
  c["compiler"] = b.compiler;
  c["cxx_flags"] = b.cxx_flags;
  c["cpu"] = host_cpu();
  c["os"] = os_string();
  c["command_line"] = rc.command_line;
  c["verb"] = rc.verb;
  c["suite"] = {{"name", rc.suite_name}, {"path", rc.suite_path}, {"hash", rc.suite_hash}};
  c["seeds"] = rc.seeds;
  c["backends"] = rc.backends;
  c["timing"] = rc.timing;
  for (const auto& [k, v] : rc.extra.items()) c[k] = v;
  return c;
}

std::vector<Json> result_rows(const RowResult& row) {
  const Row& rec = row.record;
  const std::string name = row.name();
  std::vector<Json> out;
  if (!row.timing) {
    Json r = Json::object();
    r["name"] = name;
    r["run_name"] = name;
    r["run_type"] = "iteration";
    r["repetitions"] = 0;
    r["repetition_index"] = 0;
    r["threads"] = 1;
    r["iterations"] = 0;
    r["real_time"] = 0;
    r["cpu_time"] = 0;
    r["time_unit"] = "us";
    r["error_occurred"] = true;
    r["error_message"] = rec.status == Status::pass ? std::string("not timed (check only)")
                                                    : cat(status_name(rec.status), ": ", rec.reason);
    r["attnbench"] = rec;
    out.push_back(std::move(r));
    return out;
  }
  const TimingResult& t = *row.timing;
  const auto reps = static_cast<int64_t>(t.seconds.size());
  for (int64_t i = 0; i < reps; ++i) {
    Json r = Json::object();
    r["name"] = name;
    r["run_name"] = name;
    r["run_type"] = "iteration";
    r["repetitions"] = reps;
    r["repetition_index"] = i;
    r["threads"] = 1;
    r["iterations"] = t.launches[i];
    r["real_time"] = t.seconds[i] * 1e6;
    r["cpu_time"] = t.cpu_seconds[i] * 1e6;
    r["time_unit"] = "us";
    r["attnbench"] = row_reference(rec);
    out.push_back(std::move(r));
  }
  for (const auto& a : t.aggregates) {
    Json r = Json::object();
    r["name"] = name + "_" + a.name;
    r["run_name"] = name;
    r["run_type"] = "aggregate";
    r["repetitions"] = reps;
    r["threads"] = 1;
    r["aggregate_name"] = a.name;
    r["aggregate_unit"] = a.percentage ? "percentage" : "time";
    r["iterations"] = reps;
    r["real_time"] = a.percentage ? a.value : a.value * 1e6;
    r["cpu_time"] = a.percentage ? a.cpu_value : a.cpu_value * 1e6;
    r["time_unit"] = "us";
    r["attnbench"] = a.name == "median" ? Json(rec) : row_reference(rec);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<Row> full_record(const Json& benchmark_row) {
  auto it = benchmark_row.find("attnbench");
  if (it == benchmark_row.end() || !it->is_object() || !it->contains("method")) return std::nullopt;
  return it->get<Row>();
}

void write_results(const std::string& path, const Json& context, const std::vector<Json>& rows) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  Json doc = Json::object();
  doc["context"] = context;
  doc["benchmarks"] = rows;
  write_file_atomically(path, doc.dump(1) + "\n");
}

}  // namespace attnbench
