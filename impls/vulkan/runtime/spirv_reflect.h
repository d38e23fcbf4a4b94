// What the host needs to know about a shader's interface, read from its SPIR-V: the size of its
// push-constant block, so every dispatch can check that the host's struct is the shader's block
// (harness/include/attnbench/param_struct.h makes their fields one list; this catches a block
// composed differently on the two sides).
#pragma once

#include <cstdint>
#include <span>

namespace attnbench::vulkan {

// Bytes of the push-constant block: the end of its last member (0 when the shader has none).
uint32_t push_constant_bytes(std::span<const uint32_t> spirv);

}  // namespace attnbench::vulkan
