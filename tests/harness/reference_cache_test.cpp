// The fp64 reference cache: an entry round-trips exactly (a sampled reference through its checked
// rows only); a different input hash, salt or a damaged file is a miss, never a stale hit; a
// dirty build's entries live in a per-run folder that the run removes.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "attnbench/reference_cache.h"
#include "attnbench/results.h"
#include "support.h"

using namespace attnbench;
namespace fs = std::filesystem;

namespace {

const char* kCase = "mha/prefill/batch=1,q_heads=2,head_dim=4,q_len=4,kv_len=4/f32/s1";

Reference sample_reference(bool sampled) {
  Reference ref;
  HostTensor o("O", DType::f64, {1, 2, 4, 4});  // 8 query rows of 4
  for (int64_t k = 0; k < o.numel(); ++k) o.set(k, 0.25 * static_cast<double>(k) - 1.0 / 3.0);
  ref.tensors.emplace("O", std::move(o));
  ref.total_rows = 8;
  ref.baseline_err["O"] = 1.5e-7;
  if (sampled) ref.checked_rows = {1, 6};
  return ref;
}

}  // namespace

TEST_CASE("a cached reference loads back bit for bit, sampled ones by their checked rows", "[unit]") {
  const std::string dir = test::scratch_dir("reference_cache_roundtrip");
  const Case c = test::case_from_id(kCase);
  const ReferenceCache cache(dir, "commit-a");
  for (bool sampled : {false, true}) {
    INFO("sampled " << sampled);
    const Reference ref = sample_reference(sampled);
    cache.store(c, sampled ? "inputs-2" : "inputs-1", ref);
    Reference back;
    REQUIRE(cache.load(c, sampled ? "inputs-2" : "inputs-1", back));
    CHECK(back.checked_rows == ref.checked_rows);
    CHECK(back.total_rows == 8);
    CHECK(back.baseline_err.at("O") == 1.5e-7);
    const HostTensor& got = back.tensors.at("O");
    const HostTensor& want = ref.tensors.at("O");
    REQUIRE(got.shape() == want.shape());
    for (int64_t k = 0; k < got.numel(); ++k) {
      const int64_t row = k / 4;
      const bool kept = !sampled || row == 1 || row == 6;
      if (kept) CHECK(got.get(k) == want.get(k));
      else CHECK(std::isnan(got.get(k)));  // rows outside the sample are never compared
    }
  }
}

TEST_CASE("another input hash, another build or a damaged entry is a miss", "[unit]") {
  const std::string dir = test::scratch_dir("reference_cache_miss");
  const Case c = test::case_from_id(kCase);
  const ReferenceCache a(dir, "commit-a"), b(dir, "commit-b");
  a.store(c, "inputs-1", sample_reference(false));
  Reference out;
  CHECK(a.load(c, "inputs-1", out));
  CHECK_FALSE(a.load(c, "inputs-2", out));
  CHECK_FALSE(b.load(c, "inputs-1", out));
  CHECK(a.holds(c));
  CHECK_FALSE(b.holds(c));
  std::ofstream(a.path_for(c), std::ios::trunc) << "not safetensors";
  CHECK_FALSE(a.load(c, "inputs-1", out));
}

TEST_CASE("a dirty build's entries stay in their run's folder and go with it", "[unit]") {
  const std::string dir = test::scratch_dir("reference_cache_per_run");
  const Case c = test::case_from_id(kCase);
  const ReferenceCache clean(dir, "commit-a"), run(dir, "commit-a-dirty-42-7");
  CHECK_FALSE(clean.per_run());
  REQUIRE(run.per_run());
  clean.store(c, "inputs-1", sample_reference(false));
  run.store(c, "inputs-1", sample_reference(false));
  const fs::path entry = run.path_for(c);
  CHECK(entry.parent_path() != fs::path(dir));
  CHECK(fs::exists(entry));
  // A worker of the same run (given the salt) finds the parent's entry.
  Reference out;
  CHECK(ReferenceCache(dir, run.salt()).load(c, "inputs-1", out));
  run.remove_run_entries();
  CHECK_FALSE(fs::exists(entry.parent_path()));
  clean.remove_run_entries();  // a clean build's entries are kept across runs
  CHECK(clean.load(c, "inputs-1", out));
}

TEST_CASE("a damaged entry is discarded and rebuilt, never served", "[unit]") {
  const std::string dir = test::scratch_dir("reference_cache_damage");
  const Case c = test::case_from_id(kCase);
  const ReferenceCache cache(dir, "commit-a");
  // Where the damage goes: the file is [8-byte header length][header][O's doubles][__checked_rows' i32s].
  struct Damage {
    std::string what;
    bool sampled;
    std::function<void(std::string&, size_t data_start)> apply;
  };
  const std::vector<Damage> damages = {
      {"one flipped byte in the middle of O", false, [](std::string& f, size_t d) { f[d + 37] ^= 0x40; }},
      {"the lowest mantissa bit of O's first element", false, [](std::string& f, size_t d) { f[d] ^= 0x01; }},
      {"a sampled-row index far out of range", true, [](std::string& f, size_t) { f[f.size() - 2] = 0x7f; }},
      {"a file cut short", false, [](std::string& f, size_t) { f.resize(f.size() - 9); }},
  };
  for (const auto& d : damages) {
    INFO(d.what);
    cache.store(c, "inputs-1", sample_reference(d.sampled));
    const std::string path = cache.path_for(c);
    std::string bytes;
    {
      std::ifstream f(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    uint64_t header = 0;
    for (int i = 0; i < 8; ++i) header |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    d.apply(bytes, 8 + header);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    Reference out;
    CHECK_FALSE(cache.holds(c));
    CHECK_FALSE(fs::exists(path));  // discarded, so the caller rebuilds it
    cache.store(c, "inputs-1", sample_reference(d.sampled));
    CHECK(cache.load(c, "inputs-1", out));
  }
}

TEST_CASE("a run reports a damaged entry once, rebuilds it and passes", "[unit]") {
  if (build_info().git_dirty) {  // a dirty build keeps its entries for one run only: nothing to damage
    WARN("a build from a dirty tree: the damaged-entry run is not exercised");
    return;
  }
  const std::string dir = test::scratch_dir("reference_cache_damage_run");
  const std::string args = " check suites/smoke.json --backends cpu --quiet --filter 'mha/decode.*f32' --cache-dir " + dir;
  REQUIRE(test::run_cli(args).exit_code == 0);
  std::vector<fs::path> entries;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".safetensors") entries.push_back(e.path());
  REQUIRE(!entries.empty());
  for (const auto& p : entries) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x55');
  }
  const auto r = test::run_cli(args);
  CHECK(r.exit_code == 0);
  int reports = 0;
  for (size_t at = r.output.find("is damaged"); at != std::string::npos; at = r.output.find("is damaged", at + 1)) ++reports;
  CHECK(reports == static_cast<int>(entries.size()));  // each once, from the parent, however many workers read it
  CHECK_THAT(r.output, Catch::Contains("checksum mismatch"));
  for (const auto& p : entries) CHECK(fs::exists(p));  // rebuilt
}
