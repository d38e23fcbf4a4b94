#include "merged_slots.h"

#include "attnbench/check.h"
#include "attnbench/thread_pool.h"

namespace attnbench::kvcomp {

std::vector<OutputDecl> merged_slot_outputs(const SelectionParams& s, int64_t slots, DType dtype) {
  const int64_t B = s.batch, H = s.kv_heads, d = s.head_dim;
  OutputDecl k{"k_merged", dtype, {B, H, slots, d}, CheckClass::TOL};
  k.doc = "k_merged [batch, kv_heads, merged, head_dim]: the mean key of each group of evicted tokens";
  OutputDecl v{"v_merged", dtype, {B, H, slots, d}, CheckClass::TOL};
  v.doc = "v_merged [batch, kv_heads, merged, head_dim]: the mean value of each group";
  OutputDecl w{"w_merged", DType::f32, {B, H, slots}, CheckClass::EXACT};
  w.doc = "w_merged [batch, kv_heads, merged]: the tokens each slot stands for (0: an empty group)";
  return {k, v, w};
}

TensorMap merge_evicted(const SelectionParams& s, int64_t slots, const TensorMap& in, const HostTensor& kept_idx,
                        const HostTensor& kept_len, bool fp32_baseline, DType dtype) {
  const int64_t B = s.batch, H = s.kv_heads, d = s.head_dim, T = s.kv_len, cap = s.capacity;
  HostTensor km("k_merged", DType::f64, {B, H, slots, d}), vm("v_merged", DType::f64, {B, H, slots, d});
  HostTensor wm("w_merged", DType::f32, {B, H, slots});
  harness_pool().parallel_for(B * H, [&](int64_t begin, int64_t end) {
    std::vector<char> kept(T);
    std::vector<int64_t> evicted;
    std::vector<double> row(d), sk(d), sv(d);
    std::vector<float> fk(d), fv(d), row32(d);
    for (int64_t r = begin; r < end; ++r) {
      std::fill(kept.begin(), kept.end(), 0);
      const auto n = static_cast<int64_t>(kept_len.get(r));
      for (int64_t i = 0; i < std::min(n, cap); ++i) {
        const double j = kept_idx.get(r * cap + i);
        if (j >= 0 && j < static_cast<double>(T)) kept[static_cast<int64_t>(j)] = 1;
      }
      evicted.clear();
      for (int64_t j = 0; j < T; ++j)
        if (!kept[j]) evicted.push_back(j);
      const int64_t n_ev = static_cast<int64_t>(evicted.size()), q = n_ev / slots, rem = n_ev % slots;
      int64_t at = 0;
      for (int64_t m = 0; m < slots; ++m) {
        const int64_t len = q + (m < rem ? 1 : 0);
        std::fill(sk.begin(), sk.end(), 0.0);
        std::fill(sv.begin(), sv.end(), 0.0);
        std::fill(fk.begin(), fk.end(), 0.0f);
        std::fill(fv.begin(), fv.end(), 0.0f);
        for (int64_t i = at; i < at + len; ++i) {
          const int64_t src = (r * T + evicted[i]) * d;
          in.at("k").get_row(src, d, row.data());
          in.at("k").get_row(src, d, row32.data());
          for (int64_t x = 0; x < d; ++x) sk[x] += row[x], fk[x] += row32[x];
          in.at("v").get_row(src, d, row.data());
          in.at("v").get_row(src, d, row32.data());
          for (int64_t x = 0; x < d; ++x) sv[x] += row[x], fv[x] += row32[x];
        }
        at += len;
        const int64_t dst = (r * slots + m) * d;
        for (int64_t x = 0; x < d; ++x) {
          const double mk = len ? sk[x] / static_cast<double>(len) : 0.0, mv = len ? sv[x] / static_cast<double>(len) : 0.0;
          const float bk = len ? fk[x] / static_cast<float>(len) : 0.0f, bv = len ? fv[x] / static_cast<float>(len) : 0.0f;
          km.set(dst + x, fp32_baseline ? round_to(dtype, bk) : mk);
          vm.set(dst + x, fp32_baseline ? round_to(dtype, bv) : mv);
        }
        wm.set(r * slots + m, static_cast<double>(len));
      }
    }
  });
  TensorMap out;
  out.emplace("k_merged", std::move(km));
  out.emplace("v_merged", std::move(vm));
  out.emplace("w_merged", std::move(wm));
  return out;
}

std::vector<OutputCheck> check_merged_slots(const SelectionParams& s, int64_t slots, DType dtype, const TensorMap& in,
                                            const TensorMap& got) {
  const std::vector<OutputDecl> decls = merged_slot_outputs(s, slots, dtype);
  const TensorMap want = merge_evicted(s, slots, in, got.at("kept_idx"), got.at("kept_len"), false, dtype);
  const TensorMap base = merge_evicted(s, slots, in, got.at("kept_idx"), got.at("kept_len"), true, dtype);
  std::vector<OutputCheck> checks;
  for (int i = 0; i < 2; ++i) {
    const std::string& name = decls[i].name;
    checks.push_back(check_tol(decls[i], want.at(name), got.at(name), max_abs_diff(want.at(name), base.at(name))));
  }
  checks.push_back(check_exact(decls[2], want.at("w_merged"), got.at("w_merged"), nullptr));
  return checks;
}

}  // namespace attnbench::kvcomp
