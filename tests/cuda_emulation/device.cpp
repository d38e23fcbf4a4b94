// The emulated device's blocks, fibers, barriers and warp-wide instructions (device.h, ptx.h).
#include <cstdlib>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_emulation/device.h"
#include "cuda_emulation/ptx.h"

// Switches stacks: saves the callee-saved registers, MXCSR and the x87 control word on the current
// stack, stores its pointer in *save and resumes the stack at `load` (x86-64 System V). The
// glibc ucontext calls do the same plus a signal-mask system call per switch, which made the
// emulation several times slower: a warp-wide instruction is 32 switches.
extern "C" void attnbench_emulation_switch(void** save, void* load);
asm(R"(
.text
.p2align 4
.globl attnbench_emulation_switch
.type attnbench_emulation_switch,@function
attnbench_emulation_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size attnbench_emulation_switch,.-attnbench_emulation_switch
)");

namespace attnbench::cuda::emulation {
namespace {

constexpr size_t kStackBytes = 512 * 1024;  // a kernel's frame at -O1, its register arrays included
constexpr int kWarp = 32;
constexpr size_t kMaxBlockSmem = 227 * 1024;

struct Copy {
  uint32_t dst;
  const void* src;
  bool valid;
};

struct Fiber {
  void* sp = nullptr;  // its saved stack pointer while it does not run
  char* stack = nullptr;  // kStackBytes, from the pool
  uint3 idx{};
  int warp = 0, lane = 0;
  bool done = false;
  // Blocked until *wait_on differs from wait_value.
  const uint64_t* wait_on = nullptr;
  uint64_t wait_value = 0;
  const char* waiting_in = "";
  std::vector<Copy> open;                // cp.async copies not yet committed
  std::deque<std::vector<Copy>> groups;  // committed, oldest first
};

struct Barrier {
  int arrived = 0;
  uint64_t generation = 0;
};

// One warp-wide instruction in progress: every live lane's operands, then every lane's results.
enum class Op { none, sync, shuffle, ballot, match, ldmatrix, ldmatrix_trans, mma_bf16, mma_f16 };
struct WarpOp {
  Op op = Op::none;
  int arrived = 0;
  uint64_t generation = 0;
  bool present[kWarp] = {};
  uint64_t in[kWarp][10] = {};
  uint64_t out[kWarp][4] = {};
};

struct Block {
  dim3 grid, dim;
  uint3 idx{};
  std::vector<Fiber> fibers;
  std::vector<unsigned char> smem;
  Barrier barriers[16];
  // Per warp, the instruction in progress of each group of lanes (its mask: the whole warp, or an
  // aligned part of it for the *_sync instructions given one), so groups may run apart.
  std::vector<std::map<uint32_t, WarpOp>> warps;
  int live = 0;                      // threads not yet exited
  std::vector<uint32_t> live_lanes;  // per warp, a bit per lane
  const std::function<void()>* body = nullptr;
  std::string failure;
};

// Fiber stacks, kept from launch to launch (allocating and touching 1024 fresh stacks per launch
// cost more than most kernels).
std::vector<std::unique_ptr<char[]>> g_stacks;

Block* g_block = nullptr;
Fiber* g_fiber = nullptr;
void* g_scheduler_sp = nullptr;

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

std::string where() {
  const Fiber& f = *g_fiber;
  return "block (" + std::to_string(g_block->idx.x) + "," + std::to_string(g_block->idx.y) + "," +
         std::to_string(g_block->idx.z) + ") thread " + std::to_string(f.idx.x);
}

Fiber& current() {
  if (!g_fiber) fail("a device function called outside a kernel");
  return *g_fiber;
}

// Back to the scheduler until *on moves past its present value.
void block_on(const uint64_t* on, const char* what) {
  Fiber& f = current();
  f.wait_on = on;
  f.wait_value = *on;
  f.waiting_in = what;
  attnbench_emulation_switch(&f.sp, g_scheduler_sp);
}

[[noreturn]] void fiber_main() {
  Fiber& f = *g_fiber;
  try {
    (*g_block->body)();
    // Copies still in flight land before the block ends (the device finishes them too).
    cp_async_commit();
    cp_async_wait(0);
  } catch (const std::exception& e) {
    if (g_block->failure.empty()) g_block->failure = where() + ": " + e.what();
  } catch (...) {
    if (g_block->failure.empty()) g_block->failure = where() + ": an exception";
  }
  f.done = true;
  --g_block->live;
  g_block->live_lanes[f.warp] &= ~(1u << f.lane);
  attnbench_emulation_switch(&f.sp, g_scheduler_sp);
  std::abort();  // a finished fiber is never resumed
}

int live_threads() { return g_block->live; }

// A barrier whose threads have all arrived opens (also when the last missing ones exited).
void try_open(Barrier& b, int expected) {
  if (b.arrived > 0 && b.arrived >= expected) {
    b.arrived = 0;
    ++b.generation;
  }
}

uint16_t half_of(uint32_t word, int hi) { return static_cast<uint16_t>(hi ? word >> 16 : word & 0xffffu); }
float to_float(uint16_t bits, bool bf16) {
  if (bf16) return emulation_value<float>(static_cast<uint32_t>(bits) << 16);
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

void carry_out(WarpOp& w, int warp) {
  const unsigned char* smem = g_block->smem.data();
  const size_t smem_bytes = g_block->smem.size();
  switch (w.op) {
    case Op::none:
    case Op::sync:
      break;
    case Op::shuffle:
      // Within segments of `width` lanes: xor, an index, up or down by a delta; a source outside
      // the segment (up, down) gives the lane's own value.
      for (int l = 0; l < kWarp; ++l) {
        if (!w.present[l]) continue;
        const int mode = static_cast<int>(w.in[l][1]), arg = static_cast<int>(w.in[l][2]);
        const int width = static_cast<int>(w.in[l][3]), base = l & ~(width - 1), pos = l - base;
        int src = l;
        switch (mode) {
          case 0: src = l ^ arg; break;
          case 1: src = base + (arg & (width - 1)); break;
          case 2: src = pos >= arg ? l - arg : l; break;
          case 3: src = pos + arg < width ? l + arg : l; break;
        }
        if (src < 0 || src >= kWarp || !w.present[src]) src = l;  // a lane outside the group: undefined on the device
        w.out[l][0] = w.in[src][0];
      }
      break;
    case Op::match:
      for (int l = 0; l < kWarp; ++l) {
        if (!w.present[l]) continue;
        uint64_t same = 0;
        for (int m = 0; m < kWarp; ++m)
          if (w.present[m] && w.in[m][0] == w.in[l][0]) same |= uint64_t{1} << m;
        w.out[l][0] = same;
      }
      break;
    case Op::ballot: {
      uint64_t bits = 0;
      for (int l = 0; l < kWarp; ++l)
        if (w.present[l] && w.in[l][0]) bits |= uint64_t{1} << l;
      for (int l = 0; l < kWarp; ++l) w.out[l][0] = bits;
      break;
    }
    case Op::ldmatrix:
    case Op::ldmatrix_trans: {
      // Lanes 8i..8i+7 give the row addresses of matrix i; register i of lane l gets row l/4,
      // elements 2(l%4) and 2(l%4)+1 of it, or with .trans elements (2(l%4), l/4) and (2(l%4)+1, l/4).
      for (int l = 0; l < kWarp; ++l)
        if (!w.present[l]) fail("ldmatrix with lane " + std::to_string(l) + " of warp " + std::to_string(warp) + " absent");
      const auto element = [&](int matrix, int row, int col) -> uint16_t {
        const uint64_t addr = w.in[matrix * 8 + row][0] + 2 * static_cast<uint64_t>(col);
        if (w.in[matrix * 8 + row][0] % 16 != 0) fail("ldmatrix: a row address not 16-byte aligned");
        if (addr + 2 > smem_bytes) fail("ldmatrix: shared address " + std::to_string(addr) + " past the block's " +
                                        std::to_string(smem_bytes) + " bytes");
        uint16_t v;
        std::memcpy(&v, smem + addr, 2);
        return v;
      };
      for (int l = 0; l < kWarp; ++l)
        for (int i = 0; i < 4; ++i) {
          uint16_t lo, hi;
          if (w.op == Op::ldmatrix) {
            lo = element(i, l / 4, 2 * (l % 4));
            hi = element(i, l / 4, 2 * (l % 4) + 1);
          } else {
            lo = element(i, 2 * (l % 4), l / 4);
            hi = element(i, 2 * (l % 4) + 1, l / 4);
          }
          w.out[l][i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
        }
      break;
    }
    case Op::mma_bf16:
    case Op::mma_f16: {
      // Fragments (PTX ISA, mma.m16n8k16, g = lane / 4, t = lane % 4): A a0 (g, 2t..), a1 (g+8, 2t..),
      // a2 (g, 2t+8..), a3 (g+8, 2t+8..); B b0 (k 2t.., n g), b1 (k 2t+8.., n g); C/D c0, c1 (g, 2t..),
      // c2, c3 (g+8, 2t..). The lower half of a register holds the smaller index.
      const bool bf16 = w.op == Op::mma_bf16;
      float A[16][16], B[16][8];
      double C[16][8];
      for (int l = 0; l < kWarp; ++l) {
        if (!w.present[l]) fail("mma with lane " + std::to_string(l) + " of warp " + std::to_string(warp) + " absent");
        const int g = l / 4, t = l % 4;
        for (int r = 0; r < 4; ++r)
          for (int hi = 0; hi < 2; ++hi) {
            const int row = g + ((r & 1) ? 8 : 0), col = 2 * t + hi + ((r & 2) ? 8 : 0);
            A[row][col] = to_float(half_of(static_cast<uint32_t>(w.in[l][r]), hi), bf16);
          }
        for (int r = 0; r < 2; ++r)
          for (int hi = 0; hi < 2; ++hi) B[2 * t + hi + 8 * r][g] = to_float(half_of(static_cast<uint32_t>(w.in[l][4 + r]), hi), bf16);
        for (int c = 0; c < 4; ++c) C[g + ((c & 2) ? 8 : 0)][2 * t + (c & 1)] = emulation_value<float>(w.in[l][6 + c]);
      }
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) {
          double acc = C[i][j];
          for (int k = 0; k < 16; ++k) acc += static_cast<double>(A[i][k]) * B[k][j];
          C[i][j] = acc;
        }
      for (int l = 0; l < kWarp; ++l) {
        const int g = l / 4, t = l % 4;
        for (int c = 0; c < 4; ++c)
          w.out[l][c] = emulation_bits(static_cast<float>(C[g + ((c & 2) ? 8 : 0)][2 * t + (c & 1)]));
      }
      break;
    }
  }
}

// The calling lane's part in a warp-wide instruction of the lanes in `mask`: its operands in, its
// results out. It is carried out when every live lane of the mask has arrived.
void warp_op(Op op, uint32_t mask, const uint64_t* in, int n_in, uint64_t* out, int n_out, const char* name) {
  Fiber& f = current();
  if (!(mask >> f.lane & 1u)) fail(where() + ": " + name + " with a mask that leaves out the calling lane");
  WarpOp& w = g_block->warps[f.warp][mask];
  if (w.arrived == 0) {
    w.op = op;
    std::fill(std::begin(w.present), std::end(w.present), false);
  } else if (w.op != op) {
    fail(where() + ": lanes of warp " + std::to_string(f.warp) + " meet at different instructions (" + name + ")");
  }
  std::copy(in, in + n_in, w.in[f.lane]);
  w.present[f.lane] = true;
  ++w.arrived;
  if (w.arrived == __builtin_popcount(mask & g_block->live_lanes[f.warp])) {
    carry_out(w, f.warp);
    w.arrived = 0;
    ++w.generation;
  } else {
    block_on(&w.generation, name);
  }
  std::copy(w.out[f.lane], w.out[f.lane] + n_out, out);
}

// A fresh stack for the fiber whose first switch "returns" into fiber_main: below the entry
// address, the six callee-saved registers (zero) and MXCSR and the x87 control word at their
// defaults, placed so that fiber_main starts with the stack alignment of a call.
void start_fiber(Fiber& f) {
  auto top = reinterpret_cast<uintptr_t>(f.stack + kStackBytes) & ~uintptr_t{15};
  auto* sp = reinterpret_cast<uint64_t*>(top - 72);  // ≡ 8 (mod 16) at fiber_main's entry
  sp[0] = uint64_t{0x037f} << 32 | 0x1f80;            // MXCSR, then the x87 control word
  for (int r = 1; r <= 6; ++r) sp[r] = 0;             // r15, r14, r13, r12, rbx, rbp
  sp[7] = reinterpret_cast<uint64_t>(&fiber_main);
  sp[8] = 0;
  f.sp = sp;
}

}  // namespace

const uint3& thread_idx() { return current().idx; }
const uint3& block_idx() { return g_block->idx; }
const dim3& block_dim() { return g_block->dim; }
const dim3& grid_dim() { return g_block->grid; }
unsigned char* dynamic_smem() { return g_block->smem.data(); }

uint32_t smem_offset(const void* p) {
  const auto* c = static_cast<const unsigned char*>(p);
  if (c < g_block->smem.data() || c > g_block->smem.data() + g_block->smem.size())
    fail("a shared address taken of memory outside the block's dynamic shared memory");
  return static_cast<uint32_t>(c - g_block->smem.data());
}

void barrier(int id, int threads) {
  Barrier& b = g_block->barriers[id];
  ++b.arrived;
  const int expected = threads > 0 ? threads : live_threads();
  const uint64_t gen = b.generation;
  try_open(b, expected);
  if (b.generation == gen) block_on(&b.generation, id == 0 ? "__syncthreads" : "a named barrier");
}

void warp_barrier(uint32_t mask) {
  uint64_t none = 0;
  warp_op(Op::sync, mask, &none, 1, &none, 0, "__syncwarp");
}

uint64_t shuffle(uint32_t mask, uint64_t value, int mode, int arg, int width) {
  if (width <= 0 || width > kWarp || (width & (width - 1))) fail(where() + ": a shuffle width that is not a power of two up to 32");
  const uint64_t in[4] = {value, static_cast<uint64_t>(mode), static_cast<uint64_t>(static_cast<int64_t>(arg)),
                          static_cast<uint64_t>(width)};
  uint64_t out = 0;
  warp_op(Op::shuffle, mask, in, 4, &out, 1, "a shuffle");
  return out;
}

uint32_t ballot(uint32_t mask, bool predicate) {
  const uint64_t in = predicate;
  uint64_t out = 0;
  warp_op(Op::ballot, mask, &in, 1, &out, 1, "__ballot_sync");
  return static_cast<uint32_t>(out) & mask;
}

uint32_t match_any(uint32_t mask, uint64_t value) {
  uint64_t out = 0;
  warp_op(Op::match, mask, &value, 1, &out, 1, "__match_any_sync");
  return static_cast<uint32_t>(out) & mask;
}

void cp_async(uint32_t dst, const void* src, bool valid) {
  if (dst % 16 != 0) fail(where() + ": cp.async to a shared address not 16-byte aligned");
  if (dst + 16 > g_block->smem.size()) fail(where() + ": cp.async past the block's shared memory");
  if (valid && reinterpret_cast<uintptr_t>(src) % 16 != 0) fail(where() + ": cp.async from a global address not 16-byte aligned");
  current().open.push_back({dst, src, valid});
}
void cp_async_commit() {
  Fiber& f = current();
  f.groups.push_back(std::move(f.open));
  f.open.clear();
}
void cp_async_wait(int pending) {
  Fiber& f = current();
  while (static_cast<int>(f.groups.size()) > pending) {
    for (const Copy& c : f.groups.front()) {
      if (c.valid) std::memcpy(g_block->smem.data() + c.dst, c.src, 16);
      else std::memset(g_block->smem.data() + c.dst, 0, 16);
    }
    f.groups.pop_front();
  }
}

void ldmatrix_x4(uint32_t addr, bool trans, uint32_t (&r)[4]) {
  const uint64_t in = addr;
  uint64_t out[4];
  warp_op(trans ? Op::ldmatrix_trans : Op::ldmatrix, 0xffffffffu, &in, 1, out, 4, "ldmatrix");
  for (int i = 0; i < 4; ++i) r[i] = static_cast<uint32_t>(out[i]);
}

void mma_m16n8k16(bool bf16, float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  uint64_t in[10] = {a[0], a[1], a[2], a[3], b0, b1};
  for (int c = 0; c < 4; ++c) in[6 + c] = emulation_bits(d[c]);
  uint64_t out[4];
  warp_op(bf16 ? Op::mma_bf16 : Op::mma_f16, 0xffffffffu, in, 10, out, 4, "mma.sync");
  for (int c = 0; c < 4; ++c) d[c] = emulation_value<float>(out[c]);
}

bool run_grid(dim3 grid, dim3 block, size_t smem_bytes, const std::function<void()>& body) {
  if (g_block) {
    std::fprintf(stderr, "cuda emulation: a launch from inside a kernel\n");
    return false;
  }
  const size_t threads = static_cast<size_t>(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024 || smem_bytes > kMaxBlockSmem) return false;
  Block b;
  b.grid = grid;
  b.dim = block;
  b.body = &body;
  b.fibers.resize(threads);
  b.warps.resize((threads + kWarp - 1) / kWarp);
  while (g_stacks.size() < threads) g_stacks.push_back(std::unique_ptr<char[]>(new char[kStackBytes]));
  for (size_t t = 0; t < threads; ++t) b.fibers[t].stack = g_stacks[t].get();
  g_block = &b;
  bool ok = true;
  for (unsigned z = 0; z < grid.z && ok; ++z)
    for (unsigned y = 0; y < grid.y && ok; ++y)
      for (unsigned x = 0; x < grid.x && ok; ++x) {
        b.idx = {x, y, z};
        b.smem.assign(smem_bytes, 0xff);  // NaN in every float type: an element nothing wrote shows
        for (Barrier& bar : b.barriers) bar = Barrier{};
        for (auto& w : b.warps) w.clear();
        b.live = static_cast<int>(threads);
        b.live_lanes.assign(b.warps.size(), 0);
        for (size_t t = 0; t < threads; ++t) b.live_lanes[t / kWarp] |= 1u << (t % kWarp);
        for (size_t t = 0; t < threads; ++t) {
          Fiber& f = b.fibers[t];
          f.idx = {static_cast<unsigned>(t % block.x), static_cast<unsigned>(t / block.x % block.y),
                   static_cast<unsigned>(t / (static_cast<size_t>(block.x) * block.y))};
          f.warp = static_cast<int>(t / kWarp);
          f.lane = static_cast<int>(t % kWarp);
          f.done = false;
          f.wait_on = nullptr;
          f.open.clear();
          f.groups.clear();
          start_fiber(f);
        }
        // Passes over the threads that can run, each from another start and in the other direction
        // than the last, so that a read the kernel did not order after its write (a missing
        // barrier) meets different interleavings; a pass in which none can run is a deadlock.
        for (uint64_t pass = 0;; ++pass) {
          bool ran = false, all_done = true;
          const size_t start = static_cast<size_t>(pass * 0x9e3779b97f4a7c15ull >> 40) % threads;
          for (size_t i = 0; i < threads; ++i) {
            const size_t k = (start + i) % threads;
            Fiber& f = b.fibers[pass % 2 ? threads - 1 - k : k];
            if (f.done) continue;
            all_done = false;
            if (f.wait_on && *f.wait_on == f.wait_value) continue;
            f.wait_on = nullptr;
            g_fiber = &f;
            attnbench_emulation_switch(&g_scheduler_sp, f.sp);
            g_fiber = nullptr;
            ran = true;
            if (f.done) try_open(b.barriers[0], live_threads());  // an exited thread no longer holds __syncthreads
          }
          if (all_done || !b.failure.empty()) break;
          if (!ran) {
            for (const Fiber& f : b.fibers)
              if (!f.done) {
                b.failure = "block (" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ") thread " +
                            std::to_string(f.idx.x) + " waits forever in " + f.waiting_in;
                break;
              }
            break;
          }
        }
        if (!b.failure.empty()) {
          std::fprintf(stderr, "cuda emulation: %s\n", b.failure.c_str());
          ok = false;
        }
      }
  g_block = nullptr;
  return ok;
}

cudaError_t configure(int threads, size_t smem, int* ctas_per_sm) {
  if (smem > kMaxBlockSmem || threads <= 0 || threads > 1024) return cudaErrorInvalidValue;
  const int by_smem = static_cast<int>(228 * 1024 / (smem + 1024));
  *ctas_per_sm = std::max(0, std::min({by_smem, 2048 / threads, 32}));
  return cudaSuccess;
}

}  // namespace attnbench::cuda::emulation
