// The interface between kivi on CUDA (kivi_quant_cuda.cpp, host C++) and its quantizer kernel
// (kivi_quant.cu). Light on purpose: no JSON, no attnbench headers beyond the method's parameter
// struct.
//
// The kernel's items, one thread each, in three ranges: a channel's key group (sequence·KV head,
// group, channel; channels innermost, so a warp reads consecutive channels of a token row), a
// token's value group (sequence·KV head, token, group), and a row of the full-precision windows
// (sequence·KV head, row: k_full's R rows, then v_full's R + 1).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention/attention_launch.h"  // Elem
#include "reference/kvcomp/kivi_common.h"

namespace attnbench::cuda::kivi_quant {

using attn::Elem;

inline constexpr int kThreads = 256;

struct Args {
  kvcomp::KiviParams s;
  const void* k;              // [batch, kv_heads, kv_cap, head_dim]   Elem
  const void* v;
  const int32_t* kv_len;      // [batch]
  uint32_t* k_codes;          // kivi_common.h's layouts
  void* k_scale;
  void* k_min;
  void* k_full;
  uint32_t* v_codes;
  void* v_scale;
  void* v_min;
  void* v_full;
  int32_t* k_quant_groups;    // [batch, kv_heads, head_dim]
  int32_t* k_full_len;        // [batch, kv_heads]
  int32_t* v_quant_len;
  int32_t* v_full_len;
  int64_t key_items;          // batch·kv_heads·(k_quant_cap / G)·head_dim
  int64_t value_items;        // batch·kv_heads·v_quant_cap·(head_dim / G)
  int64_t items;              // those, then batch·kv_heads·(2R + 1) window rows
};

// Enqueues the kernel for element type e (f16 or bf16) and the case's code width; returns the CUDA
// error instead of throwing.
cudaError_t quant_launch(Elem e, const Args& a, cudaStream_t stream);

}  // namespace attnbench::cuda::kivi_quant
