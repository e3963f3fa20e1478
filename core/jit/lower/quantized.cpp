// Quantized layer kinds (Quantize, Dequantize, QConv, QDense): the JIT has no integer kernels yet,
// so it refuses them by name (kUnsupported), and `engine: auto` serves such a model with the
// reference engine, which runs docs/int8.md's integer arithmetic exactly. Never a float
// approximation: an int8 model either runs its integers or does not run on the JIT at all.
#include <string>

#include "core/jit/lower/lower.h"
#include "core/util/error.h"

namespace nnd::jit {
namespace {

void refuse_integer(LowerContext& cx, const Node& n) {
  const std::string message = cx.g.node_context(n) + ": int8 is reference-only in this build: the JIT has no kernel for the " +
                              layer_kind_name(n.params) + " layer yet (use engine: reference, or engine: auto, which falls back to it)";
  if (!cx.unsupported) throw Error(ErrorCode::kUnsupported, message);
  cx.unsupported->push_back({static_cast<size_t>(&n - cx.g.nodes.data()), message});
  cx.output_buffer(n);  // the layers after it still get an input (jit_unsupported_layers lists them all)
}

}  // namespace

void lower(LowerContext& cx, const Node& n, const QuantizeParams&) { refuse_integer(cx, n); }
void lower(LowerContext& cx, const Node& n, const DequantizeParams&) { refuse_integer(cx, n); }
void lower(LowerContext& cx, const Node& n, const QConvParams&) { refuse_integer(cx, n); }
void lower(LowerContext& cx, const Node& n, const QDenseParams&) { refuse_integer(cx, n); }

}  // namespace nnd::jit
