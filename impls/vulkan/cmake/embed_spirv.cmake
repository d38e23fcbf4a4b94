# Writes a C++ file that embeds one SPIR-V binary and registers it under NAME.
#   cmake -DIN=foo.spv -DOUT=foo_spv.cpp -DNAME=foo -P embed_spirv.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" len)
math(EXPR rem "${len} % 8")
if(len EQUAL 0 OR NOT rem EQUAL 0)
  message(FATAL_ERROR "${IN} is not a SPIR-V binary (${len} hex digits)")
endif()
# SPIR-V words are little-endian: bytes b0 b1 b2 b3 make the word 0xb3b2b1b0.
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])"
       "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n" words "${words}")
file(WRITE ${OUT} "// Generated from ${NAME}.comp by impls/vulkan/cmake/embed_spirv.cmake.
#include \"runtime/shader_registry.h\"
namespace {
const uint32_t kWords[] = {
${words}};
const attnbench::vulkan::detail::ShaderRegistrar kRegistrar(\"${NAME}\", kWords, sizeof kWords / sizeof kWords[0]);
}  // namespace
")
