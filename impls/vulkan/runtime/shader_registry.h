// SPIR-V of every shaders/*.comp, compiled by glslc at build time and embedded in the binary:
// each generated <name>_spv.cpp registers its words under the shader's file name (without
// .comp), so a new shader needs no CMake or C++ list edit.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnbench::vulkan {

// The shader's words; ATTNBENCH_ASSERT if no shader of that name was built in.
std::span<const uint32_t> shader_spirv(const std::string& name);
std::vector<std::string> shader_names();

namespace detail {
struct ShaderRegistrar {
  ShaderRegistrar(const char* name, const uint32_t* words, size_t count);
};
}  // namespace detail

}  // namespace attnbench::vulkan
