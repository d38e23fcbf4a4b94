// Parameter structs that C++ (CPU code, CUDA host and device code) and GLSL (Vulkan shaders) read
// with one layout, because both are generated from one field list.
//
// A method's parameters are a list of 32-bit fields in a file both compilers include, e.g.
// reference/kvcomp/scored_selection_common.h:
//
//   #define ATTNBENCH_SELECTION_FIELDS(X) X(i32, batch) X(i32, q_heads) ... X(i32, elem_bytes)
//
// C++ turns it into a plain struct with ATTNBENCH_PARAM_STRUCT(SelectionParams,
// ATTNBENCH_SELECTION_FIELDS); a shader does the same with the macro of the same name in
// impls/vulkan/shaders/param_struct.glsl and puts the struct into its push-constant block. Every
// field is 4 bytes (i32, u32, f32), so the C++ layout and the shader's std430 layout are the same
// offsets by construction: no member-for-member copy to keep in step. A 64-bit value (a seed) is
// two u32 fields.
//
// Field-list files are read by glslc too: ASCII, macros and C comments only.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define ATTNBENCH_HD __host__ __device__
#else
#define ATTNBENCH_HD
#endif

#define ATTNBENCH_PARAM_TYPE_i32 int32_t
#define ATTNBENCH_PARAM_TYPE_u32 uint32_t
#define ATTNBENCH_PARAM_TYPE_f32 float
#define ATTNBENCH_PARAM_FIELD(type, name) ATTNBENCH_PARAM_TYPE_##type name;
#define ATTNBENCH_PARAM_COUNT(type, name) +1

// struct Name { fields }; with its size checked against the field count (no padding anywhere).
#define ATTNBENCH_PARAM_STRUCT(Name, FIELDS) \
  struct Name {                              \
    FIELDS(ATTNBENCH_PARAM_FIELD)            \
  };                                         \
  static_assert(sizeof(Name) == 4 * (0 FIELDS(ATTNBENCH_PARAM_COUNT)), #Name ": 4-byte fields only")
