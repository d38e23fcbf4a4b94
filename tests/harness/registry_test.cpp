// Nothing registered may be dropped by the linker (docs/design.md "Layout"): the registry of the test binary
// and of the attnbench executable hold exactly the methods, backends and impls whose registration
// lines are in the source tree (plus tests/fault in the test binary). Run in the release build,
// where --as-needed would drop a registrar-only library.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "attnbench/json.h"
#include "attnbench/registry.h"
#include "support.h"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

using Counts = std::map<std::string, int>;  // file (relative to the source tree) -> registrations

std::string relative(const std::string& path) { return fs::relative(fs::path(path), test::source_path("")).string(); }

// Registration lines in the source tree under `dir` (macro definitions in headers excluded).
Counts declared(const std::string& dir, const std::string& macro, const std::vector<std::string>& backends) {
  Counts c;
  const std::regex line("^\\s*" + macro + "\\(");
  if (!fs::exists(test::source_path(dir))) return c;
  for (const auto& f : fs::recursive_directory_iterator(test::source_path(dir))) {
    const std::string ext = f.path().extension().string();
    if (ext != ".cpp" && ext != ".cu") continue;
    const std::string rel = relative(f.path().string());
    if (rel.rfind("impls/", 0) == 0) {
      const std::string backend = rel.substr(6, rel.find('/', 6) - 6);
      if (std::find(backends.begin(), backends.end(), backend) == backends.end()) continue;  // not compiled in
    }
    std::ifstream in(f.path());
    std::string text;
    while (std::getline(in, text))
      if (std::regex_search(text, line)) c[rel]++;
  }
  return c;
}

std::vector<std::string> compiled_backends() {
  std::vector<std::string> out;
  for (const auto& b : registry().backends()) out.push_back(b.name);
  return out;
}

}  // namespace

TEST_CASE("the test binary's registry holds exactly what the source tree registers", "[unit]") {
  const auto backends = compiled_backends();
  Counts methods, impls, backend_files;
  for (const Method* m : registry().methods()) methods[relative(registry().method_source(m->info().name))]++;
  for (const auto& e : registry().all_impls()) impls[relative(e.source_file)]++;
  for (const auto& b : registry().backends()) backend_files[relative(b.source_file)]++;

  Counts want_methods = declared("reference", "ATTNBENCH_METHOD", backends);
  for (const auto& [f, n] : declared("tests/fault", "ATTNBENCH_METHOD", backends)) want_methods[f] += n;
  Counts want_impls = declared("impls", "ATTNBENCH_IMPL", backends);
  for (const auto& [f, n] : declared("tests/fault", "ATTNBENCH_IMPL", backends)) want_impls[f] += n;
  CHECK(methods == want_methods);
  CHECK(impls == want_impls);
  CHECK(backend_files == declared("impls", "ATTNBENCH_BACKEND", backends));
  CHECK(methods.size() >= 3);
}

TEST_CASE("the attnbench executable's registry holds exactly what the source tree registers", "[unit]") {
  const std::string cmd = test::binary_path("attnbench") + " list --json";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  REQUIRE(pclose(p) == 0);
  const Json j = Json::parse(text);
  std::vector<std::string> backends;
  for (const auto& b : j["backends"]) backends.push_back(b["name"]);
  CHECK(backends == compiled_backends());
  Counts methods, impls;
  for (const auto& m : j["methods"]) methods[relative(m["source"])]++;
  for (const auto& e : j["impls"]) impls[relative(e["source"])]++;
  CHECK(methods == declared("reference", "ATTNBENCH_METHOD", backends));
  CHECK(impls == declared("impls", "ATTNBENCH_IMPL", backends));
}
