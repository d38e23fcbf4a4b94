// Which in-run ceiling a row is judged against (docs/design.md "Ceilings"): the one its work's
// bound names (read, copy), or for a compute-bound row the arithmetic path its impl took, with the
// fp32 rate when the backend measured no such path; and the ceilings table as results files hold it.
#include <catch2/catch.hpp>

#include "attnbench/execute.h"
#include "attnbench/registry.h"
#include "attnbench/row.h"
#include "attnbench/row_io.h"
#include "support.h"

using namespace attnbench;

namespace {

Peaks table(std::initializer_list<std::pair<const char*, double>> rates) {
  Peaks p;
  for (const auto& [name, rate] : rates) p.add(name, rate, std::string("test ") + name);
  p.how = "test";
  return p;
}

}  // namespace

TEST_CASE("the ceilings table round-trips through JSON, and files from before it still read", "[unit]") {
  const Peaks p = table({{"read_bytes_per_s", 3e10}, {"copy_bytes_per_s", 4e10}, {"fp32_flops_per_s", 5e11}});
  const Json j = peaks_to_json(p);
  CHECK(j["read_bytes_per_s"] == 3e10);
  CHECK(j["how"]["copy_bytes_per_s"] == "test copy_bytes_per_s");
  const Peaks back = peaks_from_json(j);
  REQUIRE(back.ceilings.size() == 3);
  CHECK(back.rate("fp32_flops_per_s") == 5e11);
  CHECK(back.find("read_bytes_per_s")->how == "test read_bytes_per_s");
  CHECK(back.how == "test");
  CHECK(back.rate("amx_bf16_flops_per_s") == 0);

  const Peaks old = peaks_from_json(Json::parse(R"({"copy_bytes_per_s": 1.5e10, "flops_per_s": 2e11, "how": "copy: ..."})"));
  CHECK(old.rate("copy_bytes_per_s") == 1.5e10);
  CHECK(old.rate("fp32_flops_per_s") == 2e11);
  CHECK(old.how == "copy: ...");
}

TEST_CASE("ceiling names: bandwidths end in _bytes_per_s; the short name drops the unit", "[unit]") {
  CHECK(ceilings::is_bandwidth("read_bytes_per_s"));
  CHECK_FALSE(ceilings::is_bandwidth("amx_bf16_flops_per_s"));
  CHECK(ceilings::short_name("read_bytes_per_s") == "read");
  CHECK(ceilings::short_name("amx_bf16_flops_per_s") == "amx_bf16");
  CHECK(std::string(ceilings::for_bound(Bound::read)) == "read_bytes_per_s");
  CHECK(std::string(ceilings::for_bound(Bound::copy)) == "copy_bytes_per_s");
  CHECK(std::string(ceilings::for_bound(Bound::compute)) == "fp32_flops_per_s");
}

TEST_CASE("a row names the ceiling its work is bound by, and its percentage is of that one", "[cpu]") {
  auto cpu = test::open_backend("cpu", {{"amx", "off"}});
  // Distinct rates, so a row judged against the wrong one shows it.
  const Peaks peaks = table({{"read_bytes_per_s", 1e9}, {"write_bytes_per_s", 3e9}, {"copy_bytes_per_s", 2e9},
                             {"fp32_flops_per_s", 1e12}});

  const Row decode = test::timed_row("gqa/decode/batch=1,q_heads=8,kv_heads=2,head_dim=64,q_len=1,kv_len=4096,causal=true,ragged=false,head_lengths=false/f32/s1", peaks, *cpu);
  CHECK(decode.work->bound == Bound::read);
  CHECK(decode.throughput->peak == "read_bytes_per_s");
  CHECK(decode.throughput->pct_of_peak == Approx(100.0 * decode.throughput->bytes_per_s / 1e9));
  CHECK(decode.timing->mode == "cold");

  const Row gather = test::timed_row(
      "streaming_llm/batch=1,q_heads=8,kv_heads=2,head_dim=64,kv_len=512,budget=128,n_sink=4,n_future=16/f32/s1",
                               peaks, *cpu);
  CHECK(gather.work->bound == Bound::copy);
  CHECK(gather.throughput->peak == "copy_bytes_per_s");
  CHECK(gather.throughput->pct_of_peak == Approx(100.0 * gather.throughput->bytes_per_s / 2e9));

  const Row prefill = test::timed_row("mha/prefill/batch=1,q_heads=2,head_dim=64,q_len=64,kv_len=64,causal=true,ragged=false,head_lengths=false/f32/s1", peaks, *cpu);
  CHECK(prefill.throughput->peak == "fp32_flops_per_s");
  CHECK(prefill.throughput->pct_of_peak == Approx(100.0 * prefill.throughput->flops_per_s / 1e12));
}

TEST_CASE("bf16 prefill on AMX tiles is judged against the tiles' rate, or fp32 where none was measured", "[cpu]") {
  auto cpu = test::open_backend("cpu", {});
  if (!cpu->probe().device.details.value("amx_bf16", false)) {
    WARN("skip: this CPU or its OS offers no AMX-BF16 tiles");
    return;
  }
  const std::string id = "mha/prefill/batch=1,q_heads=2,head_dim=64,q_len=64,kv_len=64,causal=true,ragged=false,head_lengths=false/bf16/s1";
  const Row with = test::timed_row(id, table({{"fp32_flops_per_s", 1e12}, {"amx_bf16_flops_per_s", 8e12}}), *cpu);
  CHECK(with.throughput->peak == "amx_bf16_flops_per_s");
  CHECK(with.throughput->pct_of_peak == Approx(100.0 * with.throughput->flops_per_s / 8e12));
  const Row without = test::timed_row(id, table({{"fp32_flops_per_s", 1e12}}), *cpu);
  CHECK(without.throughput->peak == "fp32_flops_per_s");
}
