#include "core/jit/kernel_plan.h"

#include <algorithm>
#include <type_traits>

namespace nnd::jit {

namespace {

void add_epilogue(KernelName& k, bool bias, bool residual, ActivationKind act) {
  if (bias) k.epilogue.push_back("bias");
  if (residual) k.epilogue.push_back("add");
  if (act != ActivationKind::kLinear) k.epilogue.push_back(activation_name(act));
}

}  // namespace

bool runs_in_place(const KernelSpec& spec) {
  if (const auto* u = std::get_if<UnarySpec>(&spec)) return !u->u8;
  return std::holds_alternative<FastUnarySpec>(spec) || std::holds_alternative<MergeSpec>(spec);
}

KernelName kernel_name(const std::string& op, const KernelSpec& spec, Isa isa, const std::string& variant) {
  KernelName k;
  k.op = op;
  k.isa = isa;
  k.variant = variant;
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.act);
          k.tile_positions = s.blocking.rows;
          k.tile_vectors = s.blocking.vmax;
        } else if constexpr (std::is_same_v<T, WindowSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.act);
          k.tile_positions = s.rows;
          k.tile_vectors = s.vmax;
        } else if constexpr (std::is_same_v<T, PlanarConvSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.act);
          // Pixels in lanes: groups of 4 pixels by the widest chunk of output channels.
          k.tile_positions = 4 * s.groups;
          k.tile_vectors = s.chunks.empty() ? 0 : *std::max_element(s.chunks.begin(), s.chunks.end());
        } else if constexpr (std::is_same_v<T, WinogradOutSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.act);
        } else if constexpr (std::is_same_v<T, UnarySpec>) {
          // The affine kernel (BatchNorm) applies a fused activation after its scale and shift.
          if (s.channels > 0 && s.act != ActivationKind::kLinear) k.epilogue.push_back(activation_name(s.act));
        }
      },
      spec);
  return k;
}

}  // namespace nnd::jit
