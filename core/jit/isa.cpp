#include "core/jit/isa.h"

#include <iterator>

#include "core/util/error.h"

namespace nnd::jit {

namespace {

// One row per Isa enumerator, in enumerator order (isa_traits indexes it).
constexpr IsaTraits kIsaTable[] = {
    {Isa::kSse41, "sse4.1", "sse4", "SSE4.1", Arch::kX86_64, /*f32_lanes=*/4, /*vector_regs=*/16, /*fma=*/false,
     /*broadcast_mem_operand=*/false, TailMoves::kNarrowMoves, /*streams_weights=*/true, /*fma_by_element=*/false},
    {Isa::kAvx2, "avx2", nullptr, "AVX2", Arch::kX86_64, /*f32_lanes=*/8, /*vector_regs=*/16, /*fma=*/true,
     /*broadcast_mem_operand=*/false, TailMoves::kMaskedMoves, /*streams_weights=*/false,
     /*fma_by_element=*/false},
    {Isa::kAvx512, "avx512", nullptr, "AVX-512", Arch::kX86_64, /*f32_lanes=*/16, /*vector_regs=*/32, /*fma=*/true,
     /*broadcast_mem_operand=*/true, TailMoves::kMaskRegisters, /*streams_weights=*/false,
     /*fma_by_element=*/false},
    {Isa::kNeon, "neon", nullptr, "NEON", Arch::kAarch64, /*f32_lanes=*/4, /*vector_regs=*/32, /*fma=*/true,
     /*broadcast_mem_operand=*/false, TailMoves::kLaneMoves, /*streams_weights=*/false, /*fma_by_element=*/true},
};

constexpr bool rows_in_enumerator_order() {
  for (size_t i = 0; i < std::size(kIsaTable); ++i) {
    if (static_cast<size_t>(kIsaTable[i].isa) != i) return false;
  }
  return true;
}
static_assert(rows_in_enumerator_order(), "kIsaTable: one row per Isa, in enumerator order");

}  // namespace

const char* arch_name(Arch arch) {
  switch (arch) {
    case Arch::kX86_64: return "x86-64";
    case Arch::kAarch64: return "AArch64";
  }
  std::string message = "JIT internal error: no name for architecture value ";
  message += std::to_string(static_cast<int>(arch));
  throw Error(ErrorCode::kInternal, message);
}

const IsaTraits& isa_traits(Isa isa) {
  const auto i = static_cast<size_t>(isa);
  if (i >= std::size(kIsaTable)) throw Error(ErrorCode::kInternal, "JIT internal error: no ISA table row for value " + std::to_string(i));
  return kIsaTable[i];
}

const std::vector<Isa>& all_isas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> v;
    for (const IsaTraits& t : kIsaTable) {
      if (t.arch == kBuildArch) v.push_back(t.isa);
    }
    return v;
  }();
  return isas;
}

std::optional<Isa> isa_from_id(std::string_view id) {
  for (Isa isa : all_isas()) {
    const IsaTraits& t = isa_traits(isa);
    if (id == t.id || (t.alias && id == t.alias)) return isa;
  }
  return std::nullopt;
}

std::vector<std::string> isa_ids() {
  std::vector<std::string> ids;
  for (Isa isa : all_isas()) ids.emplace_back(isa_id(isa));
  return ids;
}

}  // namespace nnd::jit
