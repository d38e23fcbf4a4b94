// The CPU's cache hierarchy comes from sysfs, not from glibc's sysconf, which a hypervisor can
// feed figures of its own; the cold flush reads twice its last level.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "impls/cpu/runtime/cpu_backend.h"
#include "impls/cpu/runtime/cpu_caches.h"
#include "support.h"

using namespace attnbench;
using namespace attnbench::cpu;

namespace {

void cache_dir(const std::filesystem::path& root, int index, int level, const char* type, const char* size) {
  const auto d = root / ("index" + std::to_string(index));
  std::filesystem::create_directories(d);
  std::ofstream(d / "level") << level << "\n";
  std::ofstream(d / "type") << type << "\n";
  std::ofstream(d / "size") << size << "\n";
  std::ofstream(d / "shared_cpu_list") << (level == 3 ? "0-1" : "0") << "\n";
}

}  // namespace

TEST_CASE("cache sizes parse as sysfs writes them", "[unit]") {
  CHECK(parse_cache_size("48K") == 48 * 1024);
  CHECK(parse_cache_size("491520K") == size_t{480} << 20);
  CHECK(parse_cache_size("32M") == size_t{32} << 20);
  CHECK(parse_cache_size("1048576") == 1048576);
  CHECK(parse_cache_size("") == 0);
  CHECK(parse_cache_size("K") == 0);
  CHECK(parse_cache_size("12Q") == 0);
  CHECK(parse_cache_size("99999999999999999999K") == 0);
}

TEST_CASE("the hierarchy is read from sysfs; its last level is the largest data cache", "[unit]") {
  const std::filesystem::path root = test::scratch_dir("sysfs_cache");
  cache_dir(root, 0, 1, "Data", "48K");
  cache_dir(root, 1, 1, "Instruction", "64K");
  cache_dir(root, 2, 2, "Unified", "2048K");
  cache_dir(root, 3, 3, "Unified", "32768K");  // a VM's sysconf said 320 MiB here
  const CacheHierarchy h = read_cache_hierarchy(root.string());
  CHECK(h.source == "sysfs");
  REQUIRE(h.levels.size() == 4);
  CHECK(h.levels[1].type == "Instruction");
  CHECK(h.last_level_bytes() == size_t{32} << 20);
  const Json j = h.to_json();
  CHECK(j["levels"][3]["bytes"] == size_t{32} << 20);
  CHECK(j["levels"][3]["shared_cpus"] == "0-1");

  // An instruction cache is never the level a flush must defeat.
  const std::filesystem::path odd = test::scratch_dir("sysfs_cache_odd");
  cache_dir(odd, 0, 1, "Data", "32K");
  cache_dir(odd, 1, 2, "Instruction", "4096K");
  CHECK(read_cache_hierarchy(odd.string()).last_level_bytes() == 32 * 1024);
}

TEST_CASE("without sysfs the hierarchy falls back to sysconf, and says so", "[unit]") {
  const CacheHierarchy h = read_cache_hierarchy(test::scratch_dir("sysfs_none"));
  CHECK((h.source == "sysconf" || (h.source.empty() && h.levels.empty())));
}

TEST_CASE("the CPU backend's cache is sysfs's last level, and the probe records the hierarchy", "[cpu]") {
  auto be = test::open_backend("cpu", {});
  const CacheHierarchy sysfs = read_cache_hierarchy();
  const Json caches = be->probe().device.details.at("caches");
  CHECK(caches == sysfs.to_json());
  if (sysfs.source == "sysfs") CHECK(be->cache_bytes() == sysfs.last_level_bytes());
}
