// mla's fp64 reference (the absorbed algebra) against the naive form computed explicitly in fp64 —
// every head's K and V decompressed from the latent, then softmax attention — and the shapes of
// its outputs and inputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnbench/caseid.h"
#include "attnbench/method.h"
#include "reference/attention/mla_common.h"

using namespace attnbench;

namespace {

// O and LSE of the naive form in fp64, straight from the definition in mla_common.h.
void naive_fp64(const Case& c, const TensorMap& in, std::vector<double>& o, std::vector<double>& lse) {
  const mla::MlaParams s = mla::mla_params(c);
  const HostTensor &q = in.at("q"), &lat = in.at("kv_latent"), &w_uk = in.at("w_uk"), &w_uv = in.at("w_uv");
  const int64_t qk = s.nope + s.rope, L = s.rank + s.rope;
  o.assign(int64_t{s.batch} * s.heads * s.q_len * s.v_dim, 0.0);
  lse.assign(int64_t{s.batch} * s.heads * s.q_len, 0.0);
  for (int64_t b = 0; b < s.batch; ++b) {
    const auto len = static_cast<int64_t>(in.at("kv_len").get(b));
    for (int64_t h = 0; h < s.heads; ++h) {
      std::vector<double> k(len * qk, 0.0), v(len * s.v_dim, 0.0);
      for (int64_t t = 0; t < len; ++t) {
        for (int64_t n = 0; n < s.nope; ++n)
          for (int64_t x = 0; x < s.rank; ++x) k[t * qk + n] += w_uk.get((h * s.nope + n) * s.rank + x) * lat.get((b * s.kv_cap + t) * L + x);
        for (int64_t x = 0; x < s.rope; ++x) k[t * qk + s.nope + x] = lat.get((b * s.kv_cap + t) * L + s.rank + x);
        for (int64_t d = 0; d < s.v_dim; ++d)
          for (int64_t x = 0; x < s.rank; ++x) v[t * s.v_dim + d] += w_uv.get((h * s.v_dim + d) * s.rank + x) * lat.get((b * s.kv_cap + t) * L + x);
      }
      for (int64_t i = 0; i < s.q_len; ++i) {
        const int64_t row = (b * s.heads + h) * s.q_len + i;
        const int64_t end = s.causal ? std::clamp<int64_t>(len - s.q_len + i + 1, 0, len) : len;
        if (end == 0) {
          lse[row] = -INFINITY;
          continue;
        }
        std::vector<double> sc(end);
        double m = -INFINITY;
        for (int64_t t = 0; t < end; ++t) {
          double dot = 0;
          for (int64_t x = 0; x < qk; ++x) dot += q.get(row * qk + x) * k[t * qk + x];
          sc[t] = dot / std::sqrt(static_cast<double>(qk));
          m = std::max(m, sc[t]);
        }
        double l = 0;
        for (int64_t t = 0; t < end; ++t) {
          const double p = std::exp(sc[t] - m);
          l += p;
          for (int64_t d = 0; d < s.v_dim; ++d) o[row * s.v_dim + d] += p * v[t * s.v_dim + d];
        }
        for (int64_t d = 0; d < s.v_dim; ++d) o[row * s.v_dim + d] /= l;
        lse[row] = m + std::log(l);
      }
    }
  }
}

}  // namespace

TEST_CASE("mla: the absorbed algebra of the reference equals the naive form in fp64", "[unit]") {
  for (const char* id : {"mla/decode/batch=2,heads=4,kv_len=40,kv_lora_rank=48,qk_rope_head_dim=8,qk_nope_head_dim=16,v_head_dim=24,"
                         "ragged=true/f32/s1",
                         "mla/prefill/batch=1,heads=3,q_len=9,kv_len=12,kv_lora_rank=32,qk_rope_head_dim=0,qk_nope_head_dim=8,"
                         "v_head_dim=8,form=naive/bf16/s2",
                         "mla/prefill/batch=1,heads=2,q_len=5,kv_len=5,kv_lora_rank=16,qk_rope_head_dim=4,qk_nope_head_dim=4,"
                         "v_head_dim=12,causal=false/f16/s3"}) {
    INFO(id);
    const Case c = parse_case_id(id);
    const TensorMap in = c.method->inputs(c);
    const Reference ref = c.method->reference(c, in);
    std::vector<double> o, lse;
    naive_fp64(c, in, o, lse);
    const HostTensor &ro = ref.tensors.at("O"), &rl = ref.tensors.at("LSE");
    REQUIRE(ro.numel() == static_cast<int64_t>(o.size()));
    for (int64_t x = 0; x < ro.numel(); ++x) CHECK(ro.get(x) == Approx(o[x]).margin(1e-12));
    for (int64_t x = 0; x < rl.numel(); ++x) CHECK(rl.get(x) == Approx(lse[x]).margin(1e-12));
  }
}

TEST_CASE("mla: both forms share inputs and reference; absorbed is measured against naive", "[unit]") {
  const Case a = parse_case_id("mla/decode/batch=1,heads=4,kv_len=30,kv_lora_rank=32,qk_nope_head_dim=16,v_head_dim=16/bf16/s1");
  const Case n = parse_case_id("mla/decode/batch=1,heads=4,kv_len=30,kv_lora_rank=32,qk_nope_head_dim=16,v_head_dim=16,form=naive/bf16/s1");
  const TensorMap ia = a.method->inputs(a), in = n.method->inputs(n);
  for (const char* name : {"q", "kv_latent", "w_uk", "w_uv", "kv_len"}) {
    INFO(name);
    REQUIRE(ia.at(name).numel() == in.at(name).numel());
    bool same = true;
    for (int64_t x = 0; x < ia.at(name).numel(); ++x) {
      const double u = ia.at(name).get(x), v = in.at(name).get(x);
      same = same && (u == v || (std::isnan(u) && std::isnan(v)));
    }
    CHECK(same);
  }
  const auto base = a.method->baseline(a);
  REQUIRE(base);
  CHECK(base->method == "mla");
  CHECK(std::get<std::string>(base->params.at("form")) == "naive");
  CHECK_FALSE(n.method->baseline(n));
  const Json q = a.method->quality(a, ia, {});
  CHECK(q["kv_bytes_per_token"].get<double>() == (32 + 64) * 2);
  CHECK(q["mha_kv_bytes_per_token"].get<double>() == 4.0 * (16 + 64 + 16) * 2);
}
