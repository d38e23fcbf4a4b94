// The interface between jakiro on CUDA (jakiro_cuda.cpp, host C++) and its three row passes
// (jakiro_cuda.cu); the projections are projection.cu's, the tree eagle2_tree's stage. Light on
// purpose: no attnbench headers beyond the parameter structs.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "../attention/attention_launch.h"  // Elem
#include "reference/decoding/jakiro_common.h"

namespace attnbench::cuda::jakiro {

// Row r = b·F + q of every [rows, ·] buffer is forward row q of tree b.
struct Params {
  decoding::JakiroParams s;
  attn::Elem elem;           // the storage type of every buffer but router
  const void* x;             // hidden_states [rows, d]
  const void* g;             // norm_weight [d]
  void* normed;              // [rows, d]
  const void* gate_up;       // [rows, 4d]: expert e's gate at 2e·d, its up at (2e + 1)·d
  void* act;                 // [rows, 2, d]
  const void* expert_out;    // [rows, 2, d]
  const float* router;       // router_logits [rows, 4]
  void* features;            // [batch, slots, d]
};

inline constexpr int kRowThreads = 256;  // a CTA per row, threads over its elements

cudaError_t norm_launch(const Params& p, cudaStream_t stream);      // normed = RMSNorm(x)·g
cudaError_t activate_launch(const Params& p, cudaStream_t stream);  // act = silu(gate)·up
cudaError_t mix_launch(const Params& p, cudaStream_t stream);       // features: moe and contrastive

}  // namespace attnbench::cuda::jakiro
