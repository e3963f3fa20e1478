#include "core/jit/kernel_plan.h"

#include <algorithm>
#include <type_traits>

#include "core/util/error.h"

namespace nnd::jit {

namespace {

void add_epilogue(KernelName& k, bool bias, bool residual, ResidualAt residual_at, ActivationKind act) {
  const bool add_last = residual && residual_at == ResidualAt::kAfterActivation;
  if (bias) k.epilogue.push_back("bias");
  if (residual && !add_last) k.epilogue.push_back("add");
  if (act != ActivationKind::kLinear) k.epilogue.push_back(activation_name(act));
  if (add_last) k.epilogue.push_back("add");
}

// Renames k after its spec changed kind (a GEMM became a conv, a pad a border fill).
void rename(PlannedKernel& k, const std::string& op, const std::string& variant) {
  const std::string node = k.name.substr(0, k.name.size() - k.kernel.str().size());  // "<node>: "
  k.kernel = kernel_name(op, k.spec, k.kernel.isa, variant);
  k.name = node + k.kernel.str();
}

}  // namespace

bool runs_in_place(const KernelSpec& spec) {
  if (const auto* u = std::get_if<UnarySpec>(&spec)) return !u->u8;
  return std::holds_alternative<FastUnarySpec>(spec) || std::holds_alternative<MergeSpec>(spec);
}

bool accepts_output_placement(const KernelSpec& spec, const PaddedStore& store) {
  return std::visit(
      [&](const auto& s) -> bool {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) {
          if (s.residual || s.out_c != store.c) return false;
          // A GEMM computes each pixel from the same input pixel, so any (h, w) of its rows works.
          if (s.rows_mode) return s.out_h * s.out_w == store.h * store.w;
          return s.out_h == store.h && s.out_w == store.w;
        } else if constexpr (std::is_same_v<T, WindowSpec>) {
          return !s.residual && s.out_h == store.h && s.out_w == store.w && s.c == store.c;
        } else if constexpr (std::is_same_v<T, PlanarConvSpec>) {
          return !s.residual && s.out_h == store.h && s.out_w == store.w && s.cout == store.c;
        } else if constexpr (std::is_same_v<T, WinogradOutSpec>) {
          return !s.residual && 2 * s.tiles_h == store.h && 2 * s.tiles_w == store.w && s.c == store.c;
        } else {
          return false;
        }
      },
      spec);
}

void place_output(PlannedKernel& k, const PaddedStore& store) {
  const OutPlacement place{store.row_floats(), store.padded_floats(), store.interior_offset()};
  std::visit(
      [&](auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, ConvSpec>) {
          if (s.rows_mode) {
            s.rows_mode = false;
            s.in_h = s.out_h = store.h;
            s.in_w = s.out_w = store.w;
          }
          s.out_place = place;
        } else if constexpr (std::is_same_v<T, WindowSpec> || std::is_same_v<T, PlanarConvSpec> ||
                             std::is_same_v<T, WinogradOutSpec>) {
          s.out_place = place;
        } else {
          throw Error(ErrorCode::kInternal, "JIT internal error: " + k.name + " takes no output placement");
        }
      },
      k.spec);
  if (k.kernel.op == "gemm") rename(k, "conv", "direct");
}

void read_bordered_input(PlannedKernel& k) {
  const PaddedStore& store = k.reads_padding.value();
  if (auto* pad = std::get_if<PadSpec>(&k.spec)) {
    pad->border_only = true;
    rename(k, "padborder", k.kernel.variant);
  } else if (auto* pack = std::get_if<PlanarPackSpec>(&k.spec)) {
    pack->src_row_floats = store.row_floats();
    pack->src_sample_floats = store.padded_floats();
    pack->src_offset = store.interior_offset();
  } else {
    throw Error(ErrorCode::kInternal, "JIT internal error: " + k.name + " cannot read a bordered input");
  }
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
          add_epilogue(k, s.has_bias, s.residual, s.residual_at, s.act);
          k.tile_positions = s.blocking.rows;
          k.tile_vectors = s.blocking.vmax;
        } else if constexpr (std::is_same_v<T, WindowSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.residual_at, s.act);
          k.tile_positions = s.rows;
          k.tile_vectors = s.vmax;
        } else if constexpr (std::is_same_v<T, PlanarConvSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.residual_at, s.act);
          // Pixels in lanes: groups of 4 pixels by the widest chunk of output channels.
          k.tile_positions = 4 * s.groups;
          k.tile_vectors = s.chunks.empty() ? 0 : *std::max_element(s.chunks.begin(), s.chunks.end());
        } else if constexpr (std::is_same_v<T, MatMulSpec>) {
          k.tile_positions = s.rows;
          k.tile_vectors = s.vectors;
        } else if constexpr (std::is_same_v<T, WinogradOutSpec>) {
          add_epilogue(k, s.has_bias, s.residual, s.residual_at, s.act);
        } else if constexpr (std::is_same_v<T, UnarySpec>) {
          // The affine kernel (BatchNorm) applies a fused activation after its scale and shift.
          if (s.channels > 0 && s.act != ActivationKind::kLinear) k.epilogue.push_back(activation_name(s.act));
        }
      },
      spec);
  return k;
}

}  // namespace nnd::jit
