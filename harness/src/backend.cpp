#include "attnbench/backend.h"

#include <cctype>
#include <cstdlib>

#include "attnbench/error.h"

namespace attnbench {

bool DeviceLimits::has(const std::string& feature) const {
  auto it = features.find(feature);
  return it != features.end() && it->second == "yes";
}

void Backend::set_option(const std::string& key, const std::string& value) {
  std::string known;
  for (const auto& o : options()) {
    if (o.name == key) {
      options_set_[key] = value;
      return;
    }
    known += (known.empty() ? "" : ", ") + o.name;
  }
  throw InputError(cat(name(), ": unknown backend option \"", key, "\"; known: ", known.empty() ? "(none)" : known));
}

std::string Backend::option(const std::string& key) const {
  if (auto it = options_set_.find(key); it != options_set_.end()) return it->second;
  std::string env = "ATTNBENCH_" + name() + "_" + key;
  for (char& ch : env) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const char* v = std::getenv(env.c_str())) return v;
  for (const auto& o : options())
    if (o.name == key) return o.default_value;
  ATTNBENCH_ASSERT(false, name(), " reads option \"", key, "\" it does not declare");
  __builtin_unreachable();
}

}  // namespace attnbench
