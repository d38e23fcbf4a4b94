// safetensors: written and read back bit for bit; malformed files are clear input errors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "attnbench/error.h"
#include "attnbench/safetensors.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("safetensors: every dtype round-trips with its metadata", "[unit]") {
  TensorMap t;
  const DType types[] = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i8, DType::u8};
  int k = 0;
  for (DType d : types) {
    const std::string name = "t" + std::to_string(k++);
    HostTensor x(name, d, {2, 3, static_cast<int64_t>(k)});
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, dtype_is_float(d) ? 0.5 * static_cast<double>(i) - 3.25 : static_cast<double>(i % 100));
    t.emplace(name, std::move(x));
  }
  t.emplace("empty", HostTensor("empty", DType::f32, {0, 4}));
  const std::string path = test::binary_path("safetensors_roundtrip.safetensors");
  write_safetensors(path, t, {{"case_id", "x/y"}, {"seed", "7"}});
  const SafetensorsFile f = read_safetensors(path);
  CHECK(f.metadata.at("case_id") == "x/y");
  REQUIRE(f.tensors.size() == t.size());
  for (const auto& [name, x] : t) {
    const HostTensor& y = f.tensors.at(name);
    CHECK(y.dtype() == x.dtype());
    CHECK(y.shape() == x.shape());
    CHECK(y.hash() == x.hash());
  }
  // The header is padded to a multiple of 8, so the data is aligned.
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  in.read(reinterpret_cast<char*>(len), 8);
  CHECK(len[0] % 8 == 0);
  std::remove(path.c_str());
}

TEST_CASE("safetensors: malformed files are input errors", "[unit]") {
  const std::string path = test::binary_path("safetensors_bad.safetensors");
  const auto write_raw = [&](const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  write_raw("abc");
  CHECK_THROWS_AS(read_safetensors(path), InputError);
  const std::string header = R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  std::string len(8, '\0');
  len[0] = static_cast<char>(header.size());
  write_raw(len + header + std::string(8, '\0'));  // 8 data bytes, 16 declared
  CHECK_THROWS_WITH(read_safetensors(path), Catch::Contains("data_offsets"));
  const std::string bad_type = R"({"x":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})";
  len[0] = static_cast<char>(bad_type.size());
  write_raw(len + bad_type + std::string(8, '\0'));
  CHECK_THROWS_WITH(read_safetensors(path), Catch::Contains("C64"));
  CHECK_THROWS_AS(read_safetensors(path + ".missing"), InputError);
  std::remove(path.c_str());
}
