// The instruction sets the JIT generates code for, as ONE table of rows (isa.cpp) with the traits
// kernel choices depend on (kernel_config.h). Nothing outside the table compares Isa values to
// learn a width, a register count or a capability: it asks isa_traits().
//
// Two kinds of row. A row with float code of its own (SSE4.1, AVX2, AVX-512, NEON) has an emitter
// in its architecture's folder and is what `isa:` options, ISA calibration and the float test
// suites choose among (all_isas()). An extension row (AVX-VNNI, AVX-512 VNNI, NEON dot product)
// adds integer instructions only: its float kernels are those of the row it extends (float_code)
// and its int8_dot column says how int8 inner products can be computed on it. The probe reports
// both kinds (CpuFeatures), so logs and the calibration cache's CPU identity show them.
//
// Adding an instruction set: an enumerator in Isa, its row in kIsaTable below, the probe's bit in
// the architecture's cpu_features_<arch>.cpp, and for a row with float code its emitter in the
// architecture's folder (docs/architecture.md, "Where to add").
//
// AArch64: the build selects core/jit/arm64 for an aarch64 target (NND_JIT_ARCH in the root
// CMakeLists.txt): the CPU probe (arm64/cpu_features_arm64.cpp: HWCAP asimd adds Isa::kNeon), and
// the NEON generators behind arm64/emit_kernel.cpp (code_generator.h). The NEON generators do not
// emit every kernel family yet: generator_emits() says which, lowering declines the rest (the
// layer is kUnsupported, engine auto serves the reference engine).
// Rows of another architecture than the build's are never listed, parsed or selected
// (all_isas(), isa_from_id()), so a NEON row sits harmlessly in an x86 build's table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnd::jit {

enum class Arch : uint8_t { kX86_64, kAarch64 };

#if defined(__x86_64__) || defined(_M_X64)
inline constexpr Arch kBuildArch = Arch::kX86_64;
#elif defined(__aarch64__)
inline constexpr Arch kBuildArch = Arch::kAarch64;
#else
#error "the JIT generates code for x86-64 and AArch64 only"
#endif

// In table order. The rows with float code come per architecture in increasing order of
// capability (CpuFeatures::best()); extension rows follow them (appended: values are never
// renumbered).
enum class Isa : uint8_t {
  kSse41,       // SSE4.1, 16 xmm registers, no VEX/EVEX encoding (the robot's Atom)
  kAvx2,        // AVX2 + FMA3, 16 ymm registers (VEX)
  kAvx512,      // AVX-512 F/BW/DQ/VL, 32 zmm registers and k-masks (EVEX)
  kNeon,        // AArch64 Advanced SIMD, 32 128-bit v registers (the Booster's Cortex-A78AE)
  kAvxVnni,     // AVX2 + AVX-VNNI: VEX vpdpbusd (Alder Lake, Zen 5); extends kAvx2
  kAvx512Vnni,  // AVX-512 + AVX512_VNNI: EVEX vpdpbusd (Cascade Lake, Ice Lake, Zen 4); extends kAvx512
  kNeonDot,     // NEON + the ARMv8.2 dot product: SDOT/UDOT (Cortex-A76, the A78AE); extends kNeon
};

// How an int8 inner product can be computed on a row (the int8 kernels' choice, issue 33).
enum class Int8Dot : uint8_t {
  kPairSums16,  // (v)pmaddubsw: u8 x s8 products summed in pairs into saturating int16 lanes, then
                // (v)pmaddwd into int32 (SSSE3 and up): pair sums must stay within int16
  kDot4,        // vpdpbusd (u8 x s8) or SDOT (s8 x s8): four products summed into each int32 lane
  kWiden,       // SMULL/SMLAL: widening multiplies into int16/int32 lanes (ARMv8.0 NEON)
};

// How a kernel moves the first n < f32_lanes lanes of a vector (VecEmitter::load_tail/store_tail).
enum class TailMoves : uint8_t {
  kNarrowMoves,    // narrower moves (SSE movss/movsd/insertps): about as cheap as a full vector
  kMaskedMoves,    // a lane-mask vector and vmaskmovps (AVX2): masked stores are slow on AMD, and
                   // valgrind's translator runs out of memory on blocks full of them
  kMaskRegisters,  // opmask registers on any move (AVX-512 k-masks): as cheap as a full vector
  kLaneMoves,      // scalar and single-lane moves (AArch64 LDR s/d, LD1 {v.s}[i]): one or two
                   // instructions, as cheap as a full vector
};

struct IsaTraits {
  Isa isa;
  const char* id;     // "sse4.1": the spelling of options, the config, CLIs, kernel names and logs
  const char* alias;  // another accepted spelling ("sse4"), or nullptr
  const char* name;   // "SSE4.1": how messages and documentation name it
  Arch arch;
  int f32_lanes;    // float32 lanes per vector register
  int vector_regs;  // architectural vector registers (the emitter keeps the last as its scratch)
  bool fma;         // fused multiply-add with a separate accumulator (no product temporary)
  // The multiply-add takes one float from memory broadcast to all lanes as an operand (AVX-512
  // {1to16}): VecEmitter::fmadd_bcast() is one instruction and needs no temporary register.
  bool broadcast_mem_operand;
  TailMoves tails;
  // Two-operand multiply and add without FMA (SSE): every product needs a temporary anyway, so
  // loading a weight from memory into it (VecEmitter::fmadd_mem) costs a load instead of the
  // register copy a register operand needs. Kernels then stream their weights from memory
  // instead of holding them in registers (ConvBlocking::stream_weights).
  bool streams_weights;
  // The multiply-add takes one lane of a register as its broadcast operand (AArch64 FMLA by
  // element): a conv tile loads 4 input channels of a position into one register and multiplies
  // each lane into the accumulators, so it holds one input register per position instead of a
  // single broadcast register (conv_blocking()).
  bool fma_by_element;
  // The row whose float kernels this row runs: itself for a row with float code of its own, the
  // row it extends for an extension row.
  Isa float_code;
  Int8Dot int8_dot;
};

// How messages name an architecture: "x86-64", "AArch64".
const char* arch_name(Arch arch);

// One row per Isa enumerator, in enumerator order (isa_traits indexes it). In the header so that
// emitters can take their width and register count from it at compile time. An extension row
// repeats the float columns of the row it extends (extension_rows_match_their_float_code()).
inline constexpr IsaTraits kIsaTable[] = {
    {Isa::kSse41, "sse4.1", "sse4", "SSE4.1", Arch::kX86_64, /*f32_lanes=*/4, /*vector_regs=*/16, /*fma=*/false,
     /*broadcast_mem_operand=*/false, TailMoves::kNarrowMoves, /*streams_weights=*/true, /*fma_by_element=*/false,
     Isa::kSse41, Int8Dot::kPairSums16},
    {Isa::kAvx2, "avx2", nullptr, "AVX2", Arch::kX86_64, /*f32_lanes=*/8, /*vector_regs=*/16, /*fma=*/true,
     /*broadcast_mem_operand=*/false, TailMoves::kMaskedMoves, /*streams_weights=*/false,
     /*fma_by_element=*/false, Isa::kAvx2, Int8Dot::kPairSums16},
    {Isa::kAvx512, "avx512", nullptr, "AVX-512", Arch::kX86_64, /*f32_lanes=*/16, /*vector_regs=*/32, /*fma=*/true,
     /*broadcast_mem_operand=*/true, TailMoves::kMaskRegisters, /*streams_weights=*/false,
     /*fma_by_element=*/false, Isa::kAvx512, Int8Dot::kPairSums16},
    {Isa::kNeon, "neon", nullptr, "NEON", Arch::kAarch64, /*f32_lanes=*/4, /*vector_regs=*/32, /*fma=*/true,
     /*broadcast_mem_operand=*/false, TailMoves::kLaneMoves, /*streams_weights=*/false, /*fma_by_element=*/true,
     Isa::kNeon, Int8Dot::kWiden},
    {Isa::kAvxVnni, "avx-vnni", nullptr, "AVX-VNNI", Arch::kX86_64, /*f32_lanes=*/8, /*vector_regs=*/16, /*fma=*/true,
     /*broadcast_mem_operand=*/false, TailMoves::kMaskedMoves, /*streams_weights=*/false,
     /*fma_by_element=*/false, Isa::kAvx2, Int8Dot::kDot4},
    {Isa::kAvx512Vnni, "avx512-vnni", nullptr, "AVX-512 VNNI", Arch::kX86_64, /*f32_lanes=*/16, /*vector_regs=*/32,
     /*fma=*/true, /*broadcast_mem_operand=*/true, TailMoves::kMaskRegisters, /*streams_weights=*/false,
     /*fma_by_element=*/false, Isa::kAvx512, Int8Dot::kDot4},
    {Isa::kNeonDot, "neon-dotprod", nullptr, "NEON with dot product", Arch::kAarch64, /*f32_lanes=*/4,
     /*vector_regs=*/32, /*fma=*/true, /*broadcast_mem_operand=*/false, TailMoves::kLaneMoves,
     /*streams_weights=*/false, /*fma_by_element=*/true, Isa::kNeon, Int8Dot::kDot4},
};

constexpr bool rows_in_enumerator_order() {
  for (size_t i = 0; i < std::size(kIsaTable); ++i) {
    if (static_cast<size_t>(kIsaTable[i].isa) != i) return false;
  }
  return true;
}
static_assert(rows_in_enumerator_order(), "kIsaTable: one row per Isa, in enumerator order");

// An extension row runs its float_code row's float kernels, so it must agree with that row on
// every column a float kernel choice reads, and extend a row of its own architecture that has
// float code of its own.
constexpr bool extension_rows_match_their_float_code() {
  for (const IsaTraits& t : kIsaTable) {
    const IsaTraits& f = kIsaTable[static_cast<size_t>(t.float_code)];
    if (f.float_code != f.isa || f.arch != t.arch) return false;
    if (f.f32_lanes != t.f32_lanes || f.vector_regs != t.vector_regs || f.fma != t.fma ||
        f.broadcast_mem_operand != t.broadcast_mem_operand || f.tails != t.tails ||
        f.streams_weights != t.streams_weights || f.fma_by_element != t.fma_by_element) {
      return false;
    }
  }
  return true;
}
static_assert(extension_rows_match_their_float_code(), "kIsaTable: an extension row must repeat its float_code row's float columns");

[[noreturn]] void no_isa_row(size_t value);  // nnd::Error kInternal

// The row of an ISA (constexpr: NeonEmitter::width() reads it at compile time).
constexpr const IsaTraits& isa_traits(Isa isa) {
  const auto i = static_cast<size_t>(isa);
  if (i >= std::size(kIsaTable)) no_isa_row(i);
  return kIsaTable[i];
}
inline const char* isa_id(Isa isa) { return isa_traits(isa).id; }

// The ISAs of the build's architecture that have float code of their own, in table order: what
// `isa:` chooses among, ISA calibration measures, and the float test suites run.
const std::vector<Isa>& all_isas();

// Every row of the build's architecture, extension rows included, in table order: what the probe
// reports ({"sse4.1", ..., "avx512-vnni"} on x86-64, {"neon", "neon-dotprod"} on AArch64).
const std::vector<Isa>& all_isa_rows();

// The ISA of all_isas() spelled `id` (its id or alias); nullopt for anything else, extension rows
// included: `isa:` chooses float code, and an extension row has none of its own.
std::optional<Isa> isa_from_id(std::string_view id);

// The ids of all_isas(): {"sse4.1", "avx2", "avx512"} on x86-64, {"neon"} on AArch64.
std::vector<std::string> isa_ids();

}  // namespace nnd::jit
