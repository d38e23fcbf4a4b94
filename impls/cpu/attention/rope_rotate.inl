// The rotation of one fp32 row by its coefficient row (rope_kernel.h: out[x] = in[x]·C[x] +
// in[partner(x)]·S[x], C and S of 2·r floats), written once for rope's kernel and the attention
// kernels' fused rope. Included inside each one's per-ISA namespace, after its S, V and W: every
// copy is its ISA's own, so none meets another at link time.

// The pair-swapped vector (x1, x0, x3, x2, ...): GPT-J's partners.
inline __m256 swap_pairs(__m256 v) { return _mm256_permute_ps(v, 0xB1); }
#ifdef __AVX512F__
inline __m512 swap_pairs(__m512 v) { return _mm512_permute_ps(v, 0xB1); }
#endif

// The first r dims of `in` rotated into `out` (in and out apart); dims past r are the caller's.
// Vectors where the layout allows: the other half's chunk (NeoX, the half a multiple of W) or the
// pair-swapped chunk (GPT-J); element by element otherwise (e.g. head_dim 80's halves of 40).
inline void rotate_f32(const rope::RopeParams& s, const float* C, const float* Sn, const float* in, float* out) {
  const int64_t r = s.rotary_dim, h = r / 2;
  if (!s.interleaved && h % W == 0) {
    for (int64_t x = 0; x < h; x += W) {
      const V lo = S::load(in + x), hi = S::load(in + x + h);
      S::store(out + x, S::fma(hi, S::load(Sn + x), S::mul(lo, S::load(C + x))));
      S::store(out + x + h, S::fma(lo, S::load(Sn + x + h), S::mul(hi, S::load(C + x + h))));
    }
  } else if (s.interleaved && r % W == 0) {
    for (int64_t x = 0; x < r; x += W) {
      const V v = S::load(in + x);
      S::store(out + x, S::fma(swap_pairs(v), S::load(Sn + x), S::mul(v, S::load(C + x))));
    }
  } else {
    for (int64_t x = 0; x < r; ++x) out[x] = std::fma(in[rope::partner_of(s, static_cast<int>(x))], Sn[x], in[x] * C[x]);
  }
}
