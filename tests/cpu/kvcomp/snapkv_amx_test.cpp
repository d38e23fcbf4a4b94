// snapkv's bf16 window logits on AMX tiles (impls/cpu/kvcomp/snapkv_amx.cpp) against the fp64
// reference, on windows and head dims off the tiles' 32, GQA groups 1, 4 and 7, a key past a tile,
// ties; and the row judged against the tiles' rate. Skipped where the CPU or its OS has no tiles.
#include <catch2/catch.hpp>

#include "support.h"

using namespace attnbench;

namespace {

std::string snapkv_id(int q_heads, int kv_heads, int head_dim, int kv_len, int obs_window, int budget, bool ties) {
  return "snapkv/batch=2,q_heads=" + std::to_string(q_heads) + ",kv_heads=" + std::to_string(kv_heads) +
         ",head_dim=" + std::to_string(head_dim) + ",kv_len=" + std::to_string(kv_len) +
         ",obs_window=" + std::to_string(obs_window) + ",budget=" + std::to_string(budget) +
         ",pool=max,pool_kernel=7,n_future=16,ties=" + (ties ? "true" : "false") + "/bf16/s1";
}

}  // namespace

TEST_CASE("snapkv's bf16 logits on AMX tiles pass the SET check on the shapes a user would try", "[cpu]") {
  auto cpu = test::open_backend("cpu", {});
  if (!cpu->probe().device.details.value("amx_bf16", false)) {
    WARN("skip: this CPU or its OS offers no AMX-BF16 tiles");
    return;
  }
  const std::vector<std::string> ids = {
      snapkv_id(8, 8, 128, 300, 32, 64, false),   // group 1
      snapkv_id(8, 2, 64, 4097, 40, 512, false),  // group 4, a window off 32, a key past a tile
      snapkv_id(14, 2, 96, 777, 8, 100, false),   // group 7, a short window
      snapkv_id(8, 2, 40, 513, 64, 128, true),    // head_dim 40, ties
      snapkv_id(4, 2, 128, 64, 64, 64, false),    // the window is the whole cache
  };
  CHECK(test::rows_not_passing(ids, *cpu, " amx").empty());
}

TEST_CASE("snapkv's bf16 row on AMX tiles is judged against the tiles' rate", "[cpu]") {
  auto cpu = test::open_backend("cpu", {});
  if (!cpu->probe().device.details.value("amx_bf16", false)) {
    WARN("skip: this CPU or its OS offers no AMX-BF16 tiles");
    return;
  }
  Peaks peaks;
  for (const char* name : {"read_bytes_per_s", "copy_bytes_per_s", "fp32_flops_per_s", "amx_bf16_flops_per_s"})
    peaks.add(name, 1e9, "test");
  CHECK(test::timed_row(snapkv_id(8, 2, 128, 1024, 32, 128, false), peaks, *cpu).throughput->peak == "amx_bf16_flops_per_s");
  auto off = test::open_backend("cpu", {{"amx", "off"}});
  CHECK(test::timed_row(snapkv_id(8, 2, 128, 1024, 32, 128, false), peaks, *off).throughput->peak == "fp32_flops_per_s");
}
