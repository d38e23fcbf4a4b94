// eagle2_tree on the CPU (variant "scan"): three steps, the first the one the method is bound by.
//   1. every row of draft logits (batch · slots of them) in parallel on the backend's pool: its
//      top k and their log-softmax values (eagle2_tree_kernel.inl: one vector pass for the top k,
//      one for the fp64 sum of the exps) into a [batch, slots, k] scratch;
//   2. every tree in parallel: the levels' frontiers (partial sorts of k² fp32 scores) and the
//      selection (nth_element over the C candidates), the kept nodes in creation order → tokens and
//      parents;
//   3. tree_mask's CPU stage over those parents (the mask, depths, position ids and paths).
// The scores follow the spec's fp32 contract; ties go to the lower index, so no bit depends on the
// thread count.
#include <algorithm>
#include <numeric>
#include <vector>

#include "../runtime/cpu_backend.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "attnbench/registry.h"
#include "eagle2_tree_kernel.h"
#include "reference/decoding/eagle2_common.h"

namespace attnbench::cpu {
namespace {

class CpuEagle2Tree final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    if (c.i64("top_k") > eagle2::kMaxTopK)
      return Support::no(cat("the row kernel keeps at most ", eagle2::kMaxTopK, " tokens a row (the schema's bound)"));
    return stage_supports(decoding::eagle2_mask_case(c), "cpu", limits);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CpuBackend& cpu = as_cpu(backend);
    pool_ = &cpu.pool();
    kernels_ = &cpu.kernels<eagle2::Kernels>();
    p_ = decoding::eagle2_params(c);
    const size_t rows = static_cast<size_t>(p_.batch) * p_.slots * p_.top_k;
    top_tok_.assign(rows, 0);
    top_ell_.assign(rows, 0.0f);
    logits_ = io["draft_logits"].ptr<float>();
    root_ = io["root_token"].ptr<int32_t>();
    tokens_ = io["tokens"].ptr<int32_t>();
    parents_ = io["parents"].ptr<int32_t>();
    mask_ = prepare_stage(decoding::eagle2_mask_case(c), backend, io);
  }

  void run() override {
    const int64_t k = p_.top_k, V = p_.vocab;
    pool_->parallel_for(int64_t{p_.batch} * p_.slots, [&](int64_t begin, int64_t end) {
      for (int64_t q = begin; q < end; ++q) kernels_->row_topk(logits_ + q * V, V, p_.top_k, &top_tok_[q * k], &top_ell_[q * k]);
    });
    pool_->parallel_for(p_.batch, [&](int64_t begin, int64_t end) {
      std::vector<float> score(static_cast<size_t>(p_.candidates));
      std::vector<int32_t> parent(score.size()), idx(score.size()), node(score.size());
      for (int64_t b = begin; b < end; ++b) build(b, score, parent, idx, node);
    });
    mask_->run();
  }

 private:
  void build(int64_t b, std::vector<float>& score, std::vector<int32_t>& parent, std::vector<int32_t>& idx,
             std::vector<int32_t>& node) const {
    const int64_t k = p_.top_k, D = p_.depth, C = p_.candidates;
    const int32_t* tok = &top_tok_[b * p_.slots * k];
    const float* ell = &top_ell_[b * p_.slots * k];
    const auto better = [&](int32_t a, int32_t c) { return score[a] > score[c] || (score[a] == score[c] && a < c); };
    for (int64_t r = 0; r < k; ++r) {
      score[r] = std::min(0.0f, ell[r]);
      parent[r] = -1;
    }
    for (int64_t level = 1; level < D; ++level) {
      const int64_t start = decoding::eagle2_level_start(k, level), count = level == 1 ? k : k * k;
      const int64_t next = decoding::eagle2_level_start(k, level + 1);
      std::iota(idx.begin(), idx.begin() + count, static_cast<int32_t>(start));
      std::partial_sort(idx.begin(), idx.begin() + k, idx.begin() + count, better);
      for (int64_t s = 0; s < k; ++s) {
        const float P = score[idx[s]];
        const float* l = ell + (1 + (level - 1) * k + s) * k;
        for (int64_t r = 0; r < k; ++r) {
          score[next + s * k + r] = std::min(P, P + l[r]);
          parent[next + s * k + r] = idx[s];
        }
      }
    }
    const int64_t keep = p_.nodes - 1;
    std::iota(idx.begin(), idx.end(), 0);
    if (keep < C) std::nth_element(idx.begin(), idx.begin() + keep, idx.end(), better);
    std::sort(idx.begin(), idx.begin() + keep);  // creation order
    int32_t* tokens = tokens_ + b * p_.nodes;
    int32_t* parents = parents_ + b * p_.nodes;
    tokens[0] = root_[b];
    parents[0] = -1;
    for (int64_t i = 0; i < keep; ++i) {
      const int32_t c = idx[i];
      node[c] = static_cast<int32_t>(i + 1);
      // Candidate c is entry c of the [slots, k] scratch: row 0 holds level 1, and rank r of
      // row 1 + (l − 2)·k + s sits at k + (l − 2)·k² + s·k + r.
      tokens[i + 1] = tok[c];
      parents[i + 1] = parent[c] < 0 ? 0 : node[parent[c]];
    }
  }

  ThreadPool* pool_ = nullptr;
  const eagle2::Kernels* kernels_ = nullptr;
  decoding::Eagle2Params p_{};
  std::vector<int32_t> top_tok_;
  std::vector<float> top_ell_;
  const float* logits_ = nullptr;
  const int32_t* root_ = nullptr;
  int32_t *tokens_ = nullptr, *parents_ = nullptr;
  std::unique_ptr<Impl> mask_;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuEagle2Tree, "eagle2_tree", "cpu", "scan");
