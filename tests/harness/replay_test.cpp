// Replayed inputs (replay.h): a suite case reads inputs from a .safetensors file bit for bit,
// names the file by its hash in the case id, maps names and converts dtypes once, and a file that
// does not fit the case's parameters is one clear error naming the tensor.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "attnbench/error.h"
#include "attnbench/hash.h"
#include "attnbench/inputs.h"
#include "attnbench/replay.h"
#include "attnbench/safetensors.h"
#include "attnbench/suite.h"
#include "support.h"

using namespace attnbench;

namespace {

const std::string kSnapkvShape = "snapkv/batch=1,q_heads=4,kv_heads=2,head_dim=64,kv_len=128,obs_window=16,budget=32,n_future=8/bf16/";
const std::string kSnapkv = kSnapkvShape + "s1";

// A folder of this test's own, emptied.
std::string fresh_dir(const std::string& name) {
  const std::string dir = test::binary_path(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return hex64(hash64(bytes.data(), bytes.size()));
}

std::string snapkv_entry(const std::string& extra) {
  return R"({"method": "snapkv", "dtype": "bf16", "seed": 2, "inputs": "capture.safetensors",
             "params": {"batch": 1, "q_heads": 4, "kv_heads": 2, "head_dim": 64, "obs_window": 16, "n_future": 8, )" +
         extra + "}}";
}

}  // namespace

TEST_CASE("replay: a suite case reads the file's tensors bit for bit, named by the file's hash", "[unit]") {
  const std::string dir = fresh_dir("replay_test/bits");
  // Seed 1's generated inputs, as a file, stand in for seed 2's: every tensor's bits come back.
  const TensorMap captured = case_inputs(parse_case_id(kSnapkv));
  const std::string file = dir + "/capture.safetensors";
  write_safetensors(file, captured, {{"model_id", "test-model"}, {"layer", "3"}});
  const std::string hash = file_hash(file);
  const Suite suite = load_suite(write_text(
      dir + "/suite.json", R"({"name": "r", "cases": [)" + snapkv_entry(R"("kv_len": 128, "budget": [32, 64])") + "]}"));
  REQUIRE(suite.cases.size() == 2);
  for (const PlannedCase& pc : suite.cases) {
    const std::string id = pc.c.id();
    CHECK(id.substr(id.size() - 19) == "s2@" + hash);
    REQUIRE(pc.c.source);
    CHECK(pc.c.source->path == file);  // relative to the suite's folder
    CHECK(pc.c.source->to_json()["metadata"]["model_id"] == "test-model");
    const TensorMap in = case_inputs(pc.c);
    CHECK(in.size() == captured.size());
    for (const auto& [name, t] : captured) CHECK(in.at(name).hash() == t.hash());

    // The id travels (a worker, a rerun) and finds its file again; without it, the case says so.
    const Case parsed = parse_case_id(id);
    CHECK(parsed.id() == id);
    CHECK_THROWS_WITH(case_inputs(parsed), Catch::Contains("name the file (--inputs FILE)"));
    CHECK(with_source(parsed, open_input_source(file)).id() == id);
  }
  // Another file under the id's hash is refused.
  write_safetensors(dir + "/other.safetensors", case_inputs(parse_case_id(kSnapkvShape + "s3")));
  CHECK_THROWS_WITH(with_source(parse_case_id(suite.cases[0].c.id()), open_input_source(dir + "/other.safetensors")),
                    Catch::Contains("ran on the inputs file with hash " + hash));
  CHECK_THROWS_WITH(parse_case_id(kSnapkv + "@12345"), Catch::Contains("16 lowercase hex digits"));
}

TEST_CASE("replay: a file that does not fit is an error naming the tensor, or a skip in a product", "[unit]") {
  const std::string dir = fresh_dir("replay_test/misfit");
  write_safetensors(dir + "/capture.safetensors", case_inputs(parse_case_id(kSnapkv)));
  // One case: bad input, naming the tensor, the file's shape and the case's.
  CHECK_THROWS_WITH(load_suite(write_text(dir + "/one.json", R"({"name": "r", "cases": [)" +
                                                                  snapkv_entry(R"("kv_len": 256, "budget": 32)") + "]}")),
                    Catch::Contains("tensor \"k\" is [1,2,128,64] in the file; the case's parameters make [1,2,256,64]"));
  // A product: the suite loads; the misfit case is skipped with that reason when it runs.
  const Suite s = load_suite(write_text(dir + "/product.json", R"({"name": "r", "cases": [)" +
                                                                    snapkv_entry(R"("kv_len": [128, 256], "budget": 32)") + "]}"));
  REQUIRE(s.cases.size() == 2);
  CHECK_NOTHROW(case_inputs(s.cases[0].c));
  CHECK_THROWS_AS(case_inputs(s.cases[1].c), ReplayMismatch);  // what the runner turns into a skipped row
  CHECK_THROWS_WITH(case_inputs(s.cases[1].c), Catch::Contains("tensor \"k\" is [1,2,128,64]"));
  // A missing file, and a mapping to a tensor the file lacks.
  CHECK_THROWS_WITH(open_input_source(dir + "/absent.safetensors"), Catch::Contains("cannot open the inputs file"));
  CHECK_THROWS_WITH(open_input_source("/dev/zero"), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(open_input_source(dir + "/capture.safetensors", {{"q", "q_last"}}),
                    Catch::Contains("input \"q\" is mapped to tensor \"q_last\", which the file does not hold"));
  // A file that holds none of a method's inputs.
  const Case sampler = with_source(parse_case_id("sampling/batch=2,vocab=1000/f32/s1"), open_input_source(dir + "/capture.safetensors"));
  CHECK_THAT(replay_mismatch(sampler, sampler.method->inputs(sampler)), Catch::Contains("holds none of the case's inputs"));
}

TEST_CASE("replay: input_tensors maps names, and values convert once to the input's dtype", "[unit]") {
  const std::string dir = fresh_dir("replay_test/map");
  // An f32 query block and a bf16 cache: gqa's prefill reads q from "q_window", rounded once to bf16.
  TensorMap file = case_inputs(parse_case_id(kSnapkv));
  HostTensor window = normal_tensor("q_window", DType::f32, {1, 4, 16, 64}, 7);
  file.emplace("q_window", window.clone());
  write_safetensors(dir + "/capture.safetensors", file);
  const Suite suite = load_suite(write_text(dir + "/suite.json", R"({"name": "r", "cases": [
      {"method": "gqa", "phase": "prefill", "dtype": "bf16", "inputs": "capture.safetensors", "input_tensors": {"q": "q_window"},
       "params": {"batch": 1, "q_heads": 4, "kv_heads": 2, "head_dim": 64, "q_len": 16, "kv_len": 128}}]})"));
  REQUIRE(suite.cases.size() == 1);
  const TensorMap in = case_inputs(suite.cases[0].c);
  const HostTensor& q = in.at("q");
  REQUIRE(q.dtype() == DType::bf16);
  for (int64_t i = 0; i < q.numel(); ++i) REQUIRE(q.get(i) == round_to(DType::bf16, window.get(i)));
  CHECK(in.at("k").hash() == file.at("k").hash());
  CHECK(in.at("v").hash() == file.at("v").hash());
}
