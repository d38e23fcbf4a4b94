// Tensor views and 8-element loads shared by the shaders that read f32/f16/bf16 tensors
// (attention, snapkv). The including shader defines the specialization constants DTYPE (dtype.glsl
// codes) and VEC (every row starts on a 16-byte boundary) before using the macros.
#ifndef ATTNBENCH_LOAD8_GLSL
#define ATTNBENCH_LOAD8_GLSL

#include "dtype.glsl"

// Defines `void NAME(uint e, uint n, out vec4 lo, out vec4 hi)`: elements e .. e+7 of the tensor
// bound as V4 (uvec4 view), V2 (16-bit view) and V1 (32-bit view), as floats; elements at index
// n and beyond are 0 (the row's end). With VEC the row starts on a 16-byte boundary and e is a
// multiple of 8, so whole chunks are one or two 16-byte loads. DEFINE_LOAD8_ALIGNED takes that
// flag by name, for a tensor whose rows align differently (attention's V rows, v_stride apart).
#define DEFINE_LOAD8(NAME, V4, V2, V1) DEFINE_LOAD8_ALIGNED(NAME, V4, V2, V1, VEC)
#define DEFINE_LOAD8_ALIGNED(NAME, V4, V2, V1, ALIGNED)                                  \
  void NAME(uint e, uint n, out vec4 lo, out vec4 hi) {                                 \
    if (ALIGNED && n >= 8u) {                                                           \
      if (DTYPE == DT_F32) {                                                            \
        lo = uintBitsToFloat(V4[e >> 2]);                                               \
        hi = uintBitsToFloat(V4[(e >> 2) + 1u]);                                        \
      } else {                                                                          \
        const uvec4 w = V4[e >> 3];                                                     \
        lo = vec4(unpack2(w.x, DTYPE), unpack2(w.y, DTYPE));                            \
        hi = vec4(unpack2(w.z, DTYPE), unpack2(w.w, DTYPE));                            \
      }                                                                                 \
    } else {                                                                            \
      float x[8];                                                                       \
      for (uint j = 0u; j < 8u; ++j) {                                                  \
        x[j] = 0.0;                                                                     \
        if (j < n) {                                                                    \
          if (DTYPE == DT_F32) x[j] = uintBitsToFloat(V1[e + j]);                       \
          else if (DTYPE == DT_F16) x[j] = f16_bits_to_f32(uint(V2[e + j]));            \
          else x[j] = bf16_bits_to_f32(uint(V2[e + j]));                                \
        }                                                                               \
      }                                                                                 \
      lo = vec4(x[0], x[1], x[2], x[3]);                                                \
      hi = vec4(x[4], x[5], x[6], x[7]);                                                \
    }                                                                                   \
  }

// Declares a read-only input tensor at BINDING under three views.
#define DECLARE_INPUT(BINDING, V4, V2, V1)                                                       \
  layout(binding = BINDING) readonly buffer V4##_block { uvec4 V4[]; };                          \
  layout(binding = BINDING) readonly buffer V2##_block { uint16_t V2[]; };                       \
  layout(binding = BINDING) readonly buffer V1##_block { uint V1[]; };

#endif
