// The CPU's cache hierarchy, as Linux describes it in sysfs (/sys/devices/system/cpu/cpu0/cache/
// index*/{level,type,size,shared_cpu_list}). glibc's sysconf guesses from CPUID, which a
// hypervisor may fill with figures of its own (seen: a 320 MiB L3 in sysconf where sysfs said
// 32 MiB), so sysconf is read only when sysfs lists no cache at all.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attnbench/json.h"

namespace attnbench::cpu {

struct CacheLevel {
  int level = 0;
  std::string type;         // "Data", "Instruction", "Unified"
  size_t bytes = 0;
  std::string shared_cpus;  // "0-1": the CPUs that share this cache
};

struct CacheHierarchy {
  std::vector<CacheLevel> levels;  // as listed, L1 first
  std::string source;              // "sysfs" | "sysconf" | "" (none found)

  // The last (highest) level that holds data: what cold timing must defeat. 0 when unknown.
  size_t last_level_bytes() const;
  Json to_json() const;
};

// From `root` (default sysfs; tests give a folder of their own), else sysconf.
CacheHierarchy read_cache_hierarchy(const std::string& root = "/sys/devices/system/cpu/cpu0/cache");

// "48K", "2048K", "32M", "491520K" → bytes; 0 for text that is none of these.
size_t parse_cache_size(const std::string& text);

}  // namespace attnbench::cpu
