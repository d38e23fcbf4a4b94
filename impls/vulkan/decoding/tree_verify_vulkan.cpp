// tree_verify on Vulkan (variant "paths", as the CPU impl's).
// Greedy and typical: two dispatches, because choosing a tree's path needs every node's figures
// and those come from many workgroups.
//   1. shaders/tree_verify_nodes.comp: a workgroup per (tree, node) pair reads the node's
//      distribution once, lanes striding over the vocabulary, and reduces it to the argmax (lowest
//      index among equal maxima) and, for typical acceptance, τ = min(ε, δ·exp(−H)) with H's fp32
//      terms summed in fp64; 8 bytes per node go to a scratch buffer.
//   2. shaders/tree_verify_paths.comp: a workgroup per tree, lanes over its leaf paths, each
//      scored as the CPU impl's choose() does (accepted prefix, fp32 sum of ln p), a workgroup
//      reduction to the best (longest, highest score, lowest index), then lanes over the D + 1
//      columns write every output element.
// The plan: 256 lanes for the node reduction (bandwidth: enough loads in flight), lanes up to the
// tree's size for the paths. It refuses a device without shaderFloat64 (the entropy sum; the
// stage-1 shader carries the capability in either mode), a tensor over one binding, and a loop
// past lavapipe's limiter (none of the schema's cases comes near it).
// Rejection and rejection_wor: one dispatch, shaders/tree_verify_walk.comp. The walk is sequential
// per row, so a team of lanes walks one row and spreads the V-wide work of each step (the fp64
// residual pass, its sums, the race): a workgroup per row (wide), or for a vocabulary of at most
// four Philox blocks per lane of the smallest subgroup (the distribution cases' V = 16) a
// subgroup per row, many rows a workgroup (narrow; speculative_sampling's plan's threshold). The
// residual w (fp64, unnormalised: the race reads fp32(w)) and, for rejection_wor, the draft before
// its normalisation live in a device scratch slot per row, V or 2V doubles: kept rather than
// recomputed, because a node's k-th rejection depends on all k − 1 before it. The normalisers are
// team-wide scalars, so r = w/Σw and g = G/Σg are formed where read and a rejection costs one pass.
// The scratch holds a tile of rows (at most 256 MiB and one binding); more rows are walked in
// several dispatches, which the stream orders (vulkan.splits=N forces N tiles). Also refused: a
// device without fp64 or the subgroup operations, and a loop past lavapipe's limiter.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "../runtime/plan_support.h"
#include "../runtime/vulkan_backend.h"
#include "attnbench/impl.h"
#include "attnbench/param_struct.h"
#include "reference/decoding/tree_common.h"
#include "shaders/tree_verify_walk_plan.glsl"

namespace attnbench::vulkan {
namespace {

struct VerifyPlan {
  uint32_t node_threads = 0, path_threads = 0;
  uint64_t loop_iterations = 0;  // an upper bound per invocation of either stage, nothing unrolled
};

VerifyPlan verify_plan(const decoding::TreeVerifyParams& p, const DeviceView& d) {
  VerifyPlan v;
  v.node_threads = d.workgroup(256);
  v.path_threads = d.workgroup(std::min<uint32_t>(256, pow2_ceil(static_cast<uint32_t>(p.nodes))));
  const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1;
  uint64_t steps = 1;
  while ((1ull << steps) < std::max(v.node_threads, v.path_threads)) ++steps;
  const uint64_t nodes_loop = ceil_div(static_cast<uint64_t>(p.vocab), v.node_threads) + steps;
  const uint64_t paths_loop = ceil_div(static_cast<uint64_t>(p.nodes), v.path_threads) * (L + 1) + steps +
                              ceil_div(L, v.path_threads);
  v.loop_iterations = std::max(nodes_loop, paths_loop);
  return v;
}

bool pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

ATTNBENCH_PARAM_STRUCT(TreeVerifyWalkPlan, ATTNBENCH_TREE_VERIFY_WALK_PLAN);

// The push block of tree_verify_walk.comp.
struct TreeWalkPush {
  decoding::TreeVerifyParams p;
  TreeVerifyWalkPlan plan;
};

struct TreeWalkPlan {
  std::string unsupported;  // non-empty: the case cannot run here, and why
  uint32_t threads = 0, team = 0, subgroups = 1;
  bool wide = false;
  uint32_t tile_rows = 0;  // rows a dispatch walks: the scratch's slots
  uint64_t slot_bytes = 0;
};

TreeWalkPlan tree_walk_plan(const decoding::TreeVerifyParams& p, const DeviceView& d) {
  TreeWalkPlan w;
  const uint64_t V = static_cast<uint32_t>(p.vocab), n = static_cast<uint32_t>(p.nodes);
  const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1, R = static_cast<uint32_t>(p.rows);
  const uint64_t Bn = uint64_t{static_cast<uint32_t>(p.batch)} * n;
  w.slot_bytes = V * 8 * (p.mode == decoding::kTreeRejectionWor ? 2 : 1);
  w.unsupported = over_binding({{"target_probs", Bn * V * 4, 4},
                                {"draft_probs", Bn * V * 4, 4},
                                {"tokens", R * n * 4, 4},
                                {"retrieve", Bn * L * 4, 4},
                                {"tokens_out", R * L * 4, 4},
                                {"a row's scratch", w.slot_bytes, 8}},
                               d);
  if (!w.unsupported.empty()) return w;
  const uint32_t blocks = ceil_div(V, 4) + 1;  // Philox blocks a node's race stretch touches
  const uint32_t sg = pow2_floor(std::max(1u, d.min_sg));
  // Loop iterations per invocation, counted as if nothing were unrolled: a fold is a butterfly and
  // a tree; a child lookup a scan of the nodes and a fold (at most n − 1 + D + 1 lookups); a test
  // one Philox call (10 rounds) and a residual pass 5 iterations a block (at most n − 1 of each);
  // the race 15 a block and the subgroups' merge; the best path and the outputs.
  const auto loops = [&](uint32_t team, uint32_t subgroups) {
    uint64_t lg = 0;
    while ((1ull << lg) < uint64_t{team}) ++lg;
    const uint64_t fold = lg + 2, lane_blocks = ceil_div(blocks, team);
    const uint64_t lookups = n + L, scan = ceil_div(n, team) + fold;
    const uint64_t walk = lookups * scan + n * (11 + 5 * lane_blocks + fold) + L;
    return walk + 15 * lane_blocks + subgroups + lg + scan + ceil_div(L, team);
  };
  const uint64_t cap = d.loop_cap == 0 ? UINT64_MAX : d.loop_cap - d.loop_cap / 8;
  uint64_t count = 0;
  if (blocks <= 4 * sg && (count = loops(sg, 1)) <= cap) {
    // Narrow: a whole subgroup per row (speculative_sampling's teams may be part of one), many
    // rows a workgroup. Rows walk different paths, so teams sharing a subgroup would run theirs
    // one after the other anyway, and no shuffle then depends on how a driver regroups diverged
    // lanes.
    w.threads = d.workgroup(128);
    w.team = sg;
  } else {
    // A workgroup per row, about eight blocks a lane per pass; more lanes where a loop limiter
    // (lavapipe's) needs fewer iterations each.
    w.wide = true;
    for (uint32_t want = std::clamp(pow2_ceil(ceil_div(blocks, 8)), 64u, 1024u);; want *= 2) {
      w.threads = w.team = d.workgroup(want);
      w.subgroups = std::max(1u, w.threads / std::max(1u, d.min_sg));
      count = loops(w.team, w.subgroups);
      if (count <= cap || want >= 1024 || d.workgroup(want * 2) == w.threads) break;
    }
  }
  if (count > cap) {
    w.unsupported = cat("vocab=", p.vocab, ", nodes=", p.nodes, ", max_depth=", p.max_depth, " needs up to ", count,
                        " loop iterations per invocation of tree_verify's walk, past this device's loop limit of ",
                        d.loop_cap);
    return w;
  }
  if (!pow2(w.threads) || !pow2(w.team)) {
    w.unsupported = cat("workgroups of ", w.threads, " lanes: tree_verify's walk needs a power of two");
    return w;
  }
  // team_reduce.glsl's key and word per lane; the fold's four doubles and two words per subgroup.
  const uint64_t shared = 8ull * w.threads + 40ull * w.subgroups;
  if (shared > d.shared) {
    w.unsupported = cat("tree_verify's walk needs ", shared, " bytes of shared memory, over this device's ", d.shared);
    return w;
  }
  const uint64_t budget = std::min<uint64_t>(d.max_binding, uint64_t{256} << 20);
  w.tile_rows = static_cast<uint32_t>(std::clamp<uint64_t>(budget / w.slot_bytes, 1, R));
  // vulkan.splits=N walks the rows in N tiles at least (tests of the tiles' dispatches).
  if (d.forced_splits > 0) w.tile_rows = std::min(w.tile_rows, ceil_div(R, d.forced_splits));
  return w;
}

class VulkanTreeVerify final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits& limits) const override {
    const decoding::TreeVerifyParams p = decoding::tree_verify_params(c);
    const DeviceView d(limits);
    if (decoding::tree_stochastic(p)) {
      const auto features = {"float64", "subgroup_basic", "subgroup_arithmetic", "subgroup_shuffle"};
      if (std::string why = missing_feature(limits, features, "tree_verify's walk (fp64 residuals, team reductions)");
          !why.empty())
        return Support::no(why);
      const TreeWalkPlan w = tree_walk_plan(p, d);
      return w.unsupported.empty() ? Support::yes() : Support::no(w.unsupported);
    }
    if (std::string why = missing_feature(limits, {"float64"}, "tree_verify's node reduction (the fp64 entropy sum)");
        !why.empty())
      return Support::no(why);
    const uint64_t Bn = uint64_t{static_cast<uint32_t>(p.batch)} * static_cast<uint32_t>(p.nodes);
    const uint64_t L = static_cast<uint64_t>(p.max_depth) + 1;
    std::string why = over_binding({{"target_probs", Bn * static_cast<uint32_t>(p.vocab) * 4, 4},
                                    {"retrieve", Bn * L * 4, 4},
                                    {"the node figures", Bn * 8, 4}},
                                   d);
    if (!why.empty()) return Support::no(why);
    const VerifyPlan v = verify_plan(p, d);
    // The shaders' shared-memory trees halve the lane count.
    if (!pow2(v.node_threads) || !pow2(v.path_threads))
      return Support::no(cat("workgroups of ", v.node_threads, " and ", v.path_threads,
                             " lanes: tree_verify's reductions need powers of two"));
    const uint64_t shared = 16ull * v.node_threads;  // f32 + u32 + f64 a lane (stage 2 needs 12)
    if (shared > d.shared)
      return Support::no(cat("the node reduction needs ", shared, " bytes of shared memory, over this device's ", d.shared));
    if (d.loop_cap != 0 && v.loop_iterations > d.loop_cap - d.loop_cap / 8)
      return Support::no(cat("vocab=", p.vocab, ", nodes=", p.nodes, ", max_depth=", p.max_depth, " needs up to ",
                             v.loop_iterations, " loop iterations per invocation, past this device's loop limit of ",
                             d.loop_cap));
    return Support::yes();
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    be_ = &as_vulkan(backend);
    p_ = decoding::tree_verify_params(c);
    const DeviceView d(be_->probe().limits);
    if (decoding::tree_stochastic(p_)) {
      walk_plan_ = tree_walk_plan(p_, d);
      const TreeWalkPlan& w = walk_plan_;
      ATTNBENCH_ASSERT(w.unsupported.empty(), "prepare() of a case supports() refused: ", w.unsupported);
      scratch_ = be_->allocator().allocate(static_cast<size_t>(w.tile_rows * w.slot_bytes), "tree_verify.walk");
      walk_ = be_->bind(be_->pipeline("tree_verify_walk", {w.threads, w.team, w.wide ? 1u : 0u, w.subgroups}, 12),
                        {&io["target_probs"], &io["draft_probs"], &io["tokens"], &io["parents"], &io["retrieve"],
                         &io["n_leaves"], &io["tokens_out"], &io["emitted"], &io["accept_len"], &io["best_path"],
                         &io["accepted_nodes"], scratch_.get()});
      return;
    }
    const VerifyPlan v = verify_plan(p_, d);
    stats_ = be_->allocator().allocate(static_cast<size_t>(p_.batch) * p_.nodes * 8, "tree_verify.stats");
    nodes_ = be_->bind(be_->pipeline("tree_verify_nodes", {v.node_threads}, 2), {&io["target_probs"], stats_.get()});
    paths_ = be_->bind(be_->pipeline("tree_verify_paths", {v.path_threads}, 10),
                       {&io["target_probs"], &io["tokens"], &io["retrieve"], &io["n_leaves"], stats_.get(),
                        &io["tokens_out"], &io["emitted"], &io["accept_len"], &io["best_path"], &io["accepted_nodes"]});
  }

  void run() override {
    if (walk_) {
      // Tiles of rows, each reusing the scratch after the previous one (the stream's barrier).
      const uint32_t rows = static_cast<uint32_t>(p_.rows), per_group = walk_plan_.threads / walk_plan_.team;
      for (uint32_t row0 = 0; row0 < rows; row0 += walk_plan_.tile_rows) {
        const uint32_t end = std::min(rows, row0 + walk_plan_.tile_rows);
        const uint32_t groups = ceil_div(end - row0, per_group);
        be_->dispatch(*walk_, TreeWalkPush{p_, {row0, end, groups}}, groups);
      }
      return;
    }
    be_->dispatch(*nodes_, p_, static_cast<uint64_t>(p_.batch) * static_cast<uint64_t>(p_.nodes));
    be_->dispatch(*paths_, p_, static_cast<uint64_t>(p_.batch));  // ordered after stage 1 by the stream's barrier
  }

 private:
  VulkanBackend* be_ = nullptr;
  decoding::TreeVerifyParams p_{};
  TreeWalkPlan walk_plan_;
  BufferPtr stats_, scratch_;
  std::unique_ptr<BoundPipeline> nodes_, paths_, walk_;
};

}  // namespace
}  // namespace attnbench::vulkan

ATTNBENCH_IMPL(attnbench::vulkan::VulkanTreeVerify, "tree_verify", "vulkan", "paths");
