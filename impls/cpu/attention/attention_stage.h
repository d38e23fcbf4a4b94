// The CPU attention stage: online-softmax attention over one AttentionParams (attention_common.h),
// multi-threaded on the backend's pool and vectorised per ISA (attention_kernel.h), bf16 prefill
// on AMX tiles where the backend offers them (attention_amx.h). The attention methods' impl runs
// it on a case's buffers; mla runs it between its projections on its workspaces.
//
// Scheduling. A group is (batch, KV head) with rows = head group × q_len. Groups with many rows
// are cut into tasks of at most 64 rows (causal rows late in the sequence see more keys; tasks
// are handed out dynamically). Groups with few rows (decode) are instead cut along the keys when
// there are too few groups to fill the threads: each split writes a partial (m, l, O) and a
// second pass merges the splits (flash-decoding).
//
// The fused rope's parameters, two ways (backend option cpu.rope): a first pass forms every
// query's and key's rotation once (rope's coefficient kernel, a row per position serving all
// heads). By default (prepass) rope's own rotate kernel then writes rotated copies of q and k in
// the storage dtype, once per run, which the kernels read as any q and k. With cpu.rope=fused the
// kernels rotate q as they pack it and each key as they widen it (fp32, never stored); but a task
// widens the keys it reads, so a key is rotated once per task, and decode gives up its in-place
// loads — slower on this project's CPU in both phases (docs/design.md), hence the default. The
// AMX path takes only the prepass.
//
// Head-sparse (moh): a first pass compacts each group's active rows into its row map and writes the
// skipped rows (O = 0, LSE = −inf); tasks then cover positions below the group's count only, so a
// group with no active row costs nothing and a task's work counts only active rows.
#pragma once

#include <string>

#include "../runtime/cpu_backend.h"
#include "attention_amx.h"
#include "attention_kernel.h"
#include "attnbench/impl.h"
#include "rope_kernel.h"

namespace attnbench::cpu::attn {

// The stage's buffers (attention_common.h's layouts); alibi_slopes only with s.alibi, row_gates
// only with s.head_sparse.
struct StageIo {
  const void* q;
  const void* k;
  const void* v;
  const int32_t* kv_len;
  void* o;
  float* lse;
  const float* alibi_slopes;
  const float* row_gates = nullptr;
  // With s.rope_dim: the fused rope's inputs (attention_common.h).
  const int32_t* q_positions = nullptr;
  const int32_t* k_positions = nullptr;
  const float* inv_freq = nullptr;
  const int32_t* key_idx = nullptr;  // with s.key_index (kv_len: the lists' lengths)
  const float* key_bias = nullptr;   // with s.key_bias
  const int32_t* tree_mask = nullptr;  // with s.tree_mask
};

// The stage's buffers for a case of an attention method (mha ... cog, moh): the case's own tensors.
StageIo case_io(const attention::AttentionParams& s, const IoBuffers& io, const float* row_gates = nullptr);
// The fused rope's inputs (q_positions, k_positions, inv_freq) from a case's buffers, with s.rope_dim.
void add_rope_io(StageIo& sio, const attention::AttentionParams& s, const IoBuffers& io);

class AttentionStage {
 public:
  // Allocates the scratch and partials from the backend; the buffers must outlive the stage.
  void prepare(const attention::AttentionParams& s, DType dtype, const StageIo& io, CpuBackend& cpu);
  void run();
  // The ceiling the stage's throughput is judged against ("" for the backend's default).
  std::string compute_ceiling() const;

 private:
  int64_t window_first_key(int64_t b, int64_t g) const;
  void map_rows();
  void merge_splits();
  void rope_pass();
  void store(char* out, int64_t x, float v) const;

  ThreadPool* pool_ = nullptr;
  const KernelTable* kernels_ = nullptr;
  const rope_kernel::Kernels* rope_kernels_ = nullptr;
  Problem problem_{};
  int64_t rows_ = 0, groups_ = 0, splits_ = 1, row_blocks_ = 1, split_len_ = 0, span_ = 0;
  size_t scratch_stride_ = 0;
  BufferPtr scratch_, partials_, row_map_, row_count_, q_rope_, k_rope_, q_rot_, k_rot_;
  const void* q_in_ = nullptr;  // the prepass's inputs, unrotated
  const void* k_in_ = nullptr;
  bool rope_fused_ = false;
  const int32_t* q_positions_ = nullptr;
  const int32_t* k_positions_ = nullptr;
  const float* inv_freq_ = nullptr;
  bool amx_ = false;
  amx::Packed packed_{};
  BufferPtr packed_k_, packed_v_;
};

}  // namespace attnbench::cpu::attn
