// The shader side of harness/include/attnbench/param_struct.h: a field list such as
// ATTNBENCH_SELECTION_FIELDS becomes a GLSL struct with the C++ struct's layout (4-byte fields
// only, std430), so a push-constant block can hold the very struct the host fills.
//   ATTNBENCH_PARAM_STRUCT(SelectionParams, ATTNBENCH_SELECTION_FIELDS)
#ifndef ATTNBENCH_PARAM_STRUCT_GLSL
#define ATTNBENCH_PARAM_STRUCT_GLSL

#define ATTNBENCH_PARAM_TYPE_i32 int
#define ATTNBENCH_PARAM_TYPE_u32 uint
#define ATTNBENCH_PARAM_TYPE_f32 float
#define ATTNBENCH_PARAM_FIELD(type, name) ATTNBENCH_PARAM_TYPE_##type name;
#define ATTNBENCH_PARAM_STRUCT(Name, FIELDS) struct Name { FIELDS(ATTNBENCH_PARAM_FIELD) };

#endif
