#include "core/jit/x86/emit_kernel.h"

#include "core/jit/x86/kernels.h"
#include "core/jit/x86/kernels_planar.h"
#include "core/jit/x86/kernels_shape.h"
#include "core/jit/x86/kernels_winograd.h"
#include "core/jit/x86/math.h"

namespace nnd::jit {

namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

void emit_kernel(VecEmitter& ve, const KernelSpec& spec) {
  std::visit(Overloaded{
                 [&](const ConvSpec& s) { emit_conv(ve, s); },
                 [&](const WindowSpec& s) { emit_window(ve, s); },
                 [&](const PadSpec& s) { emit_pad(ve, s); },
                 [&](const UnarySpec& s) { emit_unary(ve, s); },
                 [&](const FastUnarySpec& s) { emit_fast_unary(ve, s); },
                 [&](const FastSoftmaxSpec& s) { emit_fast_softmax(ve, s.rows, s.len); },
                 [&](const HelperCallSpec& s) { emit_helper_call(ve, s.helper, s.count, s.params_off); },
                 [&](const MergeSpec& s) { emit_merge(ve, s.op, s.inputs, s.count, s.divisor); },
                 [&](const ConcatSpec& s) { emit_concat(ve, s.outer, s.inner); },
                 [&](const PositionScaleSpec& s) { emit_position_scale(ve, s.positions, s.channels, s.map_off); },
                 [&](const PlanarPackSpec& s) { emit_planar_pack(ve, s); },
                 [&](const PlanarConvSpec& s) { emit_planar_conv(ve, s); },
                 [&](const WinogradInSpec& s) { emit_winograd_input(ve, s); },
                 [&](const WinogradOutSpec& s) { emit_winograd_output(ve, s); },
                 [&](const GatherSpec& s) { emit_gather(ve, s); },
                 [&](const ParamEltSpec& s) { emit_param_elt(ve, s); },
                 [&](const LayerNormSpec& s) { emit_layernorm(ve, s); },
             },
             spec);
}

}  // namespace nnd::jit
