#include "shader_registry.h"

#include <map>

#include "attnbench/error.h"

namespace attnbench::vulkan {

namespace {
std::map<std::string, std::span<const uint32_t>>& shaders() {
  static std::map<std::string, std::span<const uint32_t>> m;
  return m;
}
}  // namespace

detail::ShaderRegistrar::ShaderRegistrar(const char* name, const uint32_t* words, size_t count) {
  shaders()[name] = std::span<const uint32_t>(words, count);
}

std::span<const uint32_t> shader_spirv(const std::string& name) {
  auto it = shaders().find(name);
  ATTNBENCH_ASSERT(it != shaders().end(), "no shader \"", name, "\" is built in (impls/vulkan/shaders/", name, ".comp)");
  return it->second;
}

std::vector<std::string> shader_names() {
  std::vector<std::string> out;
  for (const auto& [name, words] : shaders()) out.push_back(name);
  return out;
}

}  // namespace attnbench::vulkan
