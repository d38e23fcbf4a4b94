#include "support.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "attnbench/json.h"
#include "attnbench/registry.h"
#include "attnbench/runner.h"

extern char** environ;

namespace attnbench::test {

std::string source_path(const std::string& relative) { return std::string(ATTNBENCH_SOURCE_DIR) + "/" + relative; }
std::string binary_path(const std::string& relative) { return std::string(ATTNBENCH_BINARY_DIR) + "/" + relative; }

Backend& require_backend(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Backend>> open;
  auto it = open.find(name);
  if (it == open.end()) {
    const BackendEntry* e = registry().find_backend(name);
    if (!e) {
      std::fprintf(stderr, "skip: backend %s is not compiled in\n", name.c_str());
      std::exit(77);
    }
    auto b = e->make();
    const Probe p = b->probe();
    if (!p.available) {
      std::fprintf(stderr, "skip: backend %s is unavailable: %s\n", name.c_str(), p.reason.c_str());
      std::exit(77);
    }
    it = open.emplace(name, std::move(b)).first;
  }
  return *it->second;
}

CliResult run_cli(const std::string& args, const std::string& executable) {
  return run_shell(binary_path(executable) + " " + args);
}

CliResult run_shell(const std::string& command) {
  const std::string cmd = "cd " + source_path("") + " && " + command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

BackgroundRun::BackgroundRun(const std::string& args, const std::string& executable, const std::string& env) {
  static int serial = 0;
  log_ = binary_path("test-scratch/background-" + std::to_string(getpid()) + "-" + std::to_string(serial++) + ".log");
  std::filesystem::create_directories(std::filesystem::path(log_).parent_path());
  const std::string cmd = "cd " + source_path("") + " && " + env + " exec " + binary_path(executable) + " " + args + " >" + log_ + " 2>&1";
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  if (posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) pid_ = -1;
  REQUIRE(pid_ > 0);
}

BackgroundRun::~BackgroundRun() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void BackgroundRun::signal(int sig) const {
  if (!reaped_) ::kill(pid_, sig);
}

int BackgroundRun::wait(double timeout_s) {
  if (reaped_) return code_;
  wait_until([&] {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    reaped_ = true;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }, timeout_s);
  return reaped_ ? code_ : -1;
}

std::string BackgroundRun::output() const {
  std::ifstream f(log_);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::vector<int> BackgroundRun::children() const {
  std::vector<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state;
    int ppid;
    if (rest >> state >> ppid && ppid == pid_ && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::multiset<std::string> row_signatures(const std::string& results_path) {
  const Json doc = Json::parse(read_text(results_path));
  std::multiset<std::string> out;
  for (const auto& row : doc["benchmarks"]) {
    const Json& a = row["attnbench"];
    if (!a.contains("params")) continue;
    const Json h = a.value("hashes", Json::object());
    out.insert(row["name"].get<std::string>() + " " + a["status"].get<std::string>() + " " + h.value("inputs", "") + " " +
               h.value("reference", "") + " " + h.value("outputs", ""));
  }
  return out;
}

int journal_cases_done(const std::string& journal_path) {
  const std::string text = read_text(journal_path);
  int n = 0;
  for (size_t at = text.find("\"case_done\""); at != std::string::npos; at = text.find("\"case_done\"", at + 1)) ++n;
  return n;
}

bool wait_until(const std::function<bool()>& done, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool process_gone(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  if (!f) return true;
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z';
}

std::string scratch_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(binary_path("test-scratch")) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

Case case_from_id(const std::string& id) { return parse_case_id(id); }

TensorMap reference_as_outputs(const Case& c, const Reference& ref) {
  TensorMap out;
  for (const OutputDecl& d : c.method->outputs(c)) {
    if (d.check_only) continue;
    const HostTensor& r = ref.tensors.at(d.name);
    HostTensor t(d.name, d.dtype, d.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.get(i));
    out.emplace(d.name, std::move(t));
  }
  return out;
}

Case method_case(const std::string& method, const std::string& params, const std::string& dtype, uint64_t seed) {
  return case_from_id(method + "/" + params + "/" + dtype + "/s" + std::to_string(seed));
}

std::vector<int64_t> kept_tokens(const TensorMap& t, int64_t row) {
  const HostTensor& idx = t.at("kept_idx");
  const int64_t capacity = idx.shape().back(), n = static_cast<int64_t>(t.at("kept_len").get(row));
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int64_t>(idx.get(row * capacity + i)));
  for (int64_t i = n; i < capacity; ++i) CHECK(idx.get(row * capacity + i) == -1);
  return out;
}

void check_replaced_set_fails(const Case& c, const TensorMap& in, const Reference& ref, TensorMap& got, int64_t row,
                              const std::vector<int64_t>& set) {
  HostTensor& idx = got.at("kept_idx");
  const int64_t capacity = idx.shape().back();
  for (size_t i = 0; i < set.size(); ++i) idx.set(row * capacity + static_cast<int64_t>(i), static_cast<double>(set[i]));
  const CheckReport report = c.method->check(c, in, ref, got);
  CHECK_FALSE(report.pass());
  CHECK_THAT(report.first_failure(), Catch::StartsWith("kept_idx:"));
  bool o_failed = false;
  for (const auto& o : report.outputs)
    if (o.output == "O") o_failed = !o.pass;
  CHECK(o_failed);
}

std::unique_ptr<Backend> open_backend(const std::string& name, const std::vector<std::pair<std::string, std::string>>& options) {
  const BackendEntry* e = registry().find_backend(name);
  if (!e) {
    std::fprintf(stderr, "skip: backend %s is not compiled in\n", name.c_str());
    std::exit(77);
  }
  auto b = e->make();
  for (const auto& [k, v] : options) b->set_option(k, v);
  if (!b->probe().available) {
    std::fprintf(stderr, "skip: backend %s is unavailable\n", name.c_str());
    std::exit(77);
  }
  return b;
}

std::vector<std::string> rows_not_passing(const std::vector<std::string>& case_ids, Backend& backend,
                                          const std::string& label) {
  std::vector<std::string> bad;
  for (const auto& id : case_ids) {
    const auto rows = check_case(case_from_id(id), backend);
    if (rows.empty()) bad.push_back(id + label + ": no impl ran");
    for (const auto& r : rows)
      if (r.record.status != Status::pass) bad.push_back(id + label + ": " + status_and_reason(r));
  }
  return bad;
}

std::vector<std::string> cpu_rows_not_passing(const std::vector<std::string>& case_ids) {
  std::vector<std::string> bad;
  // The best ISA (with AMX tiles where usable), the same without the tiles, and the x86-64-v3 baseline.
  const std::vector<std::vector<std::pair<std::string, std::string>>> configs = {
      {}, {{"amx", "off"}}, {{"isa", "avx2"}}};
  for (const auto& opts : configs) {
    auto backend = open_backend("cpu", opts);
    if (!opts.empty() && opts[0].first == "amx" && !open_backend("cpu", {})->probe().device.details.value("amx_bf16", false))
      continue;  // no tiles here: the first pass already ran without them
    std::string label = " isa=best";
    for (const auto& [k, v] : opts) label = " " + k + "=" + v;
    for (std::string& b : rows_not_passing(case_ids, *backend, label)) bad.push_back(std::move(b));
  }
  return bad;
}

std::string output_hash(const RowResult& row) { return row.record.hashes.value().outputs; }

std::string status_and_reason(const RowResult& row) {
  return std::string(status_name(row.record.status)) + " " + row.record.reason;
}

std::vector<std::string> rows_differing(const std::vector<std::string>& case_ids, Backend& a, Backend& b) {
  std::vector<std::string> bad;
  for (const std::string& id : case_ids) {
    const Case c = case_from_id(id);
    const std::vector<RowResult> x = check_case(c, a), y = check_case(c, b);
    if (x.size() != 1 || y.size() != 1) {
      bad.push_back(id + ": " + std::to_string(x.size()) + " and " + std::to_string(y.size()) + " rows, not one each");
    } else if (x[0].record.status != Status::pass || y[0].record.status != Status::pass) {
      bad.push_back(id + ": " + status_and_reason(x[0]) + "/ " + status_and_reason(y[0]));
    } else if (output_hash(x[0]) != output_hash(y[0])) {
      bad.push_back(id + ": outputs differ");
    }
  }
  return bad;
}

Row timed_row(const std::string& case_id, const Peaks& peaks, Backend& backend) {
  const Case c = case_from_id(case_id);
  const CaseData data = prepare_case_data(c);
  BackendState state{&backend, backend.probe(), peaks};
  ExecuteOptions opt;
  opt.timing_opts.repetitions = 2;
  opt.timing_opts.min_time_s = 0.002;
  opt.timing_opts.warmup_s = 0.001;
  const auto impls = registry().impls(c.method_name(), backend.name());
  REQUIRE(impls.size() == 1);
  RowResult r = execute_case(data, state, *impls.front(), opt);
  REQUIRE(status_and_reason(r) == "pass ");
  REQUIRE(r.record.throughput.has_value());
  return r.record;
}

std::vector<RowResult> check_case(const Case& c, Backend& backend) {
  const CaseData data = prepare_case_data(c);
  BackendState state{&backend, backend.probe(), std::nullopt};
  ExecuteOptions opt;
  opt.timing = false;
  std::vector<RowResult> rows;
  for (const ImplEntry* e : registry().impls(c.method_name(), backend.name()))
    if (e->make()->supports(c, state.probe.limits).ok) rows.push_back(execute_case(data, state, *e, opt));
  return rows;
}

RowResult check_with_inputs(const Case& c, TensorMap inputs, Backend& backend, const std::string& variant) {
  const ImplEntry* impl = nullptr;
  for (const ImplEntry* e : registry().impls(c.method_name(), backend.name()))
    if (e->variant == variant) impl = e;
  REQUIRE(impl != nullptr);
  // The reference first: an empty Reference in the braces draws GCC's -Wmaybe-uninitialized.
  Reference ref = c.method->reference(c, inputs);
  CaseData data{c, std::move(inputs), std::move(ref), c.method->outputs(c), c.method->work(c), {}, {}};
  data.input_hash = hash_tensors(data.inputs);
  data.reference_hash = hash_tensors(data.ref.tensors);
  BackendState state{&backend, backend.probe(), std::nullopt};
  ExecuteOptions opt;
  opt.timing = false;
  opt.keep_outputs = true;
  return execute_case(data, state, *impl, opt);
}

}  // namespace attnbench::test
