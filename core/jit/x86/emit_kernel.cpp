#include "core/jit/x86/emit_kernel.h"

#include "core/jit/code_generator.h"

#include "core/jit/x86/kernels.h"
#include "core/jit/x86/kernels_planar.h"
#include "core/jit/x86/kernels_shape.h"
#include "core/jit/x86/kernels_winograd.h"
#include "core/jit/x86/math.h"
#include "core/jit/x86/stack_frame_p.h"

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
                 [&](const MergeSpec& s) { emit_merge(ve, s); },
                 [&](const ConcatSpec& s) { emit_concat(ve, s.outer, s.inner); },
                 [&](const PositionScaleSpec& s) { emit_position_scale(ve, s.positions, s.channels, s.map_off); },
                 [&](const PlanarPackSpec& s) { emit_planar_pack(ve, s); },
                 [&](const PlanarConvSpec& s) { emit_planar_conv(ve, s); },
                 [&](const WinogradInSpec& s) { emit_winograd_input(ve, s); },
                 [&](const WinogradOutSpec& s) { emit_winograd_output(ve, s); },
                 [&](const GatherSpec& s) { emit_gather(ve, s); },
                 [&](const TransposeSpec& s) { emit_transpose(ve, s); },
                 [&](const ParamEltSpec& s) { emit_param_elt(ve, s); },
                 [&](const LayerNormSpec& s) { emit_layernorm(ve, s); },
                 [&](const MatMulSpec& s) { emit_matmul(ve, s); },
                 [&](const ConstantFillSpec& s) { emit_constant_fill(ve, s); },
             },
             spec);
}

size_t emit_x86_function(asmjit::CodeHolder& code, Isa isa, LoopRecorder* loops,
                         const std::function<void(VecEmitter&)>& body) {
  x86::Assembler a(&code);
  std::unique_ptr<VecEmitter> ve = make_vec_emitter(isa, a);
  ve->set_loop_recorder(loops);
  for (const x86::Gp& r : frame::kSavedGps) a.push(r);
  a.sub(x86::rsp, frame::kStackBytes);
  body(*ve);
  ve->leave();
  a.add(x86::rsp, frame::kStackBytes);
  for (int i = frame::kNumSavedGps - 1; i >= 0; --i) a.pop(frame::kSavedGps[i]);
  a.ret();
  const size_t code_size = a.offset();
  ve->emit_const_pool();
  return code_size;
}

KernelFn compile_body(KernelModule& module, const std::string& name, const std::function<void(VecEmitter&)>& body) {
  const Isa isa = module.isa();
  return module.compile_function(name, [&](asmjit::CodeHolder& code, LoopRecorder* loops) {
    return emit_x86_function(code, isa, loops, body);
  });
}

size_t emit_kernel_function(asmjit::CodeHolder& code, Isa isa, const KernelSpec& spec, LoopRecorder* loops) {
  return emit_x86_function(code, isa, loops, [&spec](VecEmitter& ve) { emit_kernel(ve, spec); });
}

// Every x86 ISA has every generator.
bool generator_emits(Isa, const KernelSpec&) { return true; }

}  // namespace nnd::jit
