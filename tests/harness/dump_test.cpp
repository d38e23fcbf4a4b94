// `dump`: the files hold the case's tensors, and docs/dump.md's numpy code (run with Debian's
// /usr/bin/python3 and numpy) regenerates an f32 input and a method's draws to the bit.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnbench/dump.h"
#include "attnbench/rng.h"
#include "attnbench/safetensors.h"
#include "support.h"

using namespace attnbench;

namespace {

// The ```python blocks of a Markdown file, concatenated.
std::string python_blocks(const std::string& path) {
  std::ifstream in(path);
  std::string line, code;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```python") inside = true;
    else if (inside && line == "```") inside = false;
    else if (inside) code += line + "\n";
  }
  return code;
}

}  // namespace

TEST_CASE("dump writes inputs and reference; numpy regenerates inputs and draws from docs/dump.md", "[unit]") {
  // A seed above 2^32 so both key words matter.
  const uint64_t seed = 0x100000007ull;
  const std::string id = "gqa/prefill/batch=1,q_heads=2,kv_heads=1,head_dim=64,q_len=64,kv_len=70,causal=true,ragged=false,head_lengths=false/f32/s" +
                         std::to_string(seed);
  const std::string dir = test::binary_path("dump_test");
  std::filesystem::remove_all(dir);
  DumpRequest req;
  req.case_id = id;
  req.out_dir = dir;
  const DumpResult res = dump_case(req);
  REQUIRE(res.files.size() == 2);
  const SafetensorsFile in = read_safetensors(dir + "/inputs.safetensors");
  CHECK(in.metadata.at("case_id") == id);
  CHECK(in.tensors.count("q") == 1);
  const SafetensorsFile ref = read_safetensors(dir + "/reference.safetensors");
  CHECK(ref.tensors.at("O").dtype() == DType::f64);

  std::ostringstream draws;
  for (uint64_t n : {0ull, 1ull, 5ull, 1000003ull}) draws << (n ? "," : "") << std::hexfloat << method_uniform(seed, "spec.race", n);
  const std::string script = dir + "/regenerate.py";
  {
    std::ofstream py(script);
    py << python_blocks(test::source_path("docs/dump.md")) << R"(
import sys
inputs, meta = load_safetensors(sys.argv[1] + "/inputs.safetensors")
seed = int(meta["seed"])
q = normal_tensor(seed, "q", inputs["q"].shape)
assert q.dtype == np.float32 and inputs["q"].dtype == np.float32
same = (q.view(np.uint32) == inputs["q"].view(np.uint32))
assert same.all(), "q differs at %d of %d elements" % ((~same).sum(), same.size)
want = [float.fromhex(x) for x in sys.argv[2].split(",")]
got = method_uniform(seed, "spec.race", np.array([0, 1, 5, 1000003], dtype=np.uint64))
assert [float(x) for x in got] == want, (list(got), want)
print("regenerated", q.size, "elements of q and 4 draws bit for bit")
)";
  }
  const std::string cmd = "/usr/bin/python3 " + script + " " + dir + " " + draws.str();
  INFO(cmd);
  CHECK(std::system(cmd.c_str()) == 0);
}
