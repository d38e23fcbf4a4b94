#include "spirv_reflect.h"

#include <algorithm>
#include <map>
#include <vector>

#include "attnbench/error.h"

namespace attnbench::vulkan {

namespace {

// The few SPIR-V opcodes and enumerants a block's size depends on (SPIR-V specification §3).
enum Op : uint32_t {
  kOpTypeInt = 21,
  kOpTypeFloat = 22,
  kOpTypeVector = 23,
  kOpTypeArray = 28,
  kOpTypeStruct = 30,
  kOpTypePointer = 32,
  kOpConstant = 43,
  kOpVariable = 59,
  kOpDecorate = 71,
  kOpMemberDecorate = 72,
};
constexpr uint32_t kStoragePushConstant = 9;
constexpr uint32_t kDecorationArrayStride = 6;
constexpr uint32_t kDecorationOffset = 35;

struct Module {
  std::map<uint32_t, std::vector<uint32_t>> types;  // id -> the instruction's words from opcode on
  std::map<uint32_t, uint32_t> constants;           // id -> value (32-bit)
  std::map<uint32_t, uint32_t> array_stride;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> member_offset;
  std::vector<uint32_t> push_pointer_types;

  uint32_t size_of(uint32_t id) const {
    const auto it = types.find(id);
    ATTNBENCH_ASSERT(it != types.end(), "SPIR-V: push-constant member type %", id, " not found");
    const std::vector<uint32_t>& t = it->second;
    switch (t[0]) {
      case kOpTypeInt:
      case kOpTypeFloat: return t[2] / 8;
      case kOpTypeVector: return t[3] * size_of(t[2]);
      case kOpTypeArray: return constants.at(t[3]) * array_stride.at(id);
      case kOpTypeStruct: {
        uint32_t end = 0;
        for (uint32_t m = 0; m + 2 < t.size(); ++m) end = std::max(end, member_offset.at({id, m}) + size_of(t[2 + m]));
        return end;
      }
    }
    ATTNBENCH_ASSERT(false, "SPIR-V: push-constant member of unsupported type (opcode ", t[0], ")");
    return 0;
  }
};

}  // namespace

uint32_t push_constant_bytes(std::span<const uint32_t> spirv) {
  ATTNBENCH_ASSERT(spirv.size() > 5 && spirv[0] == 0x07230203u, "not a SPIR-V module");
  Module m;
  for (size_t i = 5; i < spirv.size();) {
    const uint32_t op = spirv[i] & 0xffffu, n = spirv[i] >> 16;
    ATTNBENCH_ASSERT(n > 0 && i + n <= spirv.size(), "SPIR-V: malformed instruction at word ", i);
    const uint32_t* w = spirv.data() + i;
    switch (op) {
      case kOpTypeInt:
      case kOpTypeFloat:
      case kOpTypeVector:
      case kOpTypeArray:
      case kOpTypeStruct:
      case kOpTypePointer: {
        // Words after the opcode: result id, then operands; kept from the opcode on, result dropped.
        std::vector<uint32_t> t{op, 0};
        t.insert(t.end(), w + 2, w + n);
        m.types[w[1]] = t;
        break;
      }
      case kOpConstant: m.constants[w[2]] = w[3]; break;
      case kOpDecorate:
        if (w[2] == kDecorationArrayStride) m.array_stride[w[1]] = w[3];
        break;
      case kOpMemberDecorate:
        if (w[3] == kDecorationOffset) m.member_offset[{w[1], w[2]}] = w[4];
        break;
      case kOpVariable:
        if (w[3] == kStoragePushConstant) m.push_pointer_types.push_back(w[1]);
        break;
    }
    i += n;
  }
  if (m.push_pointer_types.empty()) return 0;
  // OpTypePointer: {op, 0, storage class, pointee}
  return m.size_of(m.types.at(m.push_pointer_types.front())[3]);
}

}  // namespace attnbench::vulkan
