// eagle2_tree's workgroup top-N (reference/decoding/eagle2_tree.cpp): the N largest of `count`
// items by a 52-bit key that is unique per item — the order key of a float (32 bits: a larger
// value, a larger key; −0 as +0) above 2^20 − 1 − index (20 bits: among equal values the lower
// index is larger) — so the N best by "value descending, index ascending" are exactly the N
// largest keys and no tie is left to chance.
//
// Radix selection, digits high to low (11, 11 and 10 bits of the value, 10 and 10 of the index):
// each round counts, in a shared histogram, the items whose decided digits match the prefix, and
// finds the digit where the count from the top reaches the rank still needed (lanes sum runs of
// bins, a suffix scan across lanes, then the one lane whose run holds it walks its bins). When that
// digit's bin holds exactly the rank needed the search ends, typically after two or three rounds:
// the selected items are those whose decided bits are at or above the prefix. Counts are integers,
// so the result does not depend on the order lanes add in.
//
// The including shader defines, before this file: T (its workgroup size, a power of two ≤ 1024)
// and void e2_key(uint i, out uint hi, out uint lo), item i's key (e2_order(value), 0xfffff − i).
#ifndef ATTNBENCH_EAGLE2_RADIX_GLSL
#define ATTNBENCH_EAGLE2_RADIX_GLSL

shared uint e2_hist[2048];
shared uint e2_csum[T];
shared uint e2_found[3];  // the digit, the items above it, the items in it

uint e2_order(float z) {
  uint u = floatBitsToUint(z);
  if (u == 0x80000000u) u = 0u;
  return (u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u);
}

uint e2_digit(uint level, uint hi, uint lo) {
  switch (level) {
    case 0u: return hi >> 21;
    case 1u: return (hi >> 10) & 0x7ffu;
    case 2u: return hi & 0x3ffu;
    case 3u: return (lo >> 10) & 0x3ffu;
    default: return lo & 0x3ffu;
  }
}

// The bits levels below `level` decide, as (hi mask, lo mask).
uvec2 e2_mask(uint level) {
  switch (level) {
    case 0u: return uvec2(0u, 0u);
    case 1u: return uvec2(0xffe00000u, 0u);
    case 2u: return uvec2(0xfffffc00u, 0u);
    case 3u: return uvec2(0xffffffffu, 0u);
    case 4u: return uvec2(0xffffffffu, 0xffc00u);
    default: return uvec2(0xffffffffu, 0xfffffu);
  }
}

// The N = need largest of items [0, count) (need ≤ count): (prefix hi, prefix lo, mask hi, mask
// lo); item i is selected iff e2_selected(). Items whose hi is below `floor_hi` are not counted:
// a caller that knows N items at or above it (stage 1: the lanes' maxima) spares the histogram
// their atomics, and must then select only items at or above it (an uncounted item may share the
// last round's prefix). Every lane of the workgroup calls it (barriers).
uvec4 e2_select(uint count, uint need, uint floor_hi) {
  const uint lane = gl_LocalInvocationID.x;
  uint phi = 0u, plo = 0u, level = 0u;
  while (true) {
    const uint bins = level < 2u ? 2048u : 1024u, per = bins / T;
    for (uint j = lane; j < bins; j += T) e2_hist[j] = 0u;
    barrier();
    const uvec2 m = e2_mask(level);
    for (uint i = lane; i < count; i += T) {
      uint hi, lo;
      e2_key(i, hi, lo);
      if (hi >= floor_hi && (hi & m.x) == phi && (lo & m.y) == plo)
        atomicAdd(e2_hist[e2_digit(level, hi, lo)], 1u, gl_ScopeWorkgroup, 0, 0);
    }
    barrier();
    uint s = 0u;
    for (uint j = lane * per; j < lane * per + per; ++j) s += e2_hist[j];
    e2_csum[lane] = s;
    barrier();
    for (uint off = 1u; off < T; off <<= 1u) {  // inclusive suffix sums over the lanes' runs
      const uint add = lane + off < T ? e2_csum[lane + off] : 0u;
      barrier();
      e2_csum[lane] += add;
      barrier();
    }
    const uint incl = e2_csum[lane], above = incl - s;
    if (above < need && need <= incl) {
      uint acc = above;
      for (uint j = lane * per + per; j-- > lane * per;) {
        const uint h = e2_hist[j];
        if (acc + h >= need) {
          e2_found[0] = j;
          e2_found[1] = acc;
          e2_found[2] = h;
          break;
        }
        acc += h;
      }
    }
    barrier();
    const uint d = e2_found[0], in_d = e2_found[2];
    need -= e2_found[1];
    if (level < 3u) phi |= d << (level == 0u ? 21u : (level == 1u ? 10u : 0u));
    else plo |= d << (level == 3u ? 10u : 0u);
    ++level;
    barrier();  // every lane has read e2_found and e2_csum before the next round writes them
    if (in_d == need || level == 5u) return uvec4(phi, plo, e2_mask(level));
  }
  return uvec4(0u);
}

bool e2_selected(uvec4 t, uint hi, uint lo) {
  hi &= t.z;
  lo &= t.w;
  return hi > t.x || (hi == t.x && lo >= t.y);
}

#endif
