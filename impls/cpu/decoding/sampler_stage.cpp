#include "sampler_stage.h"

#include <algorithm>
#include <cmath>

#include "attnbench/rng.h"
#include "reference/decoding/arithmetic_common.h"

namespace attnbench::cpu {

// One pool slot's working memory, carved from one allocation.
struct SamplerStage::Scratch {
  int32_t* counts;      // [kBuckets]
  double* mass;         // [kBuckets]
  sampler::Token* top;  // [vocab]: top-k's bucket, then top-p's
  float* log_w;         // [vocab]
  float* e;             // [vocab]: a processor's exp(log_w − m)
  uint32_t* words;      // the race's uniforms
};

namespace {

size_t round_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Below one kept token in this many, the race draws the kept tokens' uniforms one by one.
constexpr int64_t kFewKeptShare = 256;

struct Layout {
  size_t counts, mass, top, log_w, e, words, total;
  explicit Layout(int64_t V) {
    const auto v = static_cast<size_t>(V);
    counts = 0;
    mass = counts + round_up(sizeof(int32_t) * sampler::kBuckets);
    top = mass + round_up(sizeof(double) * sampler::kBuckets);
    log_w = top + round_up(sizeof(sampler::Token) * v);
    e = log_w + round_up(sizeof(float) * v);
    words = e + round_up(sizeof(float) * v);
    total = words + round_up(sizeof(uint32_t) * race::race_scratch_words(V));
  }
};

}  // namespace

void SamplerStage::prepare(const Case& c, Backend& backend, const IoBuffers& io) {
  CpuBackend& cpu = as_cpu(backend);
  pool_ = &cpu.pool();
  kernels_ = &cpu.kernels<sampler::Kernels>();
  race_ = &cpu.kernels<race::Kernels>();
  p_ = decoding::sampler_params(c);
  site_ = {p_.seed_lo, p_.seed_hi, p_.race_stream, kDomainDraws};
  draws_ = PhiloxStream(c.seed, p_.race_stream, kDomainDraws);
  offsets_ = PhiloxStream(c.seed, p_.arith_stream, kDomainDraws);
  logits_ = io["logits"].ptr<float>();
  kept_ = io["kept"].ptr<uint32_t>();
  token_ = io[p_.gumbel_k > 0 ? "tokens" : "token"].ptr<int32_t>();
  const Layout layout(p_.vocab);
  scratch_.clear();
  for (unsigned slot = 0; slot < pool_->size(); ++slot)
    scratch_.push_back(backend.allocator().allocate(layout.total, "sampler.scratch"));
}

void SamplerStage::run() {
  const Layout layout(p_.vocab);
  const auto scratch = [&](unsigned slot) {
    auto* base = scratch_[slot]->ptr<unsigned char>();
    return Scratch{reinterpret_cast<int32_t*>(base + layout.counts), reinterpret_cast<double*>(base + layout.mass),
                   reinterpret_cast<sampler::Token*>(base + layout.top), reinterpret_cast<float*>(base + layout.log_w),
                   reinterpret_cast<float*>(base + layout.e), reinterpret_cast<uint32_t*>(base + layout.words)};
  };
  if (p_.arith_codes > 0) {
    // Arithmetic sampling: a sequence's steps in order (its code carried), sequences in parallel.
    const int64_t S = p_.rows / p_.arith_steps;
    pool_->parallel_for_slots(S, [&](int64_t begin, int64_t end, unsigned slot) {
      Scratch s = scratch(slot);
      for (int64_t q = begin; q < end; ++q) {
        const int64_t prompt = q / p_.arith_codes;
        uint64_t code = (offsets_.word(2 * prompt) | static_cast<uint64_t>(offsets_.word(2 * prompt + 1)) << 32) +
                        decoding::arithmetic_lattice(q % p_.arith_codes, p_.arith_codes);
        for (int64_t t = 0; t < p_.arith_steps; ++t) run_row(t * S + q, s, &code);
      }
    });
    return;
  }
  pool_->parallel_for_slots(p_.rows, [&](int64_t begin, int64_t end, unsigned slot) {
    Scratch s = scratch(slot);
    for (int64_t r = begin; r < end; ++r) run_row(r, s, nullptr);
  });
}

namespace {

// f(x) for each kept token, in index order.
template <typename F>
void for_each_kept(const uint32_t* mask, int64_t words, F&& f) {
  for (int64_t w = 0; w < words; ++w)
    for (uint32_t bits = mask[w]; bits != 0; bits &= bits - 1) f(w * 32 + __builtin_ctz(bits));
}

void drop(uint32_t* mask, float* log_w, int64_t x) {
  mask[x / 32] &= ~(1u << (x % 32));
  log_w[x] = -INFINITY;
}

// The best `cap` kept tokens (log_w finite) into top[], best first (key descending, the smaller
// index first), in one pass: a heap of the best so far, which a token enters only when its key
// beats the heap's worst (tokens come in index order, so an equal key never does). token_of(x)
// makes a token's entry. Returns how many.
template <typename TokenOf>
int64_t best_kept(const float* log_w, int64_t V, int64_t cap, sampler::Token* top, TokenOf token_of) {
  const auto better = [](const sampler::Token& a, const sampler::Token& b) {
    return a.key > b.key || (a.key == b.key && a.index < b.index);
  };
  int64_t n = 0;
  for (int64_t x = 0; x < V; ++x) {
    if (!(log_w[x] > -INFINITY)) continue;
    const sampler::Token t = token_of(x);
    if (n < cap) {
      top[n++] = t;
      std::push_heap(top, top + n, better);  // the worst on top
    } else if (t.key > top[0].key) {
      std::pop_heap(top, top + n, better);
      top[n - 1] = t;
      std::push_heap(top, top + n, better);
    }
  }
  std::sort_heap(top, top + n, better);
  return n;
}

}  // namespace

// The probability floor (epsilon, eta): Z and S from the kept set (kept_moments, vectorised:
// H = ln Z + S/Z); a kept token stays when e ≥ floor·Z or its logit is the row's max (the top
// token and its ties).
void SamplerStage::apply_floor(const float* l, float m, float lmax, uint32_t* mask, float* log_w, float* e) const {
  double Z = 0, S = 0;
  kernels_->kept_moments(log_w, p_.vocab, m, e, &Z, &S);
  double floor = p_.cutoff;
  if (p_.cutoff_entropy) floor = std::min(floor, std::sqrt(floor) * std::exp(-(std::log(Z) + S / Z)));
  const double floor_e = floor * Z;
  for_each_kept(mask, p_.mask_words, [&](int64_t x) {
    if (l[x] != lmax && e[x] < floor_e) drop(mask, log_w, x);
  });
}

// Typical: s = |d − c| with c = −S/Z, the mean of d under p (so s = |−ln p − H|). By key of −s (a
// larger key, a smaller s) the kept tokens' masses go to buckets; the bucket where the mass from
// the top reaches typical_fx / 2^32 of Z holds the threshold, and its tokens, ordered, give the key
// where it is reached: every kept token with a key at or above it stays (ties included).
void SamplerStage::apply_typical(float m, uint32_t* mask, float* log_w, Scratch& s) const {
  using sampler::kBuckets;
  const int64_t words = p_.mask_words;
  double Z = 0, S = 0;
  kernels_->kept_moments(log_w, p_.vocab, m, s.e, &Z, &S);
  const auto c = static_cast<float>(-S / Z);
  const auto key_of = [&](int64_t x) { return sampler::order_key(-std::abs((log_w[x] - m) - c)); };
  std::fill(s.mass, s.mass + kBuckets, 0.0);
  for_each_kept(mask, words, [&](int64_t x) { s.mass[sampler::bucket_of(key_of(x))] += s.e[x]; });
  const double target = std::ldexp(static_cast<double>(p_.typical_fx), -32) * Z;
  double before = 0;
  int32_t b = kBuckets - 1;
  while (b > 0 && before + s.mass[b] < target) before += s.mass[b--];
  int64_t n = 0;
  for_each_kept(mask, words, [&](int64_t x) {
    const uint32_t key = key_of(x);
    if (sampler::bucket_of(key) == b) s.top[n++] = {static_cast<int32_t>(x), key, 0.0f, s.e[x]};
  });
  std::sort(s.top, s.top + n, [](const sampler::Token& a, const sampler::Token& t) { return a.key > t.key; });
  // Where the mass is reached; the bucket's last key when rounding leaves it just short.
  uint32_t cut = n > 0 ? s.top[n - 1].key : 0;
  for (int64_t i = 0; i < n; ++i)
    if ((before += s.top[i].e) >= target) {
      cut = s.top[i].key;
      break;
    }
  for_each_kept(mask, words, [&](int64_t x) {
    if (key_of(x) < cut) drop(mask, log_w, x);
  });
}

// Top-H: Z from the kept set's moments (kept_moments), L = ln Z, and each kept token's weight
// w = e·(L − d) = Z·h. The top N kept tokens by the logits' own order keys (the reference's order
// of fp64 z, exactly) in one pass (best_kept). The first m stay, m the longest prefix with
// Σ w ≤ alpha·Σ_{top N} w, at least 1; the mask and log-weights are rewritten from them.
void SamplerStage::apply_top_h(const float* l, float m, uint32_t* mask, float* log_w, Scratch& s) const {
  const int64_t V = p_.vocab;
  double Z = 0, S = 0;
  kernels_->kept_moments(log_w, V, m, s.e, &Z, &S);
  const double L = std::log(Z);
  const int64_t n = best_kept(log_w, V, p_.top_h_n, s.top, [&](int64_t x) {
    return sampler::Token{static_cast<int32_t>(x), sampler::order_key(l[x]), log_w[x], s.e[x]};
  });
  const auto w = [&](int64_t i) { return static_cast<double>(s.top[i].e) * (L - (s.top[i].z - m)); };
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += w(i);
  const double budget = p_.top_h_fx != 0 ? std::ldexp(static_cast<double>(p_.top_h_fx), -32) * total : INFINITY;
  int64_t keep = 1;
  for (double run = w(0); keep < n && run + w(keep) <= budget; ++keep) run += w(keep);
  std::fill(mask, mask + p_.mask_words, 0u);
  std::fill(log_w, log_w + V, -INFINITY);
  for (int64_t i = 0; i < keep; ++i) {
    const int32_t x = s.top[i].index;
    mask[x / 32] |= 1u << (x % 32);
    log_w[x] = s.top[i].z;
  }
}

// Gumbel-top-k (gumbel_k = k > 0): the race's key of every kept token (the vectorised kernel
// when many are kept, else one Philox word each), then the k best in one pass (best_kept), then −1.
void SamplerStage::draw_without_replacement(int64_t r, bool many, Scratch& s) const {
  const int64_t V = p_.vocab, k = p_.gumbel_k;
  const uint64_t first = static_cast<uint64_t>(r) * V;
  if (many) race_->log_keys(s.log_w, V, site_, first, s.words, s.e);
  const int64_t n = best_kept(s.log_w, V, k, s.top, [&](int64_t x) {
    const float key = many ? s.e[x] : s.log_w[x] - std::log(-std::log(draws_.uniform_f32(first + x)));
    return sampler::Token{static_cast<int32_t>(x), sampler::order_key(key), key, 0.0f};
  });
  int32_t* out = token_ + r * k;
  for (int64_t i = 0; i < k; ++i) out[i] = i < n ? s.top[i].index : -1;
}

// Arithmetic sampling's pick: e of every kept token (kept_moments), fx = floor(e·2^40), Z = Σ fx
// in token-id order; the token where the running sum first exceeds floor(C·Z / 2^64), and the code
// rescaled into its bucket (arithmetic_common.h).
int32_t SamplerStage::arithmetic_pick(float m, Scratch& s, uint64_t* code) const {
  const int64_t V = p_.vocab;
  double Z = 0, S = 0;
  kernels_->kept_moments(s.log_w, V, m, s.e, &Z, &S);
  const auto fx = [&](int64_t x) { return static_cast<uint64_t>(s.e[x] * 0x1p40f); };  // exact product, truncated
  uint64_t total = 0;
  int64_t last = 0;
  for (int64_t x = 0; x < V; ++x)
    if (s.log_w[x] > -INFINITY) total += fx(x), last = x;
  const uint64_t at = decoding::arithmetic_position(*code, total);
  uint64_t before = 0;
  for (int64_t x = 0; x < V; ++x) {
    if (!(s.log_w[x] > -INFINITY)) continue;
    if (before + fx(x) > at || x == last) {
      *code = decoding::arithmetic_next(*code, total, before, fx(x));
      return static_cast<int32_t>(x);
    }
    before += fx(x);
  }
  return 0;
}

void SamplerStage::run_row(int64_t r, Scratch& s, uint64_t* code) const {
  using sampler::kBuckets;
  const int64_t V = p_.vocab, words = p_.mask_words;
  const float* l = logits_ + decoding::logits_row_of(p_, r) * V;
  uint32_t* mask = kept_ + r * words;
  const float T = p_.temperature;
  int64_t finite = 0;
  const float lmax = kernels_->row_max(l, V, &finite);

  if (T == 0 || finite == 0) {
    // Greedy: the first maximum (token 0 when every logit is −inf). A row with nothing finite
    // keeps nothing and races over nothing: token 0, as the reference.
    std::fill(mask, mask + words, 0u);
    int64_t best = 0;
    if (finite > 0)
      while (l[best] != lmax) ++best;
    if (T == 0) mask[best / 32] = 1u << (best % 32);
    if (p_.gumbel_k > 0) {
      // Without replacement from the kept set: the argmax alone (T = 0), or nothing.
      int32_t* out = token_ + r * p_.gumbel_k;
      std::fill(out, out + p_.gumbel_k, -1);
      if (T == 0) out[0] = static_cast<int32_t>(best);
      return;
    }
    token_[r] = static_cast<int32_t>(best);
    return;
  }

  const float m = lmax / T;  // fp32 division is monotone: the max of z
  sampler::Cut cut;
  int32_t low = 0, gather = -1;
  int64_t need = 0;
  const bool top_k = p_.top_k > 0 && p_.top_k < finite;
  if (top_k) {
    std::fill(s.counts, s.counts + kBuckets, 0);
    kernels_->count_buckets(l, V, T, s.counts);
    int64_t above = 0;
    int32_t b = kBuckets - 1;
    while (above + s.counts[b] < p_.top_k) above += s.counts[b--];
    gather = low = b;
    need = p_.top_k - above;  // 1 ≤ need ≤ counts[b]
  }
  std::fill(s.mass, s.mass + kBuckets, 0.0);
  const int64_t gathered = kernels_->mass_buckets(l, V, T, m, low, gather, s.mass, s.top);
  if (top_k) {
    // The k-th largest key is in this bucket; ties with it are kept, so the mass is of key ≥ it.
    std::nth_element(s.top, s.top + need - 1, s.top + gathered,
                     [](const sampler::Token& a, const sampler::Token& b) { return a.key > b.key; });
    cut.key_k = s.top[need - 1].key;
    double kept = 0;
    for (int64_t i = 0; i < gathered; ++i)
      if (s.top[i].key >= cut.key_k) kept += s.top[i].e;
    s.mass[low] = kept;
  }

  // Top-p: the bucket where the mass from the top reaches top_p of the total; the buckets above
  // it are kept whole, the ones below dropped.
  double target = 0, before_bucket = 0;
  if (p_.top_p < 1) {
    double total = 0;
    for (int32_t b = low; b < kBuckets; ++b) total += s.mass[b];
    target = static_cast<double>(p_.top_p) * total;
    int32_t b = kBuckets - 1;
    while (b > low && before_bucket + s.mass[b] < target) before_bucket += s.mass[b--];
    cut.top_p_bucket = b;
  }
  cut.min_e = p_.min_p;  // p / max p = exp(z − m)

  const int64_t deferred = kernels_->select(l, V, T, m, cut, s.log_w, mask, s.top);
  if (deferred > 0) {
    // Top-p's bucket in the chain's order: z descending, then the smaller index (select appended
    // them in index order, and the sort is stable).
    std::stable_sort(s.top, s.top + deferred,
                     [](const sampler::Token& a, const sampler::Token& b) { return a.key > b.key; });
    double before = before_bucket;
    for (int64_t i = 0; i < deferred && before < target; ++i) {
      const sampler::Token& t = s.top[i];
      if (t.e >= cut.min_e) {
        mask[t.index / 32] |= 1u << (t.index % 32);
        s.log_w[t.index] = t.z;
      }
      before += t.e;
    }
  }

  if (p_.cutoff > 0) apply_floor(l, m, lmax, mask, s.log_w, s.e);
  if (p_.typical_fx > 0) apply_typical(m, mask, s.log_w, s);
  if (p_.top_h_n > 0) apply_top_h(l, m, mask, s.log_w, s);

  // The race over the kept tokens: a few (a nucleus) one by one, each with its own Philox word;
  // many through the vectorised kernel, which draws every token's uniform.
  int64_t kept = 0;
  for (int64_t w = 0; w < words; ++w) kept += __builtin_popcount(mask[w]);
  if (p_.gumbel_k > 0) {
    draw_without_replacement(r, kept * kFewKeptShare > V, s);
    return;
  }
  if (code != nullptr) {
    token_[r] = kept > 0 ? arithmetic_pick(m, s, code) : 0;
    return;
  }
  if (kept * kFewKeptShare > V) {
    const race::RaceBest best = race_->race({nullptr, nullptr, s.log_w}, 0, V, site_, static_cast<uint64_t>(r) * V, s.words);
    token_[r] = race::race_winner(&best, 1);
    return;
  }
  float best_key = -INFINITY;
  int32_t best = -1, first = -1;
  for (int64_t w = 0; w < words; ++w)
    for (uint32_t bits = mask[w]; bits != 0; bits &= bits - 1) {
      const auto x = static_cast<int32_t>(w * 32 + __builtin_ctz(bits));
      const float u = draws_.uniform_f32(static_cast<uint64_t>(r) * V + x);
      const float key = s.log_w[x] - std::log(-std::log(u));
      if (first < 0) first = x;
      if (key > best_key) best_key = key, best = x;  // in index order: ties stay with the smaller
    }
  token_[r] = best >= 0 ? best : (first >= 0 ? first : 0);
}

}  // namespace attnbench::cpu
