#include "compacted_cache.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/check_set.h"
#include "attnbench/error.h"
#include "attnbench/thread_pool.h"

namespace attnbench::kvcomp {

void add_cache_params(ParamSchema& schema) {
  schema.add({"batch", ParamType::Int, Value(int64_t{1}), {}, 1.0, 4096.0, {}, "sequences in the batch"});
  schema.add({"q_heads", ParamType::Int, Value(int64_t{8}), {}, 1.0, 1024.0, {}, "query heads"});
  schema.add({"kv_heads", ParamType::Int, Value(int64_t{2}), {}, 1.0, 1024.0, {}, "KV heads, each compressed independently"});
  schema.add({"head_dim", ParamType::Int, Value(int64_t{128}), {}, 1.0, 512.0, {}, "dimension of each head"});
  schema.add({"kv_len", ParamType::Int, Value(int64_t{2048}), {}, 1.0, 1e7, {}, "prompt tokens in the cache"});
  schema.rule("q_heads % kv_heads == 0", [](const Params& p, const std::string&) -> std::string {
    if (p.i64("q_heads") % p.i64("kv_heads") == 0) return {};
    return cat("kv_heads=", p.i64("kv_heads"), " does not divide q_heads=", p.i64("q_heads"));
  });
}

std::vector<OutputDecl> compacted_cache_outputs(const CompactedCache& s, DType dtype, CheckClass selection) {
  OutputDecl idx{"kept_idx", DType::i32, {s.batch, s.kv_heads, s.capacity}, selection, "kept_len", 2, -1.0,
                 Order::ascending};
  idx.doc = "kept_idx [batch, kv_heads, capacity]: kept token indices, ascending; -1 beyond kept_len";
  OutputDecl len{"kept_len", DType::i32, {s.batch, s.kv_heads}, CheckClass::EXACT};
  len.doc = s.ragged_rows ? "kept_len [batch, kv_heads]: tokens each (sequence, KV head) keeps"
                          : "kept_len [batch, kv_heads]: min(budget, kv_len)";
  OutputDecl kk{"k_kept", dtype, {s.batch, s.kv_heads, s.capacity, s.head_dim}, selection, "kept_len", 2, 0.0};
  kk.doc = "k_kept [batch, kv_heads, capacity, head_dim]: k at kept_idx; 0 beyond kept_len";
  OutputDecl vk = kk;
  vk.name = "v_kept";
  vk.doc = "v_kept [batch, kv_heads, capacity, head_dim]: v at kept_idx; 0 beyond kept_len";
  return {idx, len, kk, vk};
}

CheckReport check_compacted_cache(const std::vector<OutputDecl>& decls, const TensorMap& in,
                                  const TensorMap& got, OutputCheck kept_len_check, OutputCheck kept_idx_check) {
  const HostTensor &idx = got.at("kept_idx"), &len = got.at("kept_len");
  CheckReport report;
  report.outputs.push_back(std::move(kept_len_check));
  report.outputs.push_back(std::move(kept_idx_check));
  report.outputs.push_back(check_gather(decls[2], in.at("k"), idx, len, got.at("k_kept")));
  report.outputs.push_back(check_gather(decls[3], in.at("v"), idx, len, got.at("v_kept")));
  return report;
}

std::vector<double> rows_f64(const HostTensor& t, int64_t first, int64_t n, int64_t d) {
  std::vector<double> out(n * d);
  t.get_row(first * d, n * d, out.data());
  return out;
}

Json compacted_cache_quality(const CompactedCache& s, DType dtype, const TensorMap& in, const TensorMap& out,
                             double merge_lambda) {
  const HostTensor &qf = in.at("q_future"), &len = out.at("kept_len"), &idx = out.at("kept_idx");
  const int64_t d = s.head_dim, G = s.q_heads / s.kv_heads, T = s.kv_len, n_rows = s.batch * s.q_heads * s.n_future;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // Per future query row: Σ(o_c − o_f)², Σo_f², Σo_c², Σo_c·o_f, recall; each (b, g) one task.
  std::vector<double> stats(n_rows * 5, 0.0);
  harness_pool().parallel_for(s.batch * s.kv_heads, [&](int64_t begin, int64_t end) {
    std::vector<double> of(d), oc(d), logit(T);
    std::vector<char> kept(T);
    for (int64_t bg = begin; bg < end; ++bg) {
      const int64_t b = bg / s.kv_heads, g = bg % s.kv_heads, n_kept = static_cast<int64_t>(len.get(bg));
      const std::vector<double> k = rows_f64(in.at("k"), bg * T, T, d), v = rows_f64(in.at("v"), bg * T, T, d);
      std::fill(kept.begin(), kept.end(), 0);
      for (int64_t r = 0; r < n_kept; ++r) kept[static_cast<int64_t>(idx.get(bg * s.capacity + r))] = 1;
      // The kept rows: the impl's compacted copy, or (a selection-only method, which makes none)
      // the cache's rows at its kept indices.
      std::vector<double> kk, vk;
      if (out.count("k_kept")) {
        kk = rows_f64(out.at("k_kept"), bg * s.capacity, n_kept, d);
        vk = rows_f64(out.at("v_kept"), bg * s.capacity, n_kept, d);
      } else {
        for (int64_t r = 0; r < n_kept; ++r) {
          const auto j = static_cast<int64_t>(idx.get(bg * s.capacity + r));
          kk.insert(kk.end(), k.begin() + j * d, k.begin() + (j + 1) * d);
          vk.insert(vk.end(), v.begin() + j * d, v.begin() + (j + 1) * d);
        }
      }
      // Merged slots (ZeroMerge's dense slots) before the kept rows, with their log-weight bias.
      std::vector<double> bias(n_kept, 0.0);
      if (out.count("k_merged")) {
        const int64_t M = out.at("k_merged").shape()[2];
        std::vector<double> km, vm, bm;
        for (int64_t m = 0; m < M; ++m) {
          const double w = out.at("w_merged").get(bg * M + m);
          if (!(w > 0)) continue;
          const std::vector<double> kr = rows_f64(out.at("k_merged"), bg * M + m, 1, d), vr = rows_f64(out.at("v_merged"), bg * M + m, 1, d);
          km.insert(km.end(), kr.begin(), kr.end());
          vm.insert(vm.end(), vr.begin(), vr.end());
          bm.push_back(merge_lambda * std::log(w));
        }
        kk.insert(kk.begin(), km.begin(), km.end());
        vk.insert(vk.begin(), vm.begin(), vm.end());
        bias.insert(bias.begin(), bm.begin(), bm.end());
      }
      const int64_t n_read = static_cast<int64_t>(bias.size());
      // Exact attention of one query over n cached rows (with a per-row bias, or none): o, and
      // (m, l) of its softmax.
      const auto attend = [&](const double* qr, const std::vector<double>& keys, const std::vector<double>& vals, int64_t n,
                              double* o, const double* row_bias = nullptr) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += qr[x] * keys[j * d + x];
          logit[j] = scale * dot + (row_bias ? row_bias[j] : 0.0);
          m = std::max(m, logit[j]);
        }
        std::fill(o, o + d, 0.0);
        for (int64_t j = 0; j < n; ++j) {
          const double p = std::exp(logit[j] - m);
          l += p;
          for (int64_t x = 0; x < d; ++x) o[x] += p * vals[j * d + x];
        }
        for (int64_t x = 0; x < d; ++x) o[x] /= l;
        return std::pair{m, l};
      };
      for (int64_t hh = 0; hh < G; ++hh) {
        const int64_t h = g * G + hh;
        const std::vector<double> queries = rows_f64(qf, (b * s.q_heads + h) * s.n_future, s.n_future, d);
        for (int64_t t = 0; t < s.n_future; ++t) {
          const int64_t row = (b * s.q_heads + h) * s.n_future + t;
          const auto [m, l] = attend(queries.data() + t * d, k, v, T, of.data());
          // Recall: the full softmax's mass on the kept keys (logit still holds the full row).
          double recall = 0;
          for (int64_t j = 0; j < T; ++j)
            if (kept[j]) recall += std::exp(logit[j] - m) / l;
          attend(queries.data() + t * d, kk, vk, n_read, oc.data(), bias.data());
          double* st = stats.data() + row * 5;
          for (int64_t x = 0; x < d; ++x) {
            st[0] += (oc[x] - of[x]) * (oc[x] - of[x]);
            st[1] += of[x] * of[x];
            st[2] += oc[x] * oc[x];
            st[3] += oc[x] * of[x];
          }
          st[4] = recall;
        }
      }
    }
  });
  double err = 0, full = 0, comp = 0, dot = 0, recall = 0, kept_total = 0;
  for (int64_t r = 0; r < len.numel(); ++r) kept_total += len.get(r);
  for (int64_t row = 0; row < n_rows; ++row) {
    err += stats[row * 5];
    full += stats[row * 5 + 1];
    comp += stats[row * 5 + 2];
    dot += stats[row * 5 + 3];
    recall += stats[row * 5 + 4];
  }
  const double es = static_cast<double>(dtype_size(dtype));
  const double rows = static_cast<double>(s.batch * s.kv_heads);
  Json q = Json::object();
  q["compression_ratio"] = rows * static_cast<double>(T) / kept_total;
  q["kv_bytes_full"] = 2 * rows * static_cast<double>(T * d) * es;
  q["kv_bytes_kept"] = 2 * kept_total * static_cast<double>(d) * es;
  if (out.count("k_merged")) {  // the merged slots: K, V and a weight each
    const double slots = static_cast<double>(out.at("w_merged").numel());
    q["kv_bytes_kept"] = 2 * kept_total * static_cast<double>(d) * es + slots * (2 * static_cast<double>(d) * es + 4);
    q["merged_slots"] = slots / rows;
  }
  q["index_bytes"] = kept_total * 4;
  q["future_queries"] = s.n_future;
  if (n_rows > 0) {
    q["out_rel_l2"] = full > 0 ? std::sqrt(err / full) : 0.0;
    q["out_cos"] = full > 0 && comp > 0 ? dot / std::sqrt(full * comp) : 1.0;
    q["attn_recall"] = recall / static_cast<double>(n_rows);
  }
  return q;
}

std::vector<RelatedCase> decode_companions(const CompactedCache& s, DType dtype) {
  const auto decode = [&](const char* role, int64_t kv_len, bool head_lengths) {
    RelatedCase r{role, "gqa", "decode", {}, dtype};
    r.params = {{"batch", Value(s.batch)},       {"q_heads", Value(s.q_heads)}, {"kv_heads", Value(s.kv_heads)},
                {"head_dim", Value(s.head_dim)}, {"q_len", Value(int64_t{1})}, {"kv_len", Value(kv_len)}};
    if (head_lengths) r.params["head_lengths"] = Value(true);
    return r;
  };
  // Ragged rows: per-head lengths drawn uniformly up to kv_len (the attention spec's generator),
  // so twice the mean kept count gives the companion about the method's total of kept tokens.
  if (s.ragged_rows) return {decode("decode_compressed", std::max<int64_t>(1, 2 * s.kept), true), decode("decode_full", s.kv_len, false)};
  return {decode("decode_compressed", s.kept, false), decode("decode_full", s.kv_len, false)};
}

}  // namespace attnbench::kvcomp
