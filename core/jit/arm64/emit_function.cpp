#include "core/jit/arm64/emit_function.h"

#include <string>
#include <type_traits>
#include <variant>

#include "core/jit/arm64/kernels.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

bool emits(const KernelSpec& spec) {
  return std::visit(
      [](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        return std::is_same_v<T, ConvSpec> || std::is_same_v<T, PadSpec> || std::is_same_v<T, UnarySpec> ||
               std::is_same_v<T, HelperCallSpec> || std::is_same_v<T, MergeSpec> || std::is_same_v<T, ConcatSpec> ||
               std::is_same_v<T, PositionScaleSpec> || std::is_same_v<T, ParamEltSpec> || neon::emits<T>();
      },
      spec);
}

namespace {

void emit_body(NeonEmitter& ve, const KernelSpec& spec) {
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) emit_conv(ve, s);
        else if constexpr (std::is_same_v<T, PadSpec>) emit_pad(ve, s);
        else if constexpr (std::is_same_v<T, UnarySpec>) emit_unary(ve, s);
        else if constexpr (std::is_same_v<T, HelperCallSpec>) emit_helper_call(ve, s.helper, s.count, s.params_off);
        else if constexpr (std::is_same_v<T, MergeSpec>) emit_merge(ve, s.op, s.inputs, s.count, s.divisor);
        else if constexpr (std::is_same_v<T, ConcatSpec>) emit_concat(ve, s.outer, s.inner);
        else if constexpr (std::is_same_v<T, PositionScaleSpec>) emit_position_scale(ve, s.positions, s.channels, s.map_off);
        else if constexpr (std::is_same_v<T, ParamEltSpec>) emit_param_elt(ve, s);
        else if constexpr (neon::emits<T>()) neon::emit(ve, s);
        else throw Error(ErrorCode::kInternal, "JIT internal error: no NEON generator for this kernel spec");
      },
      spec);
}

}  // namespace

size_t emit_function(asmjit::CodeHolder& code, const KernelSpec& spec, LoopRecorder* loops) {
  a64::Assembler a(&code);
  NeonEmitter ve(a, loops);
  regs::emit_prologue(a);
  emit_body(ve, spec);
  regs::emit_epilogue(a);
  const size_t size = a.offset();
  ve.emit_const_pool();
  return size;
}

}  // namespace nnd::jit::arm64
