// The ONNX operator lowerings, one unit per operator family (like core/jit/lower/):
//   onnx_ops_constant.cpp    Identity, Dropout, Constant, ConstantOfShape, Shape, Cast, and the
//                            arithmetic exporters apply to shapes (Abs, Neg, Sqrt, Erf, Mod, Equal, Where...)
//   onnx_ops_shape.cpp       Unsqueeze, Squeeze, Transpose, Reshape, Flatten, Concat, Gather, Slice,
//                            Split, Expand
//   onnx_ops_conv.cpp        Conv (grouped, depthwise), ConvTranspose
//   onnx_ops_pool.cpp        MaxPool, AveragePool, global pools, Reduce*
//   onnx_ops_dense.cpp       Gemm, MatMul, BatchNormalization, LayerNormalization
//   onnx_ops_activation.cpp  Relu, Sigmoid, Gelu, Clip, PRelu, Softmax, LogSoftmax, ...
//   onnx_ops_binary.cpp      Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean
//   onnx_ops_pad.cpp         Pad (every mode)
//   onnx_ops_resize.cpp      Resize, Upsample
//   onnx_ops_recurrent.cpp   RNN, LSTM, GRU
// A new family is a file onnx_ops_<family>.cpp ending in add_<family>_lowerings(), declared below
// and listed in kFamilies (onnx_ops.cpp); an operator is registered once (LoweringTable::add
// refuses a second registration). Lowerings read their node's inputs and attributes through the
// Importer (onnx_import.h), fold what is constant, and emit IR nodes; anything they cannot express
// exactly is refused with a message naming the attribute or input.
//
// Not a public header (see onnx_loader.h); below the family list are the helpers the families share.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/io/onnx_import.h"

namespace nnd::onnx_import {

using Node_ = onnx::NodeProto;

// Operator name (default ONNX domain) -> its lowering.
class LoweringTable {
 public:
  // Registers `op`; a second registration of one operator is a programming error (throws).
  void add(const std::string& op, Lowering lowering);
  Lowering find(const std::string& op) const;

 private:
  std::map<std::string, Lowering> table_;
};

void add_constant_lowerings(LoweringTable& t);
void add_shape_lowerings(LoweringTable& t);
void add_conv_lowerings(LoweringTable& t);
void add_pool_lowerings(LoweringTable& t);
void add_dense_lowerings(LoweringTable& t);
void add_activation_lowerings(LoweringTable& t);
void add_binary_lowerings(LoweringTable& t);
void add_pad_lowerings(LoweringTable& t);
void add_resize_lowerings(LoweringTable& t);
void add_recurrent_lowerings(LoweringTable& t);
void add_quant_lowerings(LoweringTable& t);

// --- QDQ hooks (onnx_ops_quant.cpp) for the float lowerings of Conv, Gemm, MatMul ---

// Conv of DequantizeLinear(x) with DequantizeLinear(constant) weights: lowers it to an integer
// convolution and returns true; false (nothing read) for any other Conv.
bool lower_qdq_conv(Importer& im, const Node_& node, Attributes& a);
// Gemm (transB, alpha, bias input 2) or MatMul (bias_in -1) of the same form.
bool lower_qdq_dense(Importer& im, const Node_& node, bool trans_b, double alpha, int bias_in);
// QuantizeLinear of an integer layer's dequantized accumulator (through at most one Relu/Clip):
// the layer requantizes to `yq` instead and the QuantizeLinear's output aliases it.
bool fold_quantize_into_producer(Importer& im, const Node_& node, Symbol& x, const quant::QuantParams& yq);

// --- Helpers the families share (onnx_ops_helpers.cpp) ---

std::string list_text(const std::vector<int64_t>& v);  // "[1, 2, 3]"
std::string num(double v);                              // "%g"

Weights weights_of(const Constant& c, Dims shape);

// Parameters the loader makes up (affine maps, biases) are per-axis vectors; an axis this long
// is no real model, and refusing it keeps a hostile file from allocating gigabytes.
constexpr int64_t kMaxMadeUpParameters = int64_t{1} << 24;
Weights filled(int64_t n, float v);  // throws kLimit past kMaxMadeUpParameters

// Integer list from an attribute, or from constant input `n` when the opset moved it there.
std::optional<std::vector<int64_t>> ints_from(Importer& im, const Node_& node, Attributes& a,
                                              const std::string& attr, int n);

// A constant operand of an element-wise operation on a tensor `x`: a scalar, or a vector along one
// ONNX axis of x (numpy broadcasting).
struct AxisVector {
  int axis = -1;  // ONNX axis, -1 for a scalar
  std::vector<double> values;
};
AxisVector axis_vector(Importer& im, const Symbol& x, const Constant& c);

// y = x * scale + shift along the axis of `scale`/`shift` (an IR BatchNormalization with mean 0,
// variance 1, epsilon 0). Both vectors have one value (scalar) or the axis length.
BatchNormParams affine_params(Importer& im, const Symbol& x, int onnx_axis, std::vector<double> scale,
                              std::vector<double> shift);
// The layout in which a Dense over x's last ONNX axis reads x: x's own when its last IR axis is
// that axis, else the batch first and the other axes in ONNX order. Refuses a batch on the last axis.
Perm dense_layout(Importer& im, const Symbol& x);

// Operand `s` of a two-operand operator (a merge, a MatMul of two computed tensors) in the layout
// `perm` of its first operand. Both must carry the batch on the same ONNX axis (a batch the file
// fixes to 1 may move there, Importer::with_batch_on): such an operator cannot pair samples of one
// with positions of the other.
ValueId merge_operand(Importer& im, Symbol& s, const Perm& perm);

// Constant `c` as an operand beside the computed tensor `like`, in the layout `perm` (batch
// first): an IR Constant node whose every sample holds c. c has at most like's rank (numpy
// alignment: missing leading axes have length 1) and length 1 on the batch's ONNX axis perm[0]
// (the same numbers for every sample: a learned token or position embedding), else refused.
ValueId constant_operand(Importer& im, const Constant& c, const Symbol& like, const Perm& perm, const std::string& name);

void emit_affine(Importer& im, const Node_& node, Symbol& x, int onnx_axis, std::vector<double> scale,
                 std::vector<double> shift);

// The element-wise layer `params` on the node's one computed input.
void emit_activation(Importer& im, const Node_& node, LayerParams params);

// IR nodes applied one after another to one value, each with the suffix naming its value.
using Steps = std::vector<std::pair<std::string, LayerParams>>;
// Emits `steps` on `v` as internal values named "<name>:<suffix>"; returns the last.
ValueId emit_internal_steps(Importer& im, const std::string& name, ValueId v, Steps steps);
// Emits `steps` on `v`, the last as output `out` of `node` with the dims and layout of `result`
// (an alias of `v` when there are no steps).
void emit_steps(Importer& im, const Node_& node, int out, Symbol result, ValueId v, Steps steps);

// Convolution and pooling windows as the attributes give them.
struct WindowAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};
WindowAttrs read_window(Importer& im, Attributes& a, size_t spatial, const std::vector<int64_t>& kernel_from_w);
// Fills an IR Window for spatial input lengths `in` (1 or 2 of them), following ONNX's auto_pad,
// pads and ceil_mode rules.
Window make_window(Importer& im, const WindowAttrs& wa, const std::vector<int64_t>& in);
std::vector<int64_t> spatial_dims(const Symbol& x);  // ONNX axes 2...
// Refuses inputs other than 1-D (N, C, W) and 2-D (N, C, H, W).
void check_conv_rank(Importer& im, const Symbol& x);

}  // namespace nnd::onnx_import
