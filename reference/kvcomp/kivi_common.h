// What every backend's KIVI kernels need to know about a case (semantics: kivi_decode.cpp's and
// kivi.cpp's headers): one field list for C++, CUDA and GLSL (C++ lives inside __cplusplus), the
// cache's layout and the split between its quantized part and its full-precision windows.
//
// The cache of a (sequence, KV head) holding len tokens, at a decode step's attention (the new
// token included), as KIVI's LlamaAttention_KIVI holds it:
//   keys    the first k_quant(len) tokens quantized per channel, in groups of G tokens along the
//           sequence; the last k_full(len) = ((len − 1) mod R) + 1 in full precision (the window
//           that is quantized whole when it reaches R)
//   values  the first v_quant(len) = len − v_full(len) tokens quantized per token, in groups of G
//           channels; the last v_full(len) = min(len, R + 1) in full precision (R kept, plus the
//           new token, whose oldest neighbour is quantized after the step)
// Layouts (KIVI's: the keys transposed, codes packed along the sequence; the values packed along
// the channels), codes of `bits` bits, per_word = 32 / bits to a 32-bit word (int32 tensors, as
// KIVI's are, read as unsigned), code i of a word in bits [i·bits, (i + 1)·bits):
//   k_codes  i32   [batch, kv_heads, head_dim, k_quant_cap / per_word]   token t of channel c:
//                  word t / per_word, code t % per_word
//   k_scale, k_min [batch, kv_heads, head_dim, k_quant_cap / G]           dtype (f16 or bf16)
//   k_full         [batch, kv_heads, R, head_dim]                         dtype, row r: token k_quant + r
//   v_codes  i32   [batch, kv_heads, v_quant_cap, head_dim / per_word]
//   v_scale, v_min [batch, kv_heads, v_quant_cap, head_dim / G]           dtype
//   v_full         [batch, kv_heads, R + 1, head_dim]                     dtype, row r: token v_quant + r
//   kv_len   i32   [batch]
// A value is code·scale + min (KIVI's dequantization), its group's scale and min.
#ifndef ATTNBENCH_KIVI_COMMON_H
#define ATTNBENCH_KIVI_COMMON_H

#define ATTNBENCH_KIVI_FIELDS(X)                                                              \
  X(i32, batch)                                                                               \
  X(i32, q_heads)                                                                             \
  X(i32, kv_heads)                                                                            \
  X(i32, group)        /* q_heads / kv_heads */                                               \
  X(i32, head_dim)                                                                            \
  X(i32, bits)         /* 2 or 4 */                                                           \
  X(i32, per_word)     /* 32 / bits codes in a uint32 */                                      \
  X(i32, group_size)   /* G: tokens (keys) or channels (values) sharing a scale and a min */ \
  X(i32, residual)     /* R: the keys' full-precision window, a multiple of G */             \
  X(i32, kv_cap)       /* tokens of the longest sequence */                                   \
  X(i32, k_quant_cap)  /* k_quant(kv_cap): quantized keys a (sequence, KV head) holds at most */ \
  X(i32, v_quant_cap)  /* v_quant(kv_cap) */                                                  \
  X(f32, scale)        /* 1 / sqrt(head_dim) */                                               \
  X(i32, half_away)    /* quantizer rounding: 0 half to even (torch.round), 1 half away */

#ifdef __cplusplus
#include <cstdint>

#include "attnbench/param_struct.h"

namespace attnbench {
struct Case;
}

namespace attnbench::kvcomp {

ATTNBENCH_PARAM_STRUCT(KiviParams, ATTNBENCH_KIVI_FIELDS);

// The parameters of a case of kivi_decode or kivi.
KiviParams kivi_params(const Case& c);

ATTNBENCH_HD inline int64_t kivi_k_full(const KiviParams& s, int64_t len) { return len == 0 ? 0 : (len - 1) % s.residual + 1; }
ATTNBENCH_HD inline int64_t kivi_k_quant(const KiviParams& s, int64_t len) { return len - kivi_k_full(s, len); }
ATTNBENCH_HD inline int64_t kivi_v_full(const KiviParams& s, int64_t len) {
  return len < int64_t{s.residual} + 1 ? len : int64_t{s.residual} + 1;
}
ATTNBENCH_HD inline int64_t kivi_v_quant(const KiviParams& s, int64_t len) { return len - kivi_v_full(s, len); }

// Words and groups per row of each layout.
ATTNBENCH_HD inline int64_t kivi_k_words(const KiviParams& s) { return s.k_quant_cap / s.per_word; }
ATTNBENCH_HD inline int64_t kivi_k_groups(const KiviParams& s) { return s.k_quant_cap / s.group_size; }
ATTNBENCH_HD inline int64_t kivi_v_words(const KiviParams& s) { return s.head_dim / s.per_word; }
ATTNBENCH_HD inline int64_t kivi_v_groups(const KiviParams& s) { return s.head_dim / s.group_size; }

// Code i (0-based in the word) of a packed word.
ATTNBENCH_HD inline uint32_t kivi_code(const KiviParams& s, uint32_t word, int64_t i) {
  return (word >> (i * s.bits)) & ((1u << s.bits) - 1u);
}

}  // namespace attnbench::kvcomp
#endif  // __cplusplus
#endif
