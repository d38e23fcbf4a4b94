// tree_verify on the CPU (variant "paths"): every node's distribution is reduced once, (tree, node)
// pairs in parallel on the backend's pool (tree_verify_kernel.inl: the argmax and, for typical
// acceptance at a node with a child, the entropy summed in fp64: about half an EAGLE tree's nodes
// are leaves, whose logs would be wasted); then each tree's leaf paths are scored in fp32 from those
// figures (a path stops at its first rejected draft) and the best is written out. The reduction
// reads each probability once, the bytes the method is bound by.
// The stochastic modes walk each row's tree from the root, rows in parallel: the acceptance tests,
// the fp64 residual and draft renormalisations after a rejection, and the race stage
// (race_kernel.h) over fp32 of the last residual, or over p at a leaf.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "attnbench/rng.h"
#include "race_kernel.h"
#include "reference/decoding/speculative_sampling_common.h"
#include "reference/decoding/tree_common.h"
#include "tree_verify_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuTreeVerify final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    if (c.i64("vocab") >= (int64_t{1} << 24)) return Support::no("race indices are tracked in fp32 lanes: vocab < 2^24");
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<tree_verify::Kernels>();
    s_ = decoding::tree_verify_params(c);
    probs_ = io["target_probs"].ptr<float>();
    tokens_ = io["tokens"].ptr<int32_t>();
    retrieve_ = io["retrieve"].ptr<int32_t>();
    leaves_ = io["n_leaves"].ptr<int32_t>();
    out_ = io["tokens_out"].ptr<int32_t>();
    emitted_ = io["emitted"].ptr<int32_t>();
    len_ = io["accept_len"].ptr<int32_t>();
    best_ = io["best_path"].ptr<int32_t>();
    nodes_ = io["accepted_nodes"].ptr<int32_t>();
    if (decoding::tree_stochastic(s_)) {
      prepare_stochastic(c, backend, io);
      return;
    }
    stats_.resize(static_cast<size_t>(s_.batch) * s_.nodes);
    has_child_.assign(stats_.size(), 0);
  }

  void run() override {
    if (decoding::tree_stochastic(s_)) {
      // Children in node index order, per tree: first-child and next-sibling links.
      const int64_t n = s_.nodes;
      std::fill(first_child_.begin(), first_child_.end(), -1);
      for (int64_t b = 0; b < s_.batch; ++b)
        for (int64_t v = n - 1; v >= 1; --v) {
          const int64_t u = b * n + parents_[b * n + v];
          next_sibling_[b * n + v] = first_child_[u];
          first_child_[u] = static_cast<int32_t>(v);
        }
      pool_->parallel_for_slots(s_.rows, [&](int64_t begin, int64_t end, unsigned slot) {
        for (int64_t r = begin; r < end; ++r) walk(r, slot);
      });
      return;
    }
    const int64_t n = s_.nodes, V = s_.vocab, L = s_.max_depth + 1;
    const bool typical = s_.mode == decoding::kTreeTypical;
    if (typical)  // a threshold is read only at a node with a child: the leaves' entropy is skipped
      pool_->parallel_for(s_.batch, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          std::fill(has_child_.begin() + b * n, has_child_.begin() + (b + 1) * n, 0);
          for (int32_t l = 0; l < leaves_[b]; ++l) {
            const int32_t* path = retrieve_ + (b * n + l) * L;
            for (int64_t t = 1; t < L && path[t] >= 0; ++t) has_child_[b * n + path[t - 1]] = 1;
          }
        }
      });
    pool_->parallel_for(int64_t{s_.batch} * n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) stats_[i] = kernels_->stats(probs_ + i * V, V, typical && has_child_[i]);
    });
    pool_->parallel_for(s_.batch, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) choose(b, n, V, L, typical);
    });
  }

 private:
  // The tree's best path, as the reference's semantics say, in fp32.
  void choose(int64_t b, int64_t n, int64_t V, int64_t L, bool typical) {
    const tree_verify::NodeStats* st = stats_.data() + b * n;
    const int32_t* tok = tokens_ + b * n;
    int32_t best = 0, best_len = -1;
    float best_score = -INFINITY;
    for (int32_t l = 0; l < leaves_[b]; ++l) {
      const int32_t* path = retrieve_ + (b * n + l) * L;
      int32_t len = 0;
      float score = 0;
      for (int64_t t = 1; t < L && path[t] >= 0; ++t) {
        const int32_t u = path[t - 1], x = tok[path[t]];
        bool ok;
        if (typical) {
          const float px = probs_[(b * n + u) * V + x];
          const float tau = std::min(s_.epsilon, s_.delta * std::exp(-static_cast<float>(st[u].entropy)));
          ok = px > tau;
          if (ok) score += std::log(px);
        } else {
          ok = x == st[u].argmax;
        }
        if (!ok) break;
        ++len;
      }
      if (len > best_len || (typical && len == best_len && score > best_score)) {
        best = l;
        best_len = len;
        best_score = score;
      }
    }
    const int32_t* path = retrieve_ + (b * n + best) * L;
    int32_t* out = out_ + b * L;
    int32_t* nodes = nodes_ + b * L;
    std::fill(out, out + L, -1);
    std::fill(nodes, nodes + L, -1);
    for (int32_t t = 0; t <= best_len; ++t) {
      nodes[t] = path[t];
      if (t > 0) out[t - 1] = tok[path[t]];
    }
    out[best_len] = st[path[best_len]].argmax;
    emitted_[b] = best_len + 1;
    len_[b] = best_len;
    best_[b] = best;
  }

  void prepare_stochastic(const Case& c, Backend& backend, const IoBuffers& io) {
    race_ = &as_cpu(backend).kernels<race::Kernels>();
    draft_ = io["draft_probs"].ptr<float>();
    parents_ = io["parents"].ptr<int32_t>();
    site_ = {s_.seed_lo, s_.seed_hi, s_.race_stream, kDomainDraws};
    accept_ = PhiloxStream(c.seed, decoding::kAcceptSite, kDomainDraws);
    first_child_.resize(static_cast<size_t>(s_.batch) * s_.nodes);
    next_sibling_.resize(first_child_.size());
    const int64_t V = s_.vocab;
    // Per pool slot: r, g, w in fp64, fp32 race weights, the race's words.
    words_ = race::race_scratch_words(V);
    slot_bytes_ = (3 * V * sizeof(double) + V * sizeof(float) + words_ * sizeof(uint32_t) + 63) / 64 * 64;
    scratch_ = backend.allocator().allocate(slot_bytes_ * pool_->size(), "tree_verify.walk");
  }

  // One row of a stochastic mode (semantics: reference/decoding/tree_verify.cpp).
  void walk(int64_t r, unsigned slot) {
    const int64_t n = s_.nodes, V = s_.vocab, L = s_.max_depth + 1, b = decoding::tree_of_row(s_, r);
    char* base = scratch_->ptr<char>() + slot * slot_bytes_;
    double* res = reinterpret_cast<double*>(base);
    double* g = res + V;
    double* w = g + V;
    float* w32 = reinterpret_cast<float*>(w + V);
    uint32_t* words = reinterpret_cast<uint32_t*>(w32 + V);
    const int32_t* tok = tokens_ + r * n;
    int32_t* out = out_ + r * L;
    int32_t* nodes = nodes_ + r * L;
    std::fill(out, out + L, -1);
    std::fill(nodes, nodes + L, -1);
    int32_t u = 0, len = 0;
    nodes[0] = 0;
    while (true) {
      const float* p = probs_ + (b * n + u) * V;
      const float* q = draft_ + (b * n + u) * V;
      int32_t ch = first_child_[b * n + u];
      bool rejected = false, accepted = false;
      for (bool first = true; ch >= 0; ch = next_sibling_[b * n + ch], first = false) {
        const int32_t x = tok[ch];
        const float U = accept_.uniform_f32(decoding::tree_accept_index(s_, r, ch));
        accepted = first ? U * q[x] < p[x] : static_cast<double>(U) * g[x] < res[x];
        if (accepted) break;
        if (first)
          for (int64_t y = 0; y < V; ++y) {
            res[y] = p[y];
            g[y] = q[y];
          }
        reject(res, g, w, x, V);
        rejected = true;
      }
      if (accepted) {
        out[len] = tok[ch];
        nodes[++len] = ch;
        u = ch;
        continue;
      }
      bool any = false;
      if (rejected)
        for (int64_t y = 0; y < V; ++y) any |= (w32[y] = static_cast<float>(w[y])) != 0;
      const race::RaceBest best = race_->race({any ? w32 : p, nullptr, nullptr}, 0, V, site_,
                                               decoding::tree_race_index(s_, r, u, 0), words);
      out[len] = race::race_winner(&best, 1);
      break;
    }
    emitted_[r] = len + 1;
    len_[r] = len;
    // The lowest retrieve row through the last accepted node.
    int32_t bestp = 0;
    for (int32_t l = leaves_[b] - 1; l >= 0; --l)
      if (retrieve_[(b * n + l) * L + len] == nodes[len]) bestp = l;
    best_[r] = bestp;
  }

  // A rejected child with token x: res = norm(max(0, res − g)) (w keeps it unnormalised); without
  // replacement, g loses x and is renormalised. Four partial sums keep the loops vectorisable.
  void reject(double* res, double* g, double* w, int32_t x, int64_t V) const {
    // Divisions, as the spec writes them (a reciprocal's product would round twice).
    const double z = sum_of(V, [&](int64_t y) { return w[y] = std::max(0.0, res[y] - g[y]); });
    for (int64_t y = 0; y < V; ++y) res[y] = z > 0 ? w[y] / z : 0.0;
    if (s_.mode != decoding::kTreeRejectionWor) return;
    g[x] = 0;
    const double t = sum_of(V, [&](int64_t y) { return g[y]; });
    for (int64_t y = 0; y < V; ++y) g[y] = t > 0 ? g[y] / t : 0.0;
  }

  template <typename F>
  static double sum_of(int64_t V, const F& term) {
    double acc[4] = {0, 0, 0, 0};
    int64_t y = 0;
    for (; y + 4 <= V; y += 4)
      for (int k = 0; k < 4; ++k) acc[k] += term(y + k);
    for (; y < V; ++y) acc[0] += term(y);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }

  ThreadPool* pool_ = nullptr;
  const tree_verify::Kernels* kernels_ = nullptr;
  const race::Kernels* race_ = nullptr;
  const float* draft_ = nullptr;
  const int32_t* parents_ = nullptr;
  race::PhiloxSite site_{};
  PhiloxStream accept_{uint64_t{0}, uint32_t{0}, uint32_t{0}};
  std::vector<int32_t> first_child_, next_sibling_;
  size_t words_ = 0, slot_bytes_ = 0;
  BufferPtr scratch_;
  decoding::TreeVerifyParams s_{};
  const float* probs_ = nullptr;
  const int32_t *tokens_ = nullptr, *retrieve_ = nullptr, *leaves_ = nullptr;
  int32_t *out_ = nullptr, *emitted_ = nullptr, *len_ = nullptr, *best_ = nullptr, *nodes_ = nullptr;
  std::vector<tree_verify::NodeStats> stats_;
  std::vector<char> has_child_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuTreeVerify, "tree_verify", "cpu", "paths");
