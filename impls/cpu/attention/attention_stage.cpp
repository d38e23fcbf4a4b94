// The CPU attention stage (attention_stage.h).
#include "attention_stage.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "attnbench/error.h"

namespace attnbench::cpu::attn {

StageIo case_io(const attention::AttentionParams& s, const IoBuffers& io, const float* row_gates) {
  StageIo sio{io["q"].ptr(), io["k"].ptr(), io["v"].ptr(), io[s.key_index ? "idx_len" : "kv_len"].ptr<int32_t>(), io["O"].ptr(),
              io["LSE"].ptr<float>(), s.alibi ? io["alibi_slopes"].ptr<float>() : nullptr, row_gates};
  add_rope_io(sio, s, io);
  if (s.key_index) sio.key_idx = io["key_idx"].ptr<int32_t>();
  if (s.key_bias) sio.key_bias = io["key_bias"].ptr<float>();
  if (s.tree_mask) sio.tree_mask = io["tree_mask"].ptr<int32_t>();
  return sio;
}

void add_rope_io(StageIo& sio, const attention::AttentionParams& s, const IoBuffers& io) {
  if (s.rope_dim == 0) return;
  sio.q_positions = io["q_positions"].ptr<int32_t>();
  sio.k_positions = io["k_positions"].ptr<int32_t>();
  sio.inv_freq = io["inv_freq"].ptr<float>();
}

void AttentionStage::prepare(const attention::AttentionParams& s, DType dtype, const StageIo& io, CpuBackend& cpu) {
  pool_ = &cpu.pool();
  kernels_ = &cpu.kernels<KernelTable>();
  rope_kernels_ = &cpu.kernels<rope_kernel::Kernels>();
  const int64_t w = kernels_->vector_width;
  problem_ = {s, dtype, (s.head_dim + w - 1) / w * w, (s.v_head_dim + w - 1) / w * w, s.scale,
              io.q, io.k, io.v, io.kv_len, io.o, io.lse, io.alibi_slopes, io.row_gates, nullptr, nullptr};
  ATTNBENCH_ASSERT(!s.key_index || (io.key_idx && s.q_len == 1 && !s.window && !s.sinks && !s.alibi && !s.rope_dim),
                   "gathered attention: index lists, one query, no positional pattern");
  ATTNBENCH_ASSERT(!s.key_bias || io.key_bias, "key_bias attention without its bias");
  problem_.key_idx = io.key_idx;
  problem_.key_bias = io.key_bias;
  ATTNBENCH_ASSERT(!s.tree_mask || (io.tree_mask && s.causal), "tree attention without its mask or the causal mask");
  problem_.tree_mask = io.tree_mask;
  rows_ = int64_t{s.group} * s.q_len;
  groups_ = int64_t{s.batch} * s.kv_heads;
  if (s.head_sparse) {
    ATTNBENCH_ASSERT(io.row_gates, "head_sparse attention without row_gates");
    row_map_ = cpu.allocator().allocate(groups_ * rows_ * sizeof(int32_t), "attention.row_map");
    row_count_ = cpu.allocator().allocate(groups_ * sizeof(int32_t), "attention.row_count");
    problem_.row_map = row_map_->ptr<int32_t>();
    problem_.row_count = row_count_->ptr<int32_t>();
  }
  if (s.rope_dim > 0) {
    ATTNBENCH_ASSERT(io.q_positions && io.k_positions && io.inv_freq, "rope attention without its positions");
    q_positions_ = io.q_positions;
    k_positions_ = io.k_positions;
    inv_freq_ = io.inv_freq;
    const int64_t row = 2 * int64_t{s.rope_dim} * sizeof(float);
    q_rope_ = cpu.allocator().allocate(std::max<int64_t>(1, int64_t{s.batch} * s.q_len * row), "attention.q_rope");
    k_rope_ = cpu.allocator().allocate(std::max<int64_t>(1, int64_t{s.batch} * s.kv_cap * row), "attention.k_rope");
    rope_fused_ = cpu.rope_fused();
    if (rope_fused_) {
      problem_.q_rope = q_rope_->ptr<float>();
      problem_.k_rope = k_rope_->ptr<float>();
      problem_.rope = attention::rope_pass(s, true);
    } else {
      const size_t es = dtype_size(dtype);
      q_in_ = io.q;
      k_in_ = io.k;
      q_rot_ = cpu.allocator().allocate(std::max<size_t>(1, size_t{static_cast<uint32_t>(s.batch)} * s.q_heads * s.q_len * s.head_dim * es),
                                        "attention.q_rot");
      k_rot_ = cpu.allocator().allocate(std::max<size_t>(1, size_t{static_cast<uint32_t>(s.batch)} * s.kv_heads * s.kv_cap * s.head_dim * es),
                                        "attention.k_rot");
      problem_.q = q_rot_->ptr();
      problem_.k = k_rot_->ptr();
    }
  }
  const int64_t threads = pool_->size();
  if (rows_ <= kDirectRows) {
    // Enough splits for about 16 tasks per thread, each at least 1024 keys long: tasks are
    // handed out dynamically, so a thread slowed by other work on the machine costs little.
    // The splits cut the keys a group's rows see: with a window, its last window + q_len − 1
    // keys (the sinks go with the first split), so decode time stays flat in kv_len.
    const int64_t want = (16 * threads + groups_ - 1) / groups_;
    span_ = attention::split_span(s);
    splits_ = std::clamp<int64_t>(std::min<int64_t>(want, span_ / 1024), 1, 64);
    row_blocks_ = 1;
  } else {
    splits_ = 1;
    row_blocks_ = (rows_ + kMaxRowsPerTask - 1) / kMaxRowsPerTask;
  }
  split_len_ = splits_ > 1 ? (span_ + splits_ - 1) / splits_ : s.kv_cap;
  scratch_stride_ = scratch_floats(problem_.dp, problem_.dvp);
  // bf16 tasks of many rows on the tiles; decode (few rows) stays bound by reading K and V. The
  // tiles' packing takes V as wide as K, in its own rows.
  amx_ = cpu.amx() && dtype == DType::bf16 && rows_ > kDirectRows && s.v_head_dim == s.head_dim && s.v_stride == s.head_dim &&
         !rope_fused_ && !s.key_index && !s.key_bias;
  if (amx_) {
    packed_ = amx::packed_shape(s);
    packed_k_ = cpu.allocator().allocate(amx::k_elements(packed_) * 2, "attention.amx_k");
    packed_v_ = cpu.allocator().allocate(amx::v_elements(packed_) * 2, "attention.amx_v");
    packed_.k = packed_k_->ptr<uint16_t>();
    packed_.v = packed_v_->ptr<uint16_t>();
    scratch_stride_ = std::max(scratch_stride_, amx::scratch_floats(packed_));
  }
  if (s.rope_dim > 0 && !rope_fused_)  // rope's rotate kernel runs on the same scratch
    scratch_stride_ = std::max<size_t>(scratch_stride_, 2 * rope_kernel::kMaxHeadDim + 64);
  scratch_ = cpu.allocator().allocate(scratch_stride_ * threads * sizeof(float), "attention.scratch");
  if (splits_ > 1) {
    const int64_t per_split = rows_ * (problem_.dvp + 2);
    partials_ = cpu.allocator().allocate(groups_ * splits_ * per_split * sizeof(float), "attention.partials");
  }
}

std::string AttentionStage::compute_ceiling() const { return amx_ ? kAmxBf16Ceiling : ""; }

// Each group's active rows in packed order, r = i·G + hh; the skipped rows' O = 0 and LSE = −inf.
void AttentionStage::map_rows() {
  const attention::AttentionParams& s = problem_.s;
  const int64_t G = s.group, es = static_cast<int64_t>(dtype_size(problem_.dtype));
  int32_t* map = row_map_->ptr<int32_t>();
  int32_t* count = row_count_->ptr<int32_t>();
  pool_->parallel_for(groups_, [&](int64_t begin, int64_t end) {
    for (int64_t group = begin; group < end; ++group) {
      const int64_t b = group / s.kv_heads, g = group % s.kv_heads;
      int32_t n = 0;
      for (int64_t r = 0; r < rows_; ++r) {
        const int64_t row = (b * s.q_heads + g * G + r % G) * s.q_len + r / G;
        if (problem_.row_gates[row] != 0.0f) {
          map[group * rows_ + n++] = static_cast<int32_t>(r);
          continue;
        }
        std::memset(static_cast<char*>(problem_.o) + row * s.v_head_dim * es, 0, s.v_head_dim * es);
        problem_.lse[row] = -INFINITY;
      }
      count[group] = n;
    }
  });
}

// Each query's and each key's rotation (rope's coefficient rows): positions are per sequence, so a
// row serves every head. Fused, the kernels read them as they load q and k; else rope's rotate
// kernel writes the rotated copies here (q's rows, then k's), on the attention scratch.
void AttentionStage::rope_pass() {
  const attention::AttentionParams& s = problem_.s;
  const auto& kernels = *rope_kernels_;
  for (const bool keys : {false, true}) {
    rope_kernel::Job job{};
    job.s = attention::rope_pass(s, keys);
    job.dtype = problem_.dtype;
    job.positions = keys ? k_positions_ : q_positions_;
    job.inv_freq = inv_freq_;
    float* table = keys ? k_rope_->ptr<float>() : q_rope_->ptr<float>();
    pool_->parallel_for(int64_t{s.batch} * job.s.tokens, [&](int64_t begin, int64_t end) { kernels.coefficients(job, begin, end, table); },
                        64);
    if (rope_fused_) continue;
    // One index space of q's rows then k's; this job has rows of one of them only.
    job.q = job.k = keys ? k_in_ : q_in_;
    job.q_rot = job.k_rot = keys ? k_rot_->ptr() : q_rot_->ptr();
    const int64_t rows = int64_t{s.batch} * (keys ? s.kv_heads : s.q_heads) * job.s.tokens;
    float* scratch = scratch_->ptr<float>();
    pool_->parallel_for_slots(rows, [&](int64_t begin, int64_t end, unsigned slot) {
      kernels.rotate(job, table, begin, end, scratch + slot * scratch_stride_);
    }, 256);
  }
}

void AttentionStage::run() {
  if (problem_.s.rope_dim > 0) rope_pass();
  if (problem_.s.head_sparse) map_rows();
  if (amx_) {
    const int64_t blocks = packed_.keys / amx::kBlockKeys;
    pool_->parallel_for(packed_.groups * blocks, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) amx::pack(problem_, packed_, t / blocks, t % blocks);
    });
  }
  const int64_t kv_heads = problem_.s.kv_heads;
  float* scratch = scratch_->ptr<float>();
  const int64_t per_split = rows_ * (problem_.dvp + 2);
  pool_->parallel_for_slots(groups_ * row_blocks_ * splits_, [&](int64_t begin, int64_t end, unsigned slot) {
    float* my_scratch = scratch + slot * scratch_stride_;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t split = t % splits_, rb = (t / splits_) % row_blocks_, group = t / (splits_ * row_blocks_);
      const int64_t b = group / kv_heads, g = group % kv_heads;
      // With head_sparse the group's rows are its map's positions, fewer than rows_.
      const int64_t rows = problem_.row_count ? problem_.row_count[group] : rows_;
      const int64_t r0 = rb * kMaxRowsPerTask, r1 = std::min(rows, r0 + kMaxRowsPerTask);
      if (r0 >= r1) continue;
      if (amx_ && r1 - r0 > kDirectRows) {
        amx::attend_many(problem_, packed_, b, g, r0, r1, my_scratch);
      } else if (splits_ == 1) {
        kernels_->attend(problem_, b, g, r0, r1, 0, problem_.s.kv_cap, my_scratch, nullptr);
      } else {
        float* base = partials_->ptr<float>() + (group * splits_ + split) * per_split;
        const PartialOut out{base, base + rows_, base + 2 * rows_};
        const int64_t first = window_first_key(b, g);  // 0 without a window
        kernels_->attend(problem_, b, g, 0, rows, split == 0 ? 0 : first + split * split_len_,
                         first + (split + 1) * split_len_, my_scratch, &out);
      }
    }
  });
  if (splits_ > 1) merge_splits();
}

// Where group (b, g)'s splits start (attention_common.h split_origin; 0 without a window).
int64_t AttentionStage::window_first_key(int64_t b, int64_t g) const {
  const attention::AttentionParams& s = problem_.s;
  return attention::split_origin(s, problem_.kv_len[attention::kv_len_index(s, b, g)]);
}

// O = Σ_s e^(m_s − M)·O_s / Σ_s e^(m_s − M)·l_s with M = max_s m_s; LSE = M + log L.
void AttentionStage::merge_splits() {
  const attention::AttentionParams& s = problem_.s;
  const int64_t dp = problem_.dvp, G = s.group, per_split = rows_ * (dp + 2);
  const size_t es = dtype_size(problem_.dtype);
  pool_->parallel_for(groups_, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(dp);
    for (int64_t group = begin; group < end; ++group) {
      const int64_t b = group / s.kv_heads, g = group % s.kv_heads;
      const float* base = partials_->ptr<float>() + group * splits_ * per_split;
      const int64_t rows = problem_.row_count ? problem_.row_count[group] : rows_;
      for (int64_t r = 0; r < rows; ++r) {  // the partials are laid out by task position
        float m = -INFINITY;
        for (int64_t sp = 0; sp < splits_; ++sp) m = std::max(m, base[sp * per_split + r]);
        const int64_t packed = attention::packed_row(s, problem_.row_map, b, g, r);
        const int64_t h = g * G + packed % G, i = packed / G, row = (b * s.q_heads + h) * s.q_len + i;
        std::fill(acc.begin(), acc.end(), 0.0f);
        float l = 0;
        if (m != -INFINITY) {
          for (int64_t sp = 0; sp < splits_; ++sp) {
            const float* part = base + sp * per_split;
            if (part[rows_ + r] == 0.0f) continue;
            const float w = std::exp(part[r] - m);
            l += w * part[rows_ + r];
            const float* o = part + 2 * rows_ + r * dp;
            for (int64_t x = 0; x < dp; ++x) acc[x] += w * o[x];
          }
        }
        char* out = static_cast<char*>(problem_.o) + row * s.v_head_dim * static_cast<int64_t>(es);
        if (l == 0.0f) {
          for (int64_t x = 0; x < s.v_head_dim; ++x) store(out, x, 0.0f);
          problem_.lse[row] = -INFINITY;
        } else {
          const float gate = s.head_sparse ? problem_.row_gates[row] : 1.0f;
          for (int64_t x = 0; x < s.v_head_dim; ++x) store(out, x, acc[x] / l * gate);
          problem_.lse[row] = m + std::log(l);
        }
      }
    }
  });
}

void AttentionStage::store(char* out, int64_t x, float v) const {
  switch (problem_.dtype) {
    case DType::f32: std::memcpy(out + 4 * x, &v, 4); break;
    case DType::f16: { const uint16_t h = f32_to_f16(v); std::memcpy(out + 2 * x, &h, 2); break; }
    default: { const uint16_t h = f32_to_bf16(v); std::memcpy(out + 2 * x, &h, 2); break; }
  }
}

}  // namespace attnbench::cpu::attn
