#include "sparse_step.h"

#include <algorithm>
#include <cmath>

#include "attnbench/check.h"
#include "attnbench/error.h"
#include "attnbench/thread_pool.h"
#include "compacted_cache.h"
#include "reference/attention/attention_spec.h"

namespace attnbench::kvcomp {

attention::AttentionParams sparse_step_params(const SelectionParams& s) {
  attention::AttentionParams a = attention::decode_step_params(s.batch, s.q_heads, s.kv_heads, s.head_dim, s.capacity);
  a.cache_cap = s.kv_len;  // the lists index the whole cache
  a.key_index = 2;
  a.head_lengths = 1;
  return a;
}

OutputDecl sparse_step_output(const SelectionParams& s, DType dtype) {
  OutputDecl o{"O", dtype, {s.batch, s.q_heads, 1, s.head_dim}, CheckClass::TOL};
  o.doc = "O [batch, q_heads, 1, head_dim]: the decode query's attention over the kept keys, read in place";
  return o;
}

HostTensor decode_query(const HostTensor& q_obs, DType dtype) {
  const Shape& sh = q_obs.shape();  // [batch, q_heads, w, d]
  const int64_t heads = sh[0] * sh[1], w = sh[2], d = sh[3];
  HostTensor q("q", dtype, {sh[0], sh[1], 1, d});
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t x = 0; x < d; ++x) q.set(h * d + x, q_obs.get((h * w + w - 1) * d + x));
  return q;
}

namespace {

// The attention stage's view of a step over a set: q, k, v and the set's lists.
TensorMap step_inputs(const TensorMap& in, const HostTensor& kept_idx, const HostTensor& kept_len) {
  TensorMap t;
  for (const char* name : {"q", "k", "v"}) t.emplace(name, in.at(name).clone());
  t.emplace("key_idx", kept_idx.clone());
  t.emplace("idx_len", kept_len.clone());
  return t;
}

}  // namespace

attention::DenseRows sparse_step_rows(const Case& c, const SelectionParams& s, const TensorMap& in, const HostTensor& kept_idx,
                                      const HostTensor& kept_len) {
  Reference unsampled;  // flops 0: every row
  return attention::dense_rows(c, sparse_step_params(s), step_inputs(in, kept_idx, kept_len), unsampled, 0.0);
}

OutputCheck check_sparse_step(const Case& c, const SelectionParams& s, const TensorMap& in, const TensorMap& got) {
  const attention::DenseRows d = sparse_step_rows(c, s, in, got.at("kept_idx"), got.at("kept_len"));
  return check_tol(sparse_step_output(s, c.dtype), d.o, got.at("O"), max_abs_diff(d.o, d.o_base));
}

Work sparse_step_work(const SelectionParams& s, const std::vector<int64_t>& kept, DType dtype) {
  const double es = static_cast<double>(dtype_size(dtype)), d = static_cast<double>(s.head_dim);
  double keys = 0;
  for (int64_t n : kept) keys += static_cast<double>(n);
  const double q_rows = static_cast<double>(s.batch) * s.q_heads;
  Work w;
  w.flops = 4.0 * d * keys * s.group;
  w.bytes = 2.0 * keys * d * es + 4.0 * keys + q_rows * (2.0 * d * es);
  w.bound = Bound::read;
  return w;
}

void sparse_step_quality(const SelectionParams& s, DType dtype, const TensorMap& in, const TensorMap& out, Json& q) {
  const HostTensor &idx = out.at("kept_idx"), &len = out.at("kept_len"), &o = out.at("O"), &query = in.at("q");
  const int64_t d = s.head_dim, T = s.kv_len, G = s.group;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // Per query row: Σ(o − o_f)², Σo_f², Σo², Σo·o_f, recall of the full softmax on the kept keys.
  std::vector<double> stats(int64_t{s.batch} * s.q_heads * 5, 0.0);
  harness_pool().parallel_for(int64_t{s.batch} * s.kv_heads, [&](int64_t begin, int64_t end) {
    std::vector<double> logit(T), of(d), got(d);
    std::vector<char> kept(T);
    for (int64_t bg = begin; bg < end; ++bg) {
      const std::vector<double> k = rows_f64(in.at("k"), bg * T, T, d), v = rows_f64(in.at("v"), bg * T, T, d);
      std::fill(kept.begin(), kept.end(), 0);
      for (int64_t r = 0; r < static_cast<int64_t>(len.get(bg)); ++r) kept[static_cast<int64_t>(idx.get(bg * s.capacity + r))] = 1;
      for (int64_t hh = 0; hh < G; ++hh) {
        const int64_t row = (bg / s.kv_heads) * s.q_heads + (bg % s.kv_heads) * G + hh;
        const std::vector<double> qr = rows_f64(query, row, 1, d);
        double m = -INFINITY, l = 0, recall = 0;
        for (int64_t j = 0; j < T; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += qr[x] * k[j * d + x];
          m = std::max(m, logit[j] = scale * dot);
        }
        std::fill(of.begin(), of.end(), 0.0);
        for (int64_t j = 0; j < T; ++j) {
          const double p = std::exp(logit[j] - m);
          l += p;
          if (kept[j]) recall += p;
          for (int64_t x = 0; x < d; ++x) of[x] += p * v[j * d + x];
        }
        o.get_row(row * d, d, got.data());
        double* st = stats.data() + row * 5;
        for (int64_t x = 0; x < d; ++x) {
          of[x] /= l;
          st[0] += (got[x] - of[x]) * (got[x] - of[x]);
          st[1] += of[x] * of[x];
          st[2] += got[x] * got[x];
          st[3] += got[x] * of[x];
        }
        st[4] = recall / l;
      }
    }
  });
  double err = 0, full = 0, mine = 0, dot = 0, recall = 0, kept_total = 0;
  for (size_t r = 0; r < stats.size(); r += 5) {
    err += stats[r];
    full += stats[r + 1];
    mine += stats[r + 2];
    dot += stats[r + 3];
    recall += stats[r + 4];
  }
  for (int64_t r = 0; r < len.numel(); ++r) kept_total += len.get(r);
  // The held-out queries' figures, renamed: the method selects again for each of them.
  for (const char* k : {"attn_recall", "out_rel_l2", "out_cos"})
    if (q.contains(k)) {
      q[std::string("heldout_") + k] = q[k];
      q.erase(k);
    }
  const double es = static_cast<double>(dtype_size(dtype)), rows = static_cast<double>(s.batch) * s.kv_heads;
  const double full_bytes = 2 * rows * static_cast<double>(T * d) * es;
  q["selection_only"] = true;
  q["kv_bytes_full"] = full_bytes;
  q["kv_bytes_kept"] = full_bytes;
  q["index_bytes"] = 0.0;
  q["kv_bytes_read_per_step"] = 2 * kept_total * static_cast<double>(d) * es + 4 * kept_total;
  q["read_ratio"] = full_bytes / q["kv_bytes_read_per_step"].get<double>();
  q["compression_ratio"] = rows * static_cast<double>(T) / kept_total;
  q["attn_recall"] = recall / static_cast<double>(stats.size() / 5);
  q["out_rel_l2"] = full > 0 ? std::sqrt(err / full) : 0.0;
  q["out_cos"] = full > 0 && mine > 0 ? dot / std::sqrt(full * mine) : 1.0;
}

std::vector<RelatedCase> sparse_step_companions(const SelectionParams& s, int64_t budget, DType dtype) {
  const auto common = [&](RelatedCase r) {
    r.params = {{"batch", Value(int64_t{s.batch})}, {"q_heads", Value(int64_t{s.q_heads})},
                {"kv_heads", Value(int64_t{s.kv_heads})}, {"head_dim", Value(int64_t{s.head_dim})},
                {"q_len", Value(int64_t{1})}, {"kv_len", Value(int64_t{s.kv_len})}};
    return r;
  };
  RelatedCase sparse = common({"decode_sparse", "gather_decode", "decode", {}, dtype});
  sparse.params["budget"] = Value(std::min<int64_t>(budget, s.kv_len));
  sparse.params["index_scope"] = Value(std::string("per_head"));
  return {sparse, common({"decode_full", "gqa", "decode", {}, dtype})};
}

}  // namespace attnbench::kvcomp
