// kivi_decode on CUDA (variant "fused"): decode attention straight from KIVI's packed 2/4-bit cache
// (kivi_decode.cuh: the codes dequantized in registers), then kivi_decode.cu's combine when the
// keys are split.
// The plan, fixed in prepare(): the GQA group's query rows in blocks of at most kivi::max_rows (8,
// or 4 past head_dim 128; as few blocks as hold them, balanced: a group of 14 is two blocks of 7),
// the kernel whose row tile holds a block; the keys split in whole warp tiles when the (sequence,
// KV head, block) CTAs are too few for the device: FlashAttention-2's rule (the fewest splits whose
// wave efficiency is within 85% of the best, none when the CTAs alone nearly fill a wave), at most
// one split per warp tile of the longest sequence and kivi::kMaxSplits.
#include <algorithm>
#include <cmath>
#include <vector>

#include "../runtime/cuda_backend.h"
#include "../runtime/cuda_check.h"
#include "../runtime/split_rule.h"
#include "attention/elem_of.h"
#include "attnbench/error.h"
#include "attnbench/impl.h"
#include "kivi_decode_launch.h"

namespace attnbench::cuda {
namespace {

using KiviConfigure = cudaError_t (*)(int, int*);
using KiviLaunch = cudaError_t (*)(const kivi::Args&, cudaStream_t);

struct KiviKernel {
  KiviConfigure configure;
  KiviLaunch launch;
};

KiviKernel kivi_kernel(attn::Elem e, int bits) {
  using attn::Elem;
  if (e == Elem::f16)
    return bits == 2 ? KiviKernel{kivi::decode_configure<Elem::f16, 2>, kivi::decode_launch<Elem::f16, 2>}
                     : KiviKernel{kivi::decode_configure<Elem::f16, 4>, kivi::decode_launch<Elem::f16, 4>};
  return bits == 2 ? KiviKernel{kivi::decode_configure<Elem::bf16, 2>, kivi::decode_launch<Elem::bf16, 2>}
                   : KiviKernel{kivi::decode_configure<Elem::bf16, 4>, kivi::decode_launch<Elem::bf16, 4>};
}

std::string kivi_unsupported(const Case& c) {
  if (c.dtype != DType::f16 && c.dtype != DType::bf16)
    return cat("dtype ", dtype_name(c.dtype), ": KIVI's scales and windows are f16 or bf16");
  const kvcomp::KiviParams s = kvcomp::kivi_params(c);
  if (s.head_dim > kivi::kMaxHeadDim)
    return cat("head_dim=", s.head_dim, ": the kernel's value phase gives each lane 8 channels of a row, so rows up to ",
               kivi::kMaxHeadDim);
  if (s.batch > 65535 || s.kv_heads > 65535) return "batch and kv_heads are grid dimensions: at most 65535 each";
  return {};
}

class CudaKiviDecode final : public Impl {
 public:
  Support supports(const Case& c, const DeviceLimits&) const override {
    const std::string why = kivi_unsupported(c);
    return why.empty() ? Support::yes() : Support::no(why);
  }

  void prepare(const Case& c, Backend& backend, const IoBuffers& io) override {
    CudaBackend& be = as_cuda(backend);
    stream_ = be.stream();
    const std::string why = kivi_unsupported(c);
    ATTNBENCH_ASSERT(why.empty(), "prepare() of a kivi_decode case the cuda impl refused: ", why);
    elem_ = *elem_of(c.dtype);
    const kvcomp::KiviParams s = kvcomp::kivi_params(c);
    kernel_ = kivi_kernel(elem_, s.bits);

    kivi::Args& a = args_;
    a = kivi::Args{};
    a.s = s;
    a.q = io["q"].ptr();
    a.k_codes = io["k_codes"].ptr<uint32_t>();
    a.k_scale = io["k_scale"].ptr();
    a.k_min = io["k_min"].ptr();
    a.k_full = io["k_full"].ptr();
    a.v_codes = io["v_codes"].ptr<uint32_t>();
    a.v_scale = io["v_scale"].ptr();
    a.v_min = io["v_min"].ptr();
    a.v_full = io["v_full"].ptr();
    a.kv_len = io["kv_len"].ptr<int32_t>();
    a.o = io["O"].ptr();
    a.lse = io["LSE"].ptr<float>();
    const int max_rows = kivi::max_rows(s.head_dim);
    a.row_blocks = (s.group + max_rows - 1) / max_rows;
    a.rows = (s.group + a.row_blocks - 1) / a.row_blocks;

    int ctas_per_sm = 0;
    ATTNBENCH_CUDA_CHECK(kernel_.configure(a.rows, &ctas_per_sm));
    const int64_t base = int64_t{s.batch} * s.kv_heads * a.row_blocks;
    const int64_t slots = int64_t{be.props().multiProcessorCount} * std::max(1, ctas_per_sm);
    const int64_t tile = kivi::warp_tile(kivi::row_tile(a.rows));
    const int64_t tiles = (int64_t{s.kv_cap} + tile - 1) / tile;
    const int64_t want = choose_splits(base, slots, std::min<int64_t>(tiles, kivi::kMaxSplits));
    // As the kernel cuts them: whole tiles per split, so the last splits of `want` may be empty.
    const int64_t tiles_per_split = (tiles + want - 1) / std::max<int64_t>(1, want);
    a.splits = static_cast<int>(std::max<int64_t>(1, (tiles + tiles_per_split - 1) / std::max<int64_t>(1, tiles_per_split)));

    part_ml_.reset();
    part_o_.reset();
    if (a.splits > 1) {
      const size_t parts = static_cast<size_t>(s.batch) * s.q_heads * a.splits;
      part_ml_ = be.allocator().allocate(parts * 2 * sizeof(float), "kivi_decode.split_ml");
      part_o_ = be.allocator().allocate(parts * s.head_dim * sizeof(float), "kivi_decode.split_o");
      a.part_ml = part_ml_->ptr<float>();
      a.part_o = part_o_->ptr<float>();
    }
  }

  void run() override {
    check_not_lost();
    ATTNBENCH_CUDA_CHECK(kernel_.launch(args_, stream_));
    if (args_.splits > 1) ATTNBENCH_CUDA_CHECK(kivi::combine_launch(elem_, args_, stream_));
  }

 private:
  cudaStream_t stream_ = nullptr;
  attn::Elem elem_ = attn::Elem::f16;
  KiviKernel kernel_{};
  kivi::Args args_{};
  BufferPtr part_ml_, part_o_;
};

}  // namespace
}  // namespace attnbench::cuda

ATTNBENCH_IMPL(attnbench::cuda::CudaKiviDecode, "kivi_decode", "cuda", "fused");
