#include "cpu_caches.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace attnbench::cpu {

namespace {

std::string first_word(const std::filesystem::path& file) {
  std::ifstream f(file);
  std::string text;
  f >> text;
  return text;
}

}  // namespace

size_t parse_cache_size(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return 0;
  size_t i = 0, n = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (n > (size_t{1} << 40)) return 0;  // no cache is a terabyte: text we do not understand
    n = n * 10 + static_cast<size_t>(text[i] - '0');
  }
  const std::string unit = text.substr(i);
  if (unit.empty()) return n;
  if (unit == "K") return n << 10;
  if (unit == "M") return n << 20;
  if (unit == "G") return n << 30;
  return 0;
}

size_t CacheHierarchy::last_level_bytes() const {
  const CacheLevel* last = nullptr;
  for (const CacheLevel& c : levels)
    if (c.type != "Instruction" && c.bytes > 0 && (!last || c.level > last->level)) last = &c;
  return last ? last->bytes : 0;
}

Json CacheHierarchy::to_json() const {
  Json list = Json::array();
  for (const CacheLevel& c : levels) {
    Json j = {{"level", c.level}, {"type", c.type}, {"bytes", c.bytes}};
    if (!c.shared_cpus.empty()) j["shared_cpus"] = c.shared_cpus;
    list.push_back(j);
  }
  return {{"levels", list}, {"source", source}};
}

CacheHierarchy read_cache_hierarchy(const std::string& root) {
  CacheHierarchy h;
  std::error_code ec;
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(root, ec))
    if (e.path().filename().string().rfind("index", 0) == 0) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    CacheLevel c;
    const std::string level = first_word(d / "level");
    if (level.empty() || !std::isdigit(static_cast<unsigned char>(level[0]))) continue;
    c.level = std::stoi(level);
    c.type = first_word(d / "type");
    c.bytes = parse_cache_size(first_word(d / "size"));
    c.shared_cpus = first_word(d / "shared_cpu_list");
    if (c.bytes) h.levels.push_back(c);
  }
  if (!h.levels.empty()) {
    h.source = "sysfs";
    return h;
  }
  const std::pair<int, CacheLevel> guesses[] = {{_SC_LEVEL1_DCACHE_SIZE, {1, "Data", 0, ""}},
                                                {_SC_LEVEL2_CACHE_SIZE, {2, "Unified", 0, ""}},
                                                {_SC_LEVEL3_CACHE_SIZE, {3, "Unified", 0, ""}}};
  for (auto [name, c] : guesses) {
    const long v = sysconf(name);
    if (v <= 0) continue;
    c.bytes = static_cast<size_t>(v);
    h.levels.push_back(c);
  }
  if (!h.levels.empty()) h.source = "sysconf";
  return h;
}

}  // namespace attnbench::cpu
