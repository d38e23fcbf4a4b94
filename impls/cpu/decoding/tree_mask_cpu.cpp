// tree_mask on the CPU (variant "inherit"): trees in parallel on the backend's pool. Parents precede
// their children, so one pass in node order builds each mask row from its parent's (a copy of W
// words and one bit) and each depth from its parent's; a second pass walks every leaf's path once,
// root last, into its retrieve row. O(n·W + Σ leaf depths) per tree, no ancestor walk per node.
#include <algorithm>
#include <cstring>

#include "../runtime/cpu_backend.h"
#include "attnbench/impl.h"
#include "reference/decoding/tree_common.h"

namespace attnbench::cpu {
namespace {

class CpuTreeMask final : public Impl {
 public:
  Support supports(const Case&, const DeviceLimits&) const override { return Support::yes(); }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    pool_ = &as_cpu(backend).pool();
    p_ = decoding::tree_params(c);
    parents_ = io["parents"].ptr<int32_t>();
    mask_ = io["mask"].ptr<uint32_t>();
    depth_ = io["depth"].ptr<int32_t>();
    pos_ = io["position_ids"].ptr<int32_t>();
    leaves_ = io["n_leaves"].ptr<int32_t>();
    retrieve_ = io["retrieve"].ptr<int32_t>();
  }

  void run() override {
    const int64_t n = p_.nodes, W = p_.mask_words, L = p_.max_depth + 1;
    pool_->parallel_for(p_.batch, [&](int64_t begin, int64_t end) {
      std::vector<char> has_child(static_cast<size_t>(n));
      for (int64_t b = begin; b < end; ++b) {
        const int32_t* par = parents_ + b * n;
        uint32_t* mask = mask_ + b * n * W;
        int32_t* depth = depth_ + b * n;
        std::fill(has_child.begin(), has_child.end(), 0);
        for (int64_t i = 0; i < n; ++i) {
          uint32_t* row = mask + i * W;
          const int32_t q = par[i];
          if (q < 0) {
            std::memset(row, 0, sizeof(uint32_t) * static_cast<size_t>(W));
            depth[i] = 0;
          } else {
            std::memcpy(row, mask + q * W, sizeof(uint32_t) * static_cast<size_t>(W));
            depth[i] = depth[q] + 1;
            has_child[q] = 1;
          }
          row[i / 32] |= 1u << (i % 32);
          pos_[b * n + i] = p_.prefix + depth[i];
        }
        int32_t* retrieve = retrieve_ + b * n * L;
        int64_t l = 0;
        for (int64_t i = 0; i < n; ++i) {
          if (has_child[i]) continue;
          int32_t* path = retrieve + l * L;
          std::fill(path + depth[i] + 1, path + L, -1);
          for (int64_t j = i, t = depth[i]; j >= 0; j = par[j]) path[t--] = static_cast<int32_t>(j);
          ++l;
        }
        std::fill(retrieve + l * L, retrieve + n * L, -1);
        leaves_[b] = static_cast<int32_t>(l);
      }
    });
  }

 private:
  ThreadPool* pool_ = nullptr;
  decoding::TreeParams p_{};
  const int32_t* parents_ = nullptr;
  uint32_t* mask_ = nullptr;
  int32_t *depth_ = nullptr, *pos_ = nullptr, *leaves_ = nullptr, *retrieve_ = nullptr;
};

}  // namespace
}  // namespace attnbench::cpu

ATTNBENCH_IMPL(attnbench::cpu::CpuTreeMask, "tree_mask", "cpu", "inherit");
