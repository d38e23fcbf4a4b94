// The chain verification on CUDA, speculative_sampling's (semantics: reference/decoding/
// speculative_sampling.cpp, and chain_verify.h for rows of their own lengths; task layout:
// speculative_sampling_launch.h).
//
// A group of L lanes takes task (row r, span s); the row verifies its first n = lengths[r] drafts
// (K without lengths):
//   1. acceptance: draft i < n (lanes take i = lane, lane + L, ...) is accepted iff u·q_i(x) <
//      p_i(x) in fp32, u = U("spec.accept", r·K + i); the group's sum is accepted_token_num and its
//      smallest rejected i the stop (n when none). Span 0 writes the accepted drafts, −1 after
//      them (the stop position itself is the race's), emitted and emitted_draft_token_num.
//   2. race at position t = stop over the span's tokens: key_x = logf(w_x) − logf(−logf(u_x)),
//      u_x = U("spec.race", (r·(K+1) + t)·V + x), w = max(0, p_t − q_t) after a rejection, p_n for
//      the bonus (draw indices at stride K whatever n, so a row's draws do not depend on it);
//      lanes take whole Philox blocks in turn (4 consecutive tokens each: one float4 of p and of q
//      when V % 4 == 0, since every row and block then starts on a multiple of 4), keep their
//      first best key (strictly greater replaces), and the group merges (larger key, then smaller
//      index). After a rejection the same pass also races over p with the same uniforms:
//      the spec's fallback when the residual is zero everywhere, known only once the whole
//      vocabulary is seen. A race whose keys are all −inf goes to the smallest index with w > 0.
// The race itself is the family's stage (race.cuh).
#include "../runtime/entry_result.h"
#include "../runtime/launch.cuh"
#include "race.cuh"
#include "speculative_sampling_launch.h"

namespace attnbench::cuda::speculative {
namespace {

__device__ __forceinline__ DevicePhilox accept_site(const Params& p) {
  return DevicePhilox::make(static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo, p.s.accept_stream, p.domain);
}
__device__ __forceinline__ DevicePhilox race_site(const Params& p) {
  return DevicePhilox::make(static_cast<uint64_t>(p.s.seed_hi) << 32 | p.s.seed_lo, p.s.race_stream, p.domain);
}

// The drafts row r verifies.
__device__ __forceinline__ int row_length(const Params& p, int64_t r) { return p.lengths ? p.lengths[r] : p.s.draft_len; }

__device__ __forceinline__ RaceBest no_best() { return {race::none(), race::none()}; }

__device__ __forceinline__ void merge(RaceBest& a, const RaceBest& b) {
  race::merge(a.w, b.w);
  race::merge(a.p, b.p);
}
__device__ __forceinline__ void group_merge(RaceBest& b, unsigned mask, int lanes) {
  race::group_merge(b.w, mask, lanes);
  race::group_merge(b.p, mask, lanes);
}

// The emitted token of a finished race (residual: the race was over max(0, p − q)).
__device__ __forceinline__ int32_t winner(const RaceBest& b, bool residual) {
  // The residual is zero everywhere: the race over p. (Choosing the token, not the candidate: a
  // reference to one of two structs chosen at run time would put both in local memory.)
  return residual && b.w.first == race::kNoToken ? race::winner(b.p) : race::winner(b.w);
}

// One Philox block (tokens xb .. xb+3) of a lane's race over [x0, x1) of p (and q: residual).
__device__ __forceinline__ void race_block(const float* pt, const float* qt, bool vec, int x0, int x1, int64_t xb,
                                           uint4 words, RaceBest& best) {
  float pv[4], qv[4];
  if (vec && xb >= x0 && xb + 4 <= x1) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(pt + xb));
    const float4 b = qt ? __ldg(reinterpret_cast<const float4*>(qt + xb)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    pv[0] = a.x, pv[1] = a.y, pv[2] = a.z, pv[3] = a.w;
    qv[0] = b.x, qv[1] = b.y, qv[2] = b.z, qv[3] = b.w;
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const bool in = xb + e >= x0 && xb + e < x1;
      pv[e] = in ? __ldg(pt + xb + e) : 0.0f;
      qv[e] = in && qt ? __ldg(qt + xb + e) : 0.0f;
    }
  }
  const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (xb + e < x0 || xb + e >= x1) continue;
    const int32_t x = static_cast<int32_t>(xb + e);
    const float noise = race::log_neg_log(word[e]);
    race::consider(best.w, logf(qt ? fmaxf(pv[e] - qv[e], 0.0f) : pv[e]), noise, x);
    if (qt) race::consider(best.p, logf(pv[e]), noise, x);
  }
}

__global__ void __launch_bounds__(kRaceThreads) race_kernel(const Params p) {
  const int L = p.lanes;
  const int64_t task = (static_cast<int64_t>(blockIdx.x) * kRaceThreads + threadIdx.x) / L;
  if (task >= int64_t{p.s.rows} * p.spans) return;  // whole groups: `task` is the same on all lanes of one
  const int gl = static_cast<int>(threadIdx.x) & (L - 1);
  const unsigned mask = race::group_mask(L);
  const int64_t r = task / p.spans;
  const int span = static_cast<int>(task % p.spans);
  const int K = p.s.draft_len, V = p.s.vocab;
  const int64_t pr = decoding::prob_row_of(p.s, r);

  const int n = row_length(p, r);
  const DevicePhilox accept = accept_site(p);
  int n_accepted = 0, stop = n;
  for (int i = gl; i < n; i += L) {
    const int32_t x = p.ids[r * K + i];
    const float pv = p.target[(pr * (K + 1) + i) * V + x], qv = p.draft[(pr * K + i) * V + x];
    const float u = DevicePhilox::uniform_of(accept.word(decoding::accept_index(p.s, r, i)));
    const bool ok = __fmul_rn(u, qv) < pv;  // q = 0 accepts iff p > 0
    n_accepted += ok ? 1 : 0;
    if (!ok) stop = min(stop, i);
  }
  for (int off = L >> 1; off > 0; off >>= 1) {
    n_accepted += __shfl_xor_sync(mask, n_accepted, off);
    stop = min(stop, __shfl_xor_sync(mask, stop, off));
  }
  int32_t* row_tokens = p.tokens + r * (K + 1);
  if (span == 0) {
    for (int t = gl; t <= K; t += L)
      if (t != stop) row_tokens[t] = t < stop ? p.ids[r * K + t] : -1;
    if (gl == 0) {
      p.emitted[r] = stop + 1;
      p.emitted_draft[r] = stop;
      p.accepted[r] = n_accepted;
    }
  }

  const bool residual = stop < n;
  const float* pt = p.target + (pr * (K + 1) + stop) * V;
  const float* qt = residual ? p.draft + (pr * K + stop) * V : nullptr;
  const int x0 = span * p.span_tokens, x1 = min(V, x0 + p.span_tokens);
  const bool vec = V % 4 == 0;
  RaceBest best = no_best();
  race::walk_blocks(race_site(p), decoding::race_index(p.s, r, stop, 0), x0, x1, gl, L,
                    [&](int64_t xb, uint4 words) { race_block(pt, qt, vec, x0, x1, xb, words, best); });
  group_merge(best, mask, L);
  if (gl != 0) return;
  if (p.spans == 1) row_tokens[stop] = winner(best, residual);
  else p.partial[task] = best;
}

__global__ void __launch_bounds__(kFinishWarps * 32) finish_kernel(const Params p) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kFinishWarps + (threadIdx.x >> 5);
  if (r >= p.s.rows) return;  // whole warps
  const int lane = static_cast<int>(threadIdx.x & 31);
  RaceBest best = no_best();
  for (int s = lane; s < p.spans; s += 32) merge(best, p.partial[r * p.spans + s]);
  group_merge(best, 0xffffffffu, 32);
  if (lane != 0) return;
  const int K = p.s.draft_len, stop = p.emitted[r] - 1;  // written by span 0 of the race kernel
  p.tokens[r * (K + 1) + stop] = winner(best, stop < row_length(p, r));
}

// The words the kernels draw, through the same helpers (test entry below): accept[r·K + i] and
// race[(r·(K+1) + t)·V + x] for every row, position and token, one group per (r, t, span).
__global__ void __launch_bounds__(kRaceThreads) draws_kernel(const Params p, uint32_t* accept, uint32_t* race) {
  const int L = p.lanes, K = p.s.draft_len, V = p.s.vocab;
  const int64_t task = (static_cast<int64_t>(blockIdx.x) * kRaceThreads + threadIdx.x) / L;
  if (task >= int64_t{p.s.rows} * (K + 1) * p.spans) return;
  const int gl = static_cast<int>(threadIdx.x) & (L - 1);
  const int span = static_cast<int>(task % p.spans), t = static_cast<int>(task / p.spans % (K + 1));
  const int64_t r = task / p.spans / (K + 1);
  if (span == 0 && t == 0) {
    const DevicePhilox site = accept_site(p);
    for (int i = gl; i < K; i += L) accept[r * K + i] = site.word(decoding::accept_index(p.s, r, i));
  }
  const int x0 = span * p.span_tokens, x1 = min(V, x0 + p.span_tokens);
  uint32_t* out = race + (r * (K + 1) + t) * V;
  race::walk_blocks(race_site(p), decoding::race_index(p.s, r, t, 0), x0, x1, gl, L, [&](int64_t xb, uint4 words) {
    const uint32_t word[4] = {words.x, words.y, words.z, words.w};
    for (int e = 0; e < 4; ++e)
      if (xb + e >= x0 && xb + e < x1) out[xb + e] = word[e];
  });
}

}  // namespace

cudaError_t verify_launch(const Params& p, cudaStream_t stream) {
  const int64_t threads = int64_t{p.s.rows} * p.spans * p.lanes;
  cudaError_t e = launch_kernel(race_kernel, dim3(static_cast<unsigned>((threads + kRaceThreads - 1) / kRaceThreads)),
                                dim3(kRaceThreads), 0, stream, p);
  if (e == cudaSuccess && p.spans > 1)
    e = launch_kernel(finish_kernel, dim3(static_cast<unsigned>((p.s.rows + kFinishWarps - 1) / kFinishWarps)),
                      dim3(kFinishWarps * 32), 0, stream, p);
  return e;
}

}  // namespace attnbench::cuda::speculative

// For tests/cuda/decoding/speculative_sampling_cuda_test.cpp (found with dlsym, as philox_words.cu's entry):
// the Philox words the kernels draw for the rows of a case (its parameters s: shape, seed and
// streams), walked span by span like the race (span_tokens a multiple of 4, lanes 4..32), into
// host arrays accept [rows·K] and race [rows·(K+1)·V]. The kernels' uniform of a word is DevicePhilox::uniform_of, checked by
// tests/cuda/runtime/philox_cuda_test.cpp. Returns 0, or −1 with a message in err.
extern "C" int attnbench_cuda_spec_draws(const attnbench::decoding::SpeculativeParams* s, uint32_t domain,
                                         int span_tokens, int lanes, uint32_t* accept, uint32_t* race, char* err,
                                         size_t err_len) {
  using namespace attnbench::cuda;
  using namespace attnbench::cuda::speculative;
  Params p{};
  p.s = *s;
  const int64_t rows = s->rows;
  const int draft_len = s->draft_len, vocab = s->vocab;
  p.span_tokens = span_tokens;
  p.spans = (vocab + span_tokens - 1) / span_tokens;
  p.lanes = lanes;
  p.domain = domain;
  const size_t n_accept = static_cast<size_t>(rows) * draft_len, n_race = static_cast<size_t>(rows) * (draft_len + 1) * vocab;
  uint32_t *d_accept = nullptr, *d_race = nullptr;
  cudaError_t e = cudaMalloc(&d_accept, n_accept * sizeof(uint32_t));
  if (e == cudaSuccess) e = cudaMalloc(&d_race, n_race * sizeof(uint32_t));
  if (e == cudaSuccess) {
    const int64_t threads = rows * (draft_len + 1) * p.spans * lanes;
    e = launch_kernel(draws_kernel, dim3(static_cast<unsigned>((threads + kRaceThreads - 1) / kRaceThreads)), dim3(kRaceThreads),
                      0, nullptr, p, d_accept, d_race);
  }
  if (e == cudaSuccess) e = cudaMemcpy(accept, d_accept, n_accept * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(race, d_race, n_race * sizeof(uint32_t), cudaMemcpyDeviceToHost);
  (void)cudaFree(d_accept);
  (void)cudaFree(d_race);
  return entry_result(e, err, err_len);
}
