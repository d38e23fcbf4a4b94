// What every backend's tests of moh check (reference/attention/moh_common.h): both routers, shared
// and routed heads at their edges, and the equality with gqa when every head runs.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "attnbench/registry.h"
#include "support.h"

namespace attnbench::test {

// Llama-3-8B's heads (32 query, 8 KV, head_dim 128; MoH-LLaMA3's 16 shared + 8 of 16 routed) at
// decode; the learned router (ragged, f32); prefill with GQA, MHA-like (no shared heads), MQA with
// soft-cap and ALiBi; GQA group 7 at head_dim 96 over 4097 keys; one cached key; only shared heads
// (routed_k 0); per-KV-head lengths; head_dim 80.
inline const std::vector<std::string> kMohCases = {
    "moh/decode/batch=2,kv_len=1000/bf16/s1",
    "moh/decode/batch=3,kv_len=300,ragged=true,router=learned,d_model=512/f32/s2",
    "moh/prefill/batch=1,q_heads=8,kv_heads=2,head_dim=64,q_len=100,kv_len=150,shared_heads=2,routed_k=3/f16/s3",
    "moh/prefill/batch=2,q_heads=8,kv_heads=8,head_dim=80,q_len=70,kv_len=70,shared_heads=0,routed_k=4,router=learned,"
    "d_model=256/bf16/s4",
    "moh/decode/batch=1,q_heads=14,kv_heads=2,head_dim=96,q_len=2,kv_len=4097,shared_heads=4,routed_k=5/f16/s5",
    "moh/decode/batch=2,q_heads=8,kv_heads=4,kv_len=1,shared_heads=1,routed_k=2,router=learned,d_model=128/bf16/s6",
    "moh/decode/batch=2,q_heads=8,kv_heads=2,kv_len=200,shared_heads=3,routed_k=0,router=learned,d_model=128/f32/s7",
    "moh/prefill/batch=1,q_heads=8,kv_heads=1,q_len=64,kv_len=200,shared_heads=2,routed_k=2,softcap=30,alibi=true/bf16/s8",
    "moh/decode/batch=2,q_heads=16,kv_heads=4,kv_len=600,head_lengths=true,shared_heads=4,routed_k=4/bf16/s9",
};

// moh with every head running (the norm router's gates are then all 1) and gqa on the same seed,
// hence the same q, k, v: the O of each must be the same bytes.
inline const std::vector<std::pair<std::string, std::string>> kMohAllHeads = {
    {"moh/decode/batch=2,q_heads=8,kv_heads=2,kv_len=300,shared_heads=2,routed_k=6/bf16/s1",
     "gqa/decode/batch=2,q_heads=8,kv_heads=2,kv_len=300/bf16/s1"},
    {"moh/prefill/batch=1,q_heads=8,kv_heads=4,q_len=90,kv_len=120,shared_heads=0,routed_k=8/f32/s2",
     "gqa/prefill/batch=1,q_heads=8,kv_heads=4,q_len=90,kv_len=120/f32/s2"},
    {"moh/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=80,q_len=90,kv_len=120,shared_heads=4,routed_k=10/f16/s3",
     "gqa/prefill/batch=1,q_heads=14,kv_heads=2,head_dim=80,q_len=90,kv_len=120/f16/s3"},
};

// The pairs of kMohAllHeads whose O differs between moh's impl and gqa's variant `gqa_variant` on
// `backend` (or that did not pass), named.
inline std::vector<std::string> moh_all_heads_mismatches(Backend& backend, const std::string& moh_variant,
                                                         const std::string& gqa_variant, bool sixteen_bit_only = false) {
  std::vector<std::string> bad;
  for (const auto& [moh_id, gqa_id] : kMohAllHeads) {
    const Case m = case_from_id(moh_id), g = case_from_id(gqa_id);
    if (sixteen_bit_only && m.dtype == DType::f32) continue;  // a variant that takes f16 and bf16 only
    const RowResult a = check_with_inputs(m, m.method->inputs(m), backend, moh_variant);
    const RowResult b = check_with_inputs(g, g.method->inputs(g), backend, gqa_variant);
    if (a.record.status != Status::pass || b.record.status != Status::pass) {
      bad.push_back(moh_id + ": " + status_and_reason(a) + " / " + status_and_reason(b));
      continue;
    }
    const HostTensor &x = a.outputs.at("O"), &y = b.outputs.at("O");
    if (x.bytes() != y.bytes() || std::memcmp(x.raw(), y.raw(), x.bytes()) != 0) bad.push_back(moh_id + ": O differs from gqa's");
  }
  return bad;
}

}  // namespace attnbench::test
