// tree_verify on the CPU (variant "paths"): every node's distribution is reduced once, (tree, node)
// pairs in parallel on the backend's pool (tree_verify_kernel.inl: the argmax and, for typical
// acceptance at a node with a child, the entropy summed in fp64: about half an EAGLE tree's nodes
// are leaves, whose logs would be wasted); then each tree's leaf paths are scored in fp32 from those
// figures (a path stops at its first rejected draft) and the best is written out. The reduction
// reads each probability once, the bytes the method is bound by.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/tree_common.h"
#include "tree_verify_kernel.h"

namespace attnbench::cpu {
namespace {

class CpuTreeVerify final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

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
    stats_.resize(static_cast<size_t>(s_.batch) * s_.nodes);
    has_child_.assign(stats_.size(), 0);
  }

  void run() override {
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

  ThreadPool* pool_ = nullptr;
  const tree_verify::Kernels* kernels_ = nullptr;
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
