#include "compacted_cache.h"

#include <algorithm>
#include <cmath>

#include "attnbench/thread_pool.h"

namespace attnbench::kvcomp {

std::vector<double> rows_f64(const HostTensor& t, int64_t first, int64_t n, int64_t d) {
  std::vector<double> out(n * d);
  t.get_row(first * d, n * d, out.data());
  return out;
}

Json compacted_cache_quality(const CompactedCache& s, DType dtype, const TensorMap& in, const TensorMap& out) {
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
      const std::vector<double> kk = rows_f64(out.at("k_kept"), bg * s.capacity, n_kept, d);
      const std::vector<double> vk = rows_f64(out.at("v_kept"), bg * s.capacity, n_kept, d);
      std::fill(kept.begin(), kept.end(), 0);
      for (int64_t r = 0; r < n_kept; ++r) kept[static_cast<int64_t>(idx.get(bg * s.capacity + r))] = 1;
      // Exact attention of one query over n cached rows: o, and (m, l) of its softmax.
      const auto attend = [&](const double* qr, const std::vector<double>& keys, const std::vector<double>& vals, int64_t n,
                              double* o) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += qr[x] * keys[j * d + x];
          logit[j] = scale * dot;
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
          attend(queries.data() + t * d, kk, vk, n_kept, oc.data());
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
  double err = 0, full = 0, comp = 0, dot = 0, recall = 0;
  for (int64_t row = 0; row < n_rows; ++row) {
    err += stats[row * 5];
    full += stats[row * 5 + 1];
    comp += stats[row * 5 + 2];
    dot += stats[row * 5 + 3];
    recall += stats[row * 5 + 4];
  }
  const double es = static_cast<double>(dtype_size(dtype));
  const double rows = static_cast<double>(s.batch * s.kv_heads), kept = static_cast<double>(s.kept);
  Json q = Json::object();
  q["compression_ratio"] = static_cast<double>(T) / kept;
  q["kv_bytes_full"] = 2 * rows * static_cast<double>(T * d) * es;
  q["kv_bytes_kept"] = 2 * rows * kept * static_cast<double>(d) * es;
  q["index_bytes"] = rows * kept * 4;
  q["future_queries"] = s.n_future;
  if (n_rows > 0) {
    q["out_rel_l2"] = full > 0 ? std::sqrt(err / full) : 0.0;
    q["out_cos"] = full > 0 && comp > 0 ? dot / std::sqrt(full * comp) : 1.0;
    q["attn_recall"] = recall / static_cast<double>(n_rows);
  }
  return q;
}

std::vector<RelatedCase> decode_companions(const CompactedCache& s, DType dtype) {
  const auto decode = [&](const char* role, int64_t kv_len) {
    RelatedCase r{role, "gqa", "decode", {}, dtype};
    r.params = {{"batch", Value(s.batch)},       {"q_heads", Value(s.q_heads)}, {"kv_heads", Value(s.kv_heads)},
                {"head_dim", Value(s.head_dim)}, {"q_len", Value(int64_t{1})}, {"kv_len", Value(kv_len)}};
    return r;
  };
  return {decode("decode_compressed", s.kept), decode("decode_full", s.kv_len)};
}

}  // namespace attnbench::kvcomp
