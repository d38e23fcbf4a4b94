// The fp64 reference of tree_decode (attention over a draft tree, attention_common.h tree_mask):
// its mask is tree_mask's, a chain is gqa's causal attention to the bit, a star row sees the
// prefix, the root and itself (computed by hand), the check refuses attention that ignores the
// tree, and what work, baseline and the rules say.
#include <catch2/catch.hpp>

#include <cmath>
#include <variant>
#include <vector>

#include "attnbench/cases.h"
#include "attnbench/execute.h"
#include "attnbench/method.h"
#include "reference/attention/attention_common.h"
#include "reference/decoding/tree_build.h"
#include "reference/decoding/tree_gen.h"
#include "support.h"

using namespace attnbench;

TEST_CASE("tree_decode's mask is tree_mask's bits of the seeded tree; positions follow the depths", "[unit]") {
  const Case c = parse_case_id(
      "tree_decode/decode/batch=3,q_heads=4,kv_heads=2,head_dim=8,nodes=40,prefix=50,max_depth=5,ragged=true,rope_layout=half/f32/s4");
  const TensorMap in = c.method->inputs(c);
  const HostTensor &mask = in.at("tree_mask"), &len = in.at("kv_len"), &qp = in.at("q_positions"), &kp = in.at("k_positions");
  REQUIRE(mask.shape() == std::vector<int64_t>{3, 40, 2});
  CHECK(len.get(0) == 90);
  for (int64_t b = 0; b < 3; ++b) {
    const auto n = static_cast<int64_t>(len.get(b));
    REQUIRE((n >= 40 && n <= 90));
    const decoding::TreeLayout t =
        decoding::tree_layout(decoding::tree_parents("random", 40, 5, c.seed, b), n - 40, 5);
    for (int64_t x = 0; x < 80; ++x) CHECK(static_cast<uint32_t>(mask.data<int32_t>()[b * 80 + x]) == t.mask[x]);
    for (int64_t i = 0; i < 40; ++i) {
      CHECK(qp.get(b * 40 + i) == t.position_ids[i]);
      CHECK(kp.get(b * 90 + n - 40 + i) == t.position_ids[i]);
    }
    for (int64_t j = 0; j < n - 40; ++j) CHECK(kp.get(b * 90 + j) == static_cast<double>(j));
    for (int64_t j = n; j < 90; ++j) CHECK(std::isnan(in.at("k").get((b * 2 * 90 + j) * 8)));
  }
}

TEST_CASE("tree_decode over a chain is gqa's causal attention, to the bit", "[unit]") {
  const Case t = parse_case_id("tree_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=16,nodes=9,prefix=30,max_depth=8,shape=chain/bf16/s2");
  const Case g = parse_case_id("gqa/decode/batch=2,q_heads=8,kv_heads=2,head_dim=16,q_len=9,kv_len=39/bf16/s2");
  const TensorMap tin = t.method->inputs(t), gin = g.method->inputs(g);
  for (const char* name : {"q", "k", "v", "kv_len"}) {
    int64_t differ = 0;
    for (int64_t i = 0; i < tin.at(name).numel(); ++i) differ += !(tin.at(name).get(i) == gin.at(name).get(i) ||
                                                                   (std::isnan(tin.at(name).get(i)) && std::isnan(gin.at(name).get(i))));
    CHECK(differ == 0);
  }
  const Reference a = t.method->reference(t, tin), b = g.method->reference(g, gin);
  for (const char* name : {"O", "LSE"}) {
    int64_t differ = 0;
    for (int64_t i = 0; i < a.tensors.at(name).numel(); ++i) differ += a.tensors.at(name).get(i) != b.tensors.at(name).get(i);
    CHECK(differ == 0);
    CHECK(a.baseline_err.at(name) == b.baseline_err.at(name));
  }
}

TEST_CASE("tree_decode over a star: each node sees the prefix, the root and itself", "[unit]") {
  // head_dim 1 (scale 1), one head, prefix 2, 4 nodes (root 0, leaves 1..3): keys 0..5, v_j = j.
  const Case c = parse_case_id("tree_decode/decode/batch=1,q_heads=1,kv_heads=1,head_dim=1,nodes=4,prefix=2,shape=star/f32/s1");
  TensorMap in = c.method->inputs(c);
  const std::vector<double> q = {0.5, -1.0, 0.25, 2.0}, k = {1.0, -0.5, 0.75, 2.0, -1.5, 0.5};
  for (int64_t i = 0; i < 4; ++i) in.at("q").set(i, q[i]);
  for (int64_t j = 0; j < 6; ++j) {
    in.at("k").set(j, k[j]);
    in.at("v").set(j, static_cast<double>(j));
  }
  const Reference ref = c.method->reference(c, in);
  for (int64_t i = 0; i < 4; ++i) {
    std::vector<int64_t> seen = {0, 1, 2};  // the prefix and the root (key 2)
    if (i > 0) seen.push_back(2 + i);
    double num = 0, den = 0;
    for (int64_t j : seen) {
      const double e = std::exp(q[i] * k[j]);
      num += e * static_cast<double>(j);
      den += e;
    }
    CHECK(ref.tensors.at("O").get(i) == Approx(num / den).epsilon(1e-12));
    CHECK(ref.tensors.at("LSE").get(i) == Approx(std::log(den)).epsilon(1e-12));
  }
}

TEST_CASE("the check refuses tree attention that ignores the mask (plain causal attention)", "[unit]") {
  const Case c = parse_case_id("tree_decode/decode/batch=2,q_heads=8,kv_heads=2,head_dim=64,nodes=61,prefix=300,max_depth=6/bf16/s6");
  const CaseData data = prepare_case_data(c);
  CHECK(c.method->check(c, data.inputs, data.ref, test::reference_as_outputs(c, data.ref)).pass());
  TensorMap causal;
  for (const auto& [name, t] : data.inputs) causal.emplace(name, t.clone());
  causal.at("tree_mask").fill(-1.0);  // every bit: each node sees every earlier node
  CHECK_FALSE(c.method->check(c, data.inputs, data.ref, test::reference_as_outputs(c, c.method->reference(c, causal))).pass());
}

TEST_CASE("tree_decode's work counts each node's ancestors and the mask; its baseline is gqa over the same cache", "[unit]") {
  const Case star = parse_case_id("tree_decode/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,nodes=61,prefix=1000,shape=star/bf16/s1");
  // Each node sees 1000 prefix keys, the root and itself (the root only itself).
  CHECK(star.method->work(star).flops == 4.0 * 128 * 32 * (61 * 1000 + 1 + 60 * 2));
  const Case chain =
      parse_case_id("tree_decode/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,nodes=61,prefix=1000,max_depth=60,shape=chain/bf16/s1");
  const Case causal = parse_case_id("gqa/decode/batch=1,q_heads=32,kv_heads=8,head_dim=128,q_len=61,kv_len=1061/bf16/s1");
  CHECK(chain.method->work(chain).flops == causal.method->work(causal).flops);
  // The same bytes, and the mask's bit rows: 61 rows of two words.
  CHECK(chain.method->work(chain).bytes == causal.method->work(causal).bytes + 4.0 * 61 * 2);
  for (const auto& [id, phase] : {std::pair<const char*, const char*>{"nodes=61", "decode"}, {"nodes=100", "prefill"}}) {
    const Case c = parse_case_id(std::string("tree_decode/decode/batch=2,q_heads=32,kv_heads=8,head_dim=128,") + id +
                                 ",prefix=2048,ragged=true/bf16/s1");
    const auto base = c.method->baseline(c);
    REQUIRE(base);
    CHECK(base->method == "gqa");
    CHECK(base->phase == phase);
    CHECK(std::get<int64_t>(base->params.at("kv_len")) == 2048 + c.i64("nodes"));
    CHECK(std::get<int64_t>(base->params.at("q_len")) == c.i64("nodes"));
    CHECK(std::get<bool>(base->params.at("ragged")));
    CHECK(!base->params.count("shape"));
  }
}

TEST_CASE("tree_decode refuses what a tree's positions cannot mean", "[unit]") {
  CHECK_THROWS_WITH(parse_case_id("tree_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,nodes=10,prefix=4,shape=chain/f32/s1"),
                    Catch::Contains("beyond max_depth"));
  CHECK_THROWS_WITH(parse_case_id("tree_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,nodes=10,prefix=4,alibi=true/f32/s1"),
                    Catch::Contains("alibi"));
  CHECK_THROWS_WITH(parse_case_id("tree_decode/decode/batch=1,q_heads=2,kv_heads=1,head_dim=8,nodes=10,prefix=4,rope_layout=half,"
                                  "rope_positions=scattered/f32/s1"),
                    Catch::Contains("scattered"));
  CHECK_THROWS(parse_case_id("tree_decode/prefill/batch=1,q_heads=2,kv_heads=1,head_dim=8,nodes=10,prefix=4/f32/s1"));
}
