#include "core/jit/arm64/emit_function.h"

#include <string>
#include <type_traits>
#include <variant>

#include "core/jit/arm64/kernels.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/arm64/regs_p.h"
#include "core/util/error.h"

namespace nnd::jit::arm64 {

namespace {

// What a spec without a NEON generator maps to.
struct NotOnNeon {};

// The one table of the NEON generators: every KernelSpec alternative has an overload, either its
// generator or NotOnNeon. A spec added to KernelSpec without a line here fails to compile (in
// kOnNeon below), as a missing lambda does in x86/emit_kernel.cpp.
class NeonGenerators {
 public:
  explicit NeonGenerators(NeonEmitter& ve) : ve_(ve) {}

  void operator()(const ConvSpec& s) const { emit_conv(ve_, s); }
  void operator()(const PadSpec& s) const { emit_pad(ve_, s); }
  void operator()(const UnarySpec& s) const { emit_unary(ve_, s); }
  void operator()(const HelperCallSpec& s) const { emit_helper_call(ve_, s.helper, s.count, s.params_off); }
  void operator()(const MergeSpec& s) const { neon::emit_merge(ve_, s); }
  void operator()(const ConcatSpec& s) const { emit_concat(ve_, s.outer, s.inner); }
  void operator()(const PositionScaleSpec& s) const { emit_position_scale(ve_, s.positions, s.channels, s.map_off); }
  void operator()(const ParamEltSpec& s) const { emit_param_elt(ve_, s); }
  void operator()(const WindowSpec& s) const { neon::emit_window(ve_, s); }
  void operator()(const FastUnarySpec& s) const { neon::emit_fast_unary(ve_, s); }
  void operator()(const FastSoftmaxSpec& s) const { neon::emit_fast_softmax(ve_, s.rows, s.len); }
  void operator()(const LayerNormSpec& s) const { neon::emit_layernorm(ve_, s); }
  void operator()(const GatherSpec& s) const { neon::emit_gather(ve_, s); }
  void operator()(const TransposeSpec& s) const { neon::emit_transpose(ve_, s); }
  void operator()(const MatMulSpec& s) const { neon::emit_matmul(ve_, s); }
  void operator()(const ConstantFillSpec& s) const { neon::emit_constant_fill(ve_, s); }
  // Optional forms of a convolution whose plain kernel computes the same: the lowering asks
  // generator_emits() and plans f32-conv instead.
  NotOnNeon operator()(const PlanarPackSpec&) const { return {}; }
  NotOnNeon operator()(const PlanarConvSpec&) const { return {}; }
  NotOnNeon operator()(const WinogradInSpec&) const { return {}; }
  NotOnNeon operator()(const WinogradOutSpec&) const { return {}; }

 private:
  NeonEmitter& ve_;
};

template <class Spec>
constexpr bool kOnNeon = !std::is_same_v<std::invoke_result_t<const NeonGenerators&, const Spec&>, NotOnNeon>;

void emit_body(NeonEmitter& ve, const KernelSpec& spec) {
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (kOnNeon<T>) {
          NeonGenerators{ve}(s);
        } else {
          throw Error(ErrorCode::kInternal, "JIT internal error: a kernel NEON does not generate (KernelSpec alternative " +
                                                std::to_string(spec.index()) + ", planar or Winograd) reached the emitter");
        }
      },
      spec);
}

}  // namespace

bool emits(const KernelSpec& spec) {
  return std::visit([](const auto& s) { return kOnNeon<std::decay_t<decltype(s)>>; }, spec);
}

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
