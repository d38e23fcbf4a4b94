// What every backend's tests of mla check (reference/attention/mla_common.h): both forms on the same
// cases, so each form passing against the one fp64 reference shows them equal within their gates.
#pragma once

#include <string>
#include <vector>

namespace attnbench::test {

// DeepSeek-V3's widths (the defaults: absorbed key 576, value 512; naive key 192, value 128) at
// decode, speculative decode (q_len 2) and prefill, ragged batches, one cached token and 4097;
// small odd widths (rank 80, rope 16, nope 40, v_dim 72) and no rotary key at all; and the
// PreRoPE variant. The naive form decompresses every key and value of every head (batch x heads x
// kv_len x 512 x 256 multiply-adds): the long and the 128-head cases keep that product small, since
// lavapipe runs the projection at well under a GFLOP/s.
inline const std::vector<std::string> kMlaCases = {
    "mla/decode/batch=2,heads=16,kv_len=1000,form=absorbed/bf16/s1",
    "mla/decode/batch=2,heads=16,kv_len=1000,form=naive/bf16/s1",
    "mla/decode/batch=3,heads=128,kv_len=120,ragged=true,form=absorbed/f32/s2",
    "mla/decode/batch=3,heads=128,kv_len=120,ragged=true,form=naive/f32/s2",
    "mla/decode/batch=1,heads=8,q_len=2,kv_len=4097,form=absorbed/f16/s3",
    "mla/decode/batch=1,heads=8,q_len=2,kv_len=4097,form=naive/f16/s3",
    "mla/decode/batch=2,heads=8,kv_len=1,form=absorbed/bf16/s4",
    "mla/decode/batch=2,heads=8,kv_len=1,form=naive/bf16/s4",
    "mla/prefill/batch=1,heads=8,q_len=100,kv_len=150,form=absorbed/f16/s5",
    "mla/prefill/batch=1,heads=8,q_len=100,kv_len=150,form=naive/f16/s5",
    "mla/prefill/batch=2,heads=4,q_len=33,kv_len=70,kv_lora_rank=80,qk_rope_head_dim=16,qk_nope_head_dim=40,v_head_dim=72,"
    "form=absorbed/f32/s6",
    "mla/prefill/batch=2,heads=4,q_len=33,kv_len=70,kv_lora_rank=80,qk_rope_head_dim=16,qk_nope_head_dim=40,v_head_dim=72,"
    "form=naive/f32/s6",
    "mla/decode/batch=2,heads=8,kv_len=500,kv_lora_rank=128,qk_rope_head_dim=0,qk_nope_head_dim=64,v_head_dim=64,"
    "form=absorbed/bf16/s7",
    "mla/decode/batch=2,heads=8,kv_len=500,kv_lora_rank=128,qk_rope_head_dim=0,qk_nope_head_dim=64,v_head_dim=64,"
    "form=naive/bf16/s7",
    // PreRoPE (naive only): keys rotated after decompression, both layouts, a ragged batch, scattered
    // positions under YaRN, a value narrower than the key, prefill.
    "mla/decode/batch=2,heads=16,kv_len=300,ragged=true,form=naive,qk_rope_head_dim=0,rope_layout=half/bf16/s8",
    "mla/prefill/batch=1,heads=8,q_len=64,kv_len=100,kv_lora_rank=128,qk_rope_head_dim=0,v_head_dim=96,form=naive,"
    "rope_layout=interleaved/f32/s9",
    "mla/decode/batch=1,heads=16,kv_len=200,form=naive,qk_rope_head_dim=0,rope_layout=half,rope_positions=scattered,"
    "rope_scaling=yarn,rope_factor=40/f16/s10",
};

}  // namespace attnbench::test
