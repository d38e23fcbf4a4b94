// The decoding family's chain verification stage on the CPU (semantics: reference/decoding/
// chain_verify.h): speculative_sampling's impl is this stage, and specdecpp's verification after its
// stopping rule (each row verifies lengths[r] drafts). Multi-threaded on the backend's pool, the
// race vectorised with a vectorised Philox (race_kernel.h), runtime dispatch to AVX-512.
//
// Three passes, each parallel and each task independent, so no bit depends on the thread count:
//   1. per row: the acceptance tests of its drafts (fp32: u·q < p), FlashInfer's two counters, the
//      accepted drafts, and where the row stops (first rejection, or its length for the bonus); for
//      a rejection, whether the residual max(0, p − q) has any mass (else the race falls back to p).
//   2. per (row, span of the vocabulary): the race's best key and index in that span. Spans are a
//      fixed function of the vocabulary size, so results do not depend on scheduling.
//   3. per row: the best of its spans (larger key, then smaller index) is the emitted token.
#pragma once

#include <cstdint>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "race_kernel.h"
#include "reference/decoding/speculative_sampling_common.h"

namespace attnbench::cpu {

class ChainVerifyStage {
 public:
  // Binds target_probs, draft_probs, draft_token_ids and the four outputs of `io`.
  void prepare(const decoding::SpeculativeParams& s, uint64_t seed, Backend& backend, const IoBuffers& io);
  // lengths: each row's drafts (≤ draft_len), or null for draft_len everywhere.
  void run(const int32_t* lengths);

 private:
  ThreadPool* pool_ = nullptr;
  const race::Kernels* kernels_ = nullptr;
  decoding::SpeculativeParams s_{};
  uint64_t seed_ = 0;
  const float *target_ = nullptr, *draft_ = nullptr;
  const int32_t* ids_ = nullptr;
  int32_t *tokens_ = nullptr, *emitted_ = nullptr, *accepted_ = nullptr, *emitted_draft_ = nullptr;
  int64_t span_ = 1, spans_ = 1;
  race::PhiloxSite site_{};
  size_t scratch_words_ = 0;
  BufferPtr stop_, best_, scratch_;
};

}  // namespace attnbench::cpu
