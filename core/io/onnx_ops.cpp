// The registry of ONNX operator lowerings: every family's add_<family>_lowerings() (onnx_ops.h)
// fills one table, built on first use.
#include "core/io/onnx_ops.h"

#include <stdexcept>

namespace nnd::onnx_import {

void LoweringTable::add(const std::string& op, Lowering lowering) {
  if (!table_.emplace(op, lowering).second) {
    throw std::logic_error("ONNX operator '" + op + "' has two lowerings");
  }
}

Lowering LoweringTable::find(const std::string& op) const {
  const auto it = table_.find(op);
  return it == table_.end() ? nullptr : it->second;
}

namespace {

// One entry per onnx_ops_<family>.cpp.
constexpr void (*kFamilies[])(LoweringTable&) = {
    add_constant_lowerings, add_shape_lowerings,  add_conv_lowerings,   add_pool_lowerings,
    add_dense_lowerings,    add_activation_lowerings, add_binary_lowerings, add_pad_lowerings,
    add_resize_lowerings,   add_recurrent_lowerings, add_quant_lowerings,
};

const LoweringTable& lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    for (auto add : kFamilies) add(t);
    return t;
  }();
  return table;
}

}  // namespace

Lowering find_lowering(const std::string& op_type) { return lowerings().find(op_type); }

}  // namespace nnd::onnx_import
