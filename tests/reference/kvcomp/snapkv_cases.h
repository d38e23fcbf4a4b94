// Cases every backend's snapkv test checks: both poolings, GQA ratios 1 to 7, exact ties, a
// budget of only the window, everything kept, a window longer than the sequence.
#pragma once

namespace attnbench::test {

inline constexpr const char* kSnapkvCases[] = {
    "snapkv/batch=2,q_heads=8,kv_heads=2,head_dim=128,kv_len=1000,obs_window=32,budget=128,pool=max/f32/s1",
    "snapkv/batch=1,q_heads=8,kv_heads=2,head_dim=128,kv_len=777,obs_window=16,budget=100,pool=avg/bf16/s2",
    "snapkv/batch=1,q_heads=7,kv_heads=1,head_dim=80,kv_len=513,obs_window=24,budget=64,pool_kernel=5,ties=true/f16/s3",
    "snapkv/batch=1,q_heads=4,kv_heads=4,head_dim=64,kv_len=300,obs_window=7,budget=7,pool_kernel=1/f32/s4",
    "snapkv/batch=2,q_heads=4,kv_heads=2,head_dim=64,kv_len=40,obs_window=8,budget=64/bf16/s5",
    "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=20,obs_window=32,budget=32/f16/s6",
};

}  // namespace attnbench::test
