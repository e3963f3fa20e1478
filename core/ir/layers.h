// Typed parameters of every layer kind the IR supports: one struct per kind, held in the
// std::variant LayerParams. Engines dispatch on the variant index, never on strings.
//
// Conventions:
//  - Shapes exclude the batch axis (see tensor.h). A 1-D layer (Conv1D, MaxPooling1D, ...) works
//    on {steps, C}; its window uses only the *_w fields and keeps kernel_h = stride_h = 1.
//  - Axis fields named `keras_axis` hold the value written in the Keras config (counting the batch
//    axis as 0, negative from the end). Shape inference resolves them into `axis`, an index into
//    the per-sample Dims (0-based, batch excluded), validated against the input rank.
//  - Weights keep the Keras shapes documented on each field.
//  - Fused residual (set only by graph passes, see core/passes/fuse_add.h): Dense, Conv,
//    DepthwiseConv and SeparableConv have `residual`. When true, the node has exactly two inputs,
//    Node::inputs = {x, r}, r has the node's output shape, and the layer computes
//        y = activation(layer(x) + bias + r)
//    i.e. the residual is added after the bias and BEFORE the layer's activation (Keras order
//    conv -> Add -> ReLU becomes one node with residual = true and activation = relu). The
//    default false means "no residual, one input". With residual_at = kAfterActivation the
//    residual comes last instead, y = activation(layer(x) + bias) + r (Keras order
//    conv -> ReLU -> Add); passes set that only with a ReLU or ReLU6 activation.
#pragma once

#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "core/ir/activation.h"
#include "core/ir/tensor.h"
#include "core/ir/quant/quant_params.h"

namespace nnd {

enum class Padding : uint8_t {
  kValid,   // no padding
  kSame,    // TensorFlow "same": out = ceil(in / stride); total pad = max((out-1)*stride +
            // (k-1)*dilation + 1 - in, 0); pad_before = total / 2, pad_after = total - pad_before
  kCausal,  // Conv1D only: pad (k-1)*dilation on the left, none on the right
  kExplicit,  // the pad_* fields of Window, each smaller than the dilated kernel (ONNX `pads`):
              // out = floor((in + before + after - k_eff) / stride) + 1
};

// Spatial window of convolutions and pooling. 1-D layers use kernel_h = stride_h = dilation_h = 1
// (and pad_top = pad_bottom = 0).
struct Window {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  Padding padding = Padding::kValid;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // kExplicit only
};

// Dense: y = act(x · kernel + bias) over the last axis; any leading per-sample axes are kept.
struct DenseParams {
  int64_t units = 0;
  ActivationKind activation = ActivationKind::kLinear;
  Weights kernel;  // (in_features, units)
  Weights bias;    // (units) or empty when use_bias is false
  bool residual = false;  // fused residual input (see the header comment)
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // with residual: added before or after act
};

// Conv1D / Conv2D with groups. Input {H, W, Cin} (2-D) or {W, Cin} (1-D).
struct ConvParams {
  int rank = 2;  // 1 or 2
  int64_t filters = 0;
  int64_t groups = 1;
  Window window;
  ActivationKind activation = ActivationKind::kLinear;
  Weights kernel;  // (kh, kw, Cin / groups, filters); 1-D files store (kw, Cin/groups, filters)
                   // and the loader reshapes to (1, kw, Cin/groups, filters)
  Weights bias;    // (filters) or empty
  bool residual = false;  // fused residual input (see the header comment)
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // with residual: added before or after act
};

// DepthwiseConv2D (and DepthwiseConv1D, rank 1): output channel c * depth_multiplier + m is input
// channel c convolved with kernel[..., c, m].
struct DepthwiseConvParams {
  int rank = 2;
  int64_t depth_multiplier = 1;
  Window window;
  ActivationKind activation = ActivationKind::kLinear;
  Weights kernel;  // (kh, kw, Cin, depth_multiplier)
  Weights bias;    // (Cin * depth_multiplier) or empty
  bool residual = false;  // fused residual input (see the header comment)
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // with residual: added before or after act
};

// SeparableConv2D (and SeparableConv1D): depthwise (no bias, no activation) then a 1x1 pointwise
// convolution with bias and activation.
struct SeparableConvParams {
  int rank = 2;
  int64_t filters = 0;
  int64_t depth_multiplier = 1;
  Window window;
  ActivationKind activation = ActivationKind::kLinear;
  Weights depthwise_kernel;  // (kh, kw, Cin, depth_multiplier)
  Weights pointwise_kernel;  // (1, 1, Cin * depth_multiplier, filters)
  Weights bias;              // (filters) or empty
  bool residual = false;  // fused residual input (see the header comment)
  ResidualAt residual_at = ResidualAt::kBeforeActivation;  // with residual: added before or after act
};

// Conv2DTranspose (and Conv1DTranspose). Output size per spatial axis as Keras'
// deconv_output_length computes it, with k_eff = (k - 1) * dilation + 1:
//   valid: (in - 1) * stride + k_eff + out_pad, or in * stride + max(k_eff - stride, 0) without
//   same:  (in - 1) * stride + out_pad,        or in * stride                   output_padding
// Placement (TensorFlow's gradient of the forward convolution, no kernel flip) is in
// core/ir/conv_geometry.h, shared by shape inference and the engines.
struct ConvTransposeParams {
  int rank = 2;
  int64_t filters = 0;
  Window window;
  int64_t output_padding_h = -1, output_padding_w = -1;  // -1: Keras "None"
  ActivationKind activation = ActivationKind::kLinear;
  Weights kernel;  // (kh, kw, filters, Cin)
  Weights bias;    // (filters) or empty
};

// BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * gamma + beta along one
// axis. center=false / scale=false are stored as beta = 0 / gamma = 1 by the loader.
struct BatchNormParams {
  int keras_axis = -1;
  int axis = -1;  // resolved
  double epsilon = 1e-3;
  Weights gamma, beta, moving_mean, moving_variance;  // each (C)
  // Fused activation applied after the affine (set only by graph passes; loaders leave linear).
  ActivationKind activation = ActivationKind::kLinear;
};

// LayerNormalization: normalise over `axes` per sample, then gamma/beta (shaped like the
// normalised axes' dims, flattened).
struct LayerNormParams {
  std::vector<int> keras_axes;  // as written
  std::vector<int> axes;        // resolved, sorted
  double epsilon = 1e-3;
  Weights gamma, beta;  // empty when scale / center is false
};

// Activation layer (and TFOpLambda element-wise functions mapped onto a kind).
struct ActivationParams {
  ActivationKind activation = ActivationKind::kLinear;
};

// ReLU layer and LeakyReLU (negative_slope = alpha, threshold 0, no max), as Keras computes it:
//   x >= max_value       -> max_value
//   threshold < x < max  -> x            (x == threshold gives 0, as in Keras)
//   x <= threshold       -> negative_slope * (x - threshold)
struct ReluParams {
  double max_value = std::numeric_limits<double>::infinity();
  double negative_slope = 0.0;
  double threshold = 0.0;
};

// ELU layer: x > 0 ? x : alpha * (exp(x) - 1).
struct EluParams {
  double alpha = 1.0;
};

// ThresholdedReLU: x > theta ? x : 0.
struct ThresholdedReluParams {
  double theta = 1.0;
};

// PReLU: x > 0 ? x : alpha * x, alpha broadcast over shared axes.
struct PReluParams {
  Weights alpha;  // per-sample shape with 1 on each shared axis
};

// Softmax layer over one axis.
struct SoftmaxParams {
  int keras_axis = -1;
  int axis = -1;  // resolved
};

enum class PoolKind : uint8_t { kMax, kAverage };

// MaxPooling1D/2D, AveragePooling1D/2D. Averages exclude padded positions (TensorFlow).
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  int rank = 2;
  Window window;  // dilation is always 1
};

// GlobalMax/GlobalAveragePooling1D/2D.
struct GlobalPoolParams {
  PoolKind kind = PoolKind::kMax;
  int rank = 2;
  bool keepdims = false;
};

// Flatten: {d0, d1, ...} -> {d0 * d1 * ...}. Row-major order is unchanged.
struct FlattenParams {};

// Reshape: target per-sample shape, at most one -1.
struct ReshapeParams {
  Dims target;
};

// Permute: Keras `dims`, a permutation of 1..rank (1-based sample axes).
struct PermuteParams {
  std::vector<int> dims;
};

// RepeatVector: {F} -> {n, F}.
struct RepeatVectorParams {
  int64_t n = 1;
};

// Dropout, SpatialDropout1D/2D, GaussianNoise, GaussianDropout, AlphaDropout, ActivityRegularization
// and friends: identity at inference.
struct IdentityParams {};

// ZeroPadding1D/2D (rank 1 uses left/right only).
struct ZeroPaddingParams {
  int rank = 2;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// Cropping1D/2D (rank 1 uses left/right only).
struct CroppingParams {
  int rank = 2;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

enum class Interpolation : uint8_t {
  kNearest,
  kBilinear,  // TF2 / Keras 3 semantics: half-pixel centers, no antialiasing
};

// UpSampling1D/2D (1-D is always nearest: repeat each step size_w times).
struct UpSamplingParams {
  int rank = 2;
  int64_t size_h = 1, size_w = 1;
  Interpolation interpolation = Interpolation::kNearest;
};

// Where output coordinate x of a resize reads along one axis (ONNX coordinate_transformation_mode);
// `scale` is the axis' scale factor (out / in unless the file gives one), in / out its lengths.
enum class ResizeCoordinates : uint8_t {
  kHalfPixel,          // (x + 0.5) / scale - 0.5       (TF2 and Keras bilinear, ONNX's default)
  kPytorchHalfPixel,   // as half-pixel, but 0 when out is 1
  kAlignCorners,       // x * (in - 1) / (out - 1), 0 when out is 1
  kAsymmetric,         // x / scale                     (PyTorch nearest)
  kTfHalfPixelForNn,   // (x + 0.5) / scale             (TF2 and Keras nearest)
};

// How nearest resizing turns an input coordinate into an index (ONNX nearest_mode).
enum class NearestRounding : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// A resize to any output size (ONNX Resize / Upsample, Keras Resizing) where UpSampling's
// whole-number repeat does not describe it. Nearest reads the element at the rounded coordinate;
// kBilinear interpolates linearly along each resized axis between the two neighbours of the
// coordinate clamped to the input. The maps are core/ir/resize.h.
struct ResizeParams {
  int rank = 2;                     // 1: (steps, channels), only out_w / scale_w apply
  int64_t out_h = 1, out_w = 1;
  double scale_h = 0, scale_w = 0;  // the scale the coordinate map divides by; 0: out / in
  Interpolation interpolation = Interpolation::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
};

enum class MergeOp : uint8_t { kAdd, kSubtract, kMultiply, kAverage, kMaximum, kMinimum };

// Add, Subtract (exactly two inputs), Multiply, Average, Maximum, Minimum. Inputs have the same
// rank; each dim equal or 1 (broadcast).
struct MergeParams {
  MergeOp op = MergeOp::kAdd;
};

// Gather: constant indices along one per-sample axis, out[..., i, ...] = in[..., indices[i], ...]
// (ONNX Gather with an index list, Slice with negative steps: torch.flip, BGR <-> RGB).
struct GatherParams {
  int axis = 0;                  // per-sample axis, 0-based (the batch is not counted)
  std::vector<int64_t> indices;  // each in [0, input length along `axis`)
};

// ArgMax / ArgMin (ONNX): the index of the largest (smallest) element along a per-sample axis; on
// ties the first, or the last with select_last_index. A NaN compares false (it is chosen only
// where it is the first element). The output is int64 and is served only as a graph output:
// shape inference refuses an int64 tensor as any layer's input.
struct ArgMaxParams {
  int axis = 0;                    // per-sample axis, 0-based (the batch is not counted)
  // Where the reduced axis stays, of length 1, among the output's per-sample axes (-1: dropped).
  // Any position holds the same elements in the same order; a loader puts it where the file's
  // layout has it.
  int keep_at = -1;
  bool smallest = false;           // ArgMin
  bool select_last_index = false;
};

// MatMul: the matrix product of two computed tensors per sample (attention's Q·Kᵀ and
// weights·V). Inputs a (..., M, K) and b (..., K, N) of one rank >= 2 per sample; the leading
// axes pair up, each equal or 1 (broadcast); the output is (..., M, N). A product with a constant
// matrix is a Dense layer instead.
struct MatMulParams {};

// Constant: every sample of the output is `value` (of its shape), whatever the input holds; the
// one input only gives the batch. A learned token or position embedding that meets computed
// tensors in a Concat or an element-wise operator (ViT's class token, DETR's queries).
struct ConstantParams {
  Weights value;
};

// Concatenate along one axis.
struct ConcatParams {
  int keras_axis = -1;
  int axis = -1;  // resolved
};

enum class RecurrentCell : uint8_t {
  kSimple,  // h = act(x W + h R + b)                                    (Keras SimpleRNN, ONNX RNN)
  kLstm,    // gates i, f, c, o (Keras order)                            (Keras LSTM, ONNX LSTM)
  kGru,     // gates z, r, h                                             (Keras GRU, ONNX GRU)
};

enum class RecurrentDirection : uint8_t { kForward, kReverse, kBidirectional };

// What the node outputs (one node has one output; a file that uses several becomes several nodes).
enum class RecurrentOutput : uint8_t {
  kSequence,    // every step's hidden state: {steps, D * units}, direction d in columns d*units..
  kLastHidden,  // the hidden state after the last step of each direction: {D * units}
  kLastCell,    // LSTM only: the cell state after the last step of each direction: {D * units}
};

// How a bidirectional layer joins its two directions (Keras Bidirectional merge_mode).
enum class RecurrentMerge : uint8_t {
  kConcat,    // forward's units, then backward's: D * units wide (ONNX; Keras "concat")
  kSum,       // element-wise, units wide: Keras "sum"
  kMultiply,  //                           Keras "mul"
  kAverage,   //                           Keras "ave"
};

// Where the initial state comes from.
enum class RecurrentInitialState : uint8_t {
  kZero,      // zeros (Keras, and ONNX without initial_h / initial_c)
  kConstant,  // RecurrentWeights::initial_h / initial_c
  kInputs,    // node inputs 1 (h, {D * units}) and, for LSTM, 2 (c, {D * units}), per sample
};

// One direction's weights. Gate blocks of `units` columns in Keras order (LSTM i, f, c, o; GRU
// z, r, h); loaders from other orders (ONNX: i, o, f, c) reorder.
struct RecurrentWeights {
  Weights kernel;            // (features, G * units)
  Weights recurrent_kernel;  // (units, G * units)
  Weights bias;              // (G * units), added to x W; empty = none
  Weights recurrent_bias;    // (G * units), added to h R; empty = none. For GRU with reset_after
                             // its h block sits inside the reset product (see RecurrentParams).
  Weights initial_h, initial_c;  // (units) each, RecurrentInitialState::kConstant only
};

// SimpleRNN / LSTM / GRU over the steps axis: input {steps, features}, one direction or both
// (direction 0 runs forward, direction 1 backward; a kReverse layer has one direction that runs
// backward). Per step t of direction d, with a = activation, s = recurrent_activation:
//   SimpleRNN  h = a(x W + b + h R + rb)
//   LSTM       i, f, o = s(x W. + b. + h R. + rb.), g = a(x Wc + bc + h Rc + rbc)
//              c = f * c + i * g,  h = o * a(c)
//   GRU        z, r = s(x W. + b. + h R. + rb.)
//              reset_after:   n = a(x Wh + bh + r * (h Rh + rbh))     (ONNX linear_before_reset=1,
//              !reset_after:  n = a(x Wh + bh + (r * h) Rh + rbh)      Keras reset_after=True)
//              h = (1 - z) * n + z * h
// A backward direction reads steps T-1..0 and writes step t's state at row t (Keras Bidirectional
// and ONNX both align it in time).
struct RecurrentParams {
  RecurrentCell cell = RecurrentCell::kLstm;
  int64_t units = 0;
  RecurrentDirection direction = RecurrentDirection::kForward;
  RecurrentOutput output = RecurrentOutput::kSequence;
  RecurrentInitialState initial_state = RecurrentInitialState::kZero;
  ActivationKind activation = ActivationKind::kTanh;               // a
  ActivationKind recurrent_activation = ActivationKind::kSigmoid;  // s (LSTM, GRU gates)
  bool reset_after = true;                                         // GRU only
  RecurrentMerge merge = RecurrentMerge::kConcat;                  // kBidirectional only
  std::vector<RecurrentWeights> directions;  // 1, or 2 for kBidirectional (forward, backward)

  int gates() const { return cell == RecurrentCell::kLstm ? 4 : cell == RecurrentCell::kGru ? 3 : 1; }
  int direction_count() const { return direction == RecurrentDirection::kBidirectional ? 2 : 1; }
  // Does direction d read the steps backward?
  bool backward(int d) const { return d == 1 || direction == RecurrentDirection::kReverse; }
  // Columns of the output (and of each initial-state input, which is never merged).
  int64_t output_width() const { return merge == RecurrentMerge::kConcat ? units * direction_count() : units; }
};

// ---- Quantized (int8) kinds: the arithmetic is core/ir/quant/requantize.h, the rules docs/int8.md ----

// Integer weights of an integer layer, in the layout the float kind uses (QConv like Conv, QDense
// like Dense); every value lies in the range of the layer's `weights` type.
struct IntWeights {
  Dims shape;
  std::vector<int32_t> data;  // row-major

  bool empty() const { return data.empty(); }
};

// The IR element type of a quantized tensor of type t.
inline DType quant_dtype(quant::QuantType t) {
  return t == quant::QuantType::kInt8 ? DType::kInt8 : t == quant::QuantType::kUInt8 ? DType::kUInt8 : DType::kInt32;
}

// QuantizeLinear: float32 -> int8 / uint8 by `output` (per tensor), quant::quantize per element.
struct QuantizeParams {
  quant::QuantParams output;
};

// DequantizeLinear: int8 / uint8 / int32 (`input.type`, the input's dtype) -> float32 by
// quant::dequantize; per tensor, or per index along `input.axis`, a per-sample axis (batch
// excluded).
struct DequantizeParams {
  quant::QuantParams input;
};

// The output of an integer layer: requantized to `output` (int8 / uint8, per tensor) with the
// integers clamped to a fused activation's real range [act_lo, act_hi] (quant::output_range), or,
// with output.type kInt32, the int32 accumulator itself (ConvInteger, MatMulInteger; the act_*
// fields are then infinite).
struct IntegerOutput {
  quant::QuantParams output = quant::QuantParams::per_tensor(quant::QuantType::kInt32, 1.0f, 0);
  double act_lo = -std::numeric_limits<double>::infinity();
  double act_hi = std::numeric_limits<double>::infinity();
};

// Integer convolution (QLinearConv, ConvInteger, and QDQ DequantizeLinear -> Conv ->
// QuantizeLinear): Conv's geometry and layouts, depthwise as groups = input channels. Per output
// element: acc = sum (x - x_zp)(w - w_zp[f]) + bias[f] over the window (padding contributes
// nothing: it holds x_zp, real 0), exact in int32 (shape inference proves the bound), then `out`.
struct QConvParams {
  int rank = 2;
  int64_t filters = 0;
  int64_t groups = 1;
  Window window;
  quant::QuantParams input;    // per tensor; its type is the input's dtype
  quant::QuantParams weights;  // per tensor, or per filter (axis 3 of the kernel)
  IntWeights kernel;           // (kh, kw, Cin / groups, filters)
  std::vector<int32_t> bias;   // (filters) at scale input * weights, zero point 0; or empty
  IntegerOutput out;
};

// Integer matrix product over the last axis (QLinearMatMul, MatMulInteger, QDQ MatMul / Gemm):
// acc = sum_k (x_k - x_zp)(w_kn - w_zp[n]) + bias[n], then `out`.
struct QDenseParams {
  int64_t units = 0;
  quant::QuantParams input;    // per tensor
  quant::QuantParams weights;  // per tensor, or per unit (axis 1 of the kernel)
  IntWeights kernel;           // (in_features, units)
  std::vector<int32_t> bias;   // (units) or empty
  IntegerOutput out;
};

using LayerParams =
    std::variant<DenseParams, ConvParams, DepthwiseConvParams, SeparableConvParams,
                 ConvTransposeParams, BatchNormParams, LayerNormParams, ActivationParams,
                 ReluParams, EluParams, ThresholdedReluParams, PReluParams, SoftmaxParams,
                 PoolParams, GlobalPoolParams, FlattenParams, ReshapeParams, PermuteParams,
                 RepeatVectorParams, IdentityParams, ZeroPaddingParams, CroppingParams,
                 UpSamplingParams, MergeParams, ConcatParams, RecurrentParams, ResizeParams,
                 GatherParams, ArgMaxParams, MatMulParams, ConstantParams, QuantizeParams, DequantizeParams, QConvParams, QDenseParams>;

// Short name of the IR kind held by `p` ("Dense", "Conv", "Pool", ...), for logs and dumps. A new
// kind also needs its traits, cost, dump and reference implementation: core/ir/layer_kind_traits.h.
const char* layer_kind_name(const LayerParams& p);

}  // namespace nnd
