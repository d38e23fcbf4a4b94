// The CPU's instruction sets and how kernels are chosen among them: one way, for every kernel.
//
// Kernels are written once, as templates over a SIMD struct (simd_avx2.h, simd_avx512.h), in a
// file named <name>_kernel.inl. impls/cpu/CMakeLists.txt compiles each such file once per ISA,
// into a generated translation unit that defines
//   ATTNBENCH_SIMD       the vector struct (::attnbench::cpu::Avx2 or Avx512)
//   ATTNBENCH_SIMD_MATH  its math (log, Philox: simd_math_<isa>.h)
//   ATTNBENCH_ISA        the ISA's name (avx2, avx512): the kernel's namespace and its Isa value
// (the AVX-512 one alone with -mavx512f/bw/vl/dq, so it runs only where the CPU has them). The
// .inl ends by defining its table of function pointers for that ISA:
//   template <> const MyTable& isa_kernels<MyTable, Isa::ATTNBENCH_ISA>() { ... }
// its header declares the two with ATTNBENCH_CPU_KERNEL_TABLE(MyTable), and an impl takes the
// backend's choice with cpu.kernels<MyTable>().
#pragma once

#include <string_view>

namespace attnbench::cpu {

enum class Isa { avx2, avx512 };

// The widest ISA this CPU has: AVX-512 (F, BW, VL, DQ), else the x86-64-v3 baseline (AVX2, FMA,
// F16C) the binary is built for. Which one runs is the backend's choice (option cpu.isa).
Isa widest_isa();
std::string_view isa_name(Isa isa);
// AMX tiles with their bf16 dot product (TDPBF16PS), usable by this process: the CPU has them
// and Linux granted the tile state. Kernels that use them are in the AVX-512 copy only.
bool amx_bf16_usable();
// The ceiling (backend.h) of that path: its rate in the peaks table, and what the impls that take
// it name as their compute_ceiling().
inline constexpr const char* kAmxBf16Ceiling = "amx_bf16_flops_per_s";

template <typename Table, Isa isa>
const Table& isa_kernels();

template <typename Table>
const Table& kernels_for(Isa isa) {
  return isa == Isa::avx512 ? isa_kernels<Table, Isa::avx512>() : isa_kernels<Table, Isa::avx2>();
}

}  // namespace attnbench::cpu

// In namespace attnbench::cpu: the two tables a <name>_kernel.inl defines.
#define ATTNBENCH_CPU_KERNEL_TABLE(Table)                                 \
  template <>                                                             \
  const Table& isa_kernels<Table, ::attnbench::cpu::Isa::avx2>();         \
  template <>                                                             \
  const Table& isa_kernels<Table, ::attnbench::cpu::Isa::avx512>()
