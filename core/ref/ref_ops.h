// Internal to the reference engine: the float64 batch tensor and one function per layer family.
// Every function takes inputs of `batch` samples and returns a fresh output tensor of the shape
// shape inference gave the node.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/graph.h"

namespace nnd::ref {

struct Tensor {
  Dims shape;              // per sample
  int64_t batch = 0;
  int64_t sample_size = 0;  // elements per sample
  std::vector<double> data;  // batch * sample_size, batch-major, row-major

  Tensor() = default;
  Tensor(Dims s, int64_t n);  // zero-filled

  double* sample(int64_t n) { return data.data() + n * sample_size; }
  const double* sample(int64_t n) const { return data.data() + n * sample_size; }
};

// conv.cpp
Tensor dense(const DenseParams& p, const Tensor& x, const Dims& out_shape);
Tensor conv(const ConvParams& p, const Tensor& x, const Dims& out_shape);
Tensor depthwise_conv(const DepthwiseConvParams& p, const Tensor& x, const Dims& out_shape);
Tensor separable_conv(const SeparableConvParams& p, const Tensor& x, const Dims& out_shape);
Tensor conv_transpose(const ConvTransposeParams& p, const Tensor& x, const Dims& out_shape);

// normalization.cpp
Tensor batch_norm(const BatchNormParams& p, const Tensor& x);
Tensor layer_norm(const LayerNormParams& p, const Tensor& x);

// elementwise.cpp
void apply_activation(ActivationKind k, Tensor& t);  // in place; softmax-like over the last axis
Tensor activation(const ActivationParams& p, const Tensor& x);
Tensor relu(const ReluParams& p, const Tensor& x);
Tensor elu(const EluParams& p, const Tensor& x);
Tensor thresholded_relu(const ThresholdedReluParams& p, const Tensor& x);
Tensor prelu(const PReluParams& p, const Tensor& x);
Tensor softmax(const SoftmaxParams& p, const Tensor& x);
Tensor merge(const MergeParams& p, const std::vector<const Tensor*>& xs, const Dims& out_shape);

// pool.cpp
Tensor pool(const PoolParams& p, const Tensor& x, const Dims& out_shape);
Tensor global_pool(const GlobalPoolParams& p, const Tensor& x, const Dims& out_shape);
Tensor upsampling(const UpSamplingParams& p, const Tensor& x, const Dims& out_shape);
Tensor resize(const ResizeParams& p, const Tensor& x, const Dims& out_shape);

// shape_ops.cpp
Tensor reshape_copy(const Tensor& x, const Dims& out_shape);  // Flatten, Reshape, identity
Tensor permute(const PermuteParams& p, const Tensor& x, const Dims& out_shape);
Tensor repeat_vector(const RepeatVectorParams& p, const Tensor& x, const Dims& out_shape);
Tensor zero_padding(const ZeroPaddingParams& p, const Tensor& x, const Dims& out_shape);
Tensor cropping(const CroppingParams& p, const Tensor& x, const Dims& out_shape);
Tensor gather(const GatherParams& p, const Tensor& x, const Dims& out_shape);
Tensor concat(const ConcatParams& p, const std::vector<const Tensor*>& xs, const Dims& out_shape);

// shape_ops.cpp: every sample `p.value`.
Tensor constant(const ConstantParams& p, const Tensor& x);

// matmul.cpp: the product of two computed tensors, a (..., M, K) · b (..., K, N).
Tensor matmul(const Tensor& a, const Tensor& b, const Dims& out_shape);

// recurrent.cpp: SimpleRNN / LSTM / GRU; inputs {x} or {x, h0[, c0]} (RecurrentInitialState).
Tensor recurrent(const RecurrentParams& p, const std::vector<const Tensor*>& in, const Dims& out_shape);

// quantized.cpp: integer layers (core/ir/quant arithmetic); integer tensors hold integer values.
Tensor quantize(const QuantizeParams& p, const Tensor& x);
Tensor dequantize(const DequantizeParams& p, const Tensor& x);
Tensor qconv(const QConvParams& p, const Tensor& x, const Dims& out_shape);
Tensor qdense(const QDenseParams& p, const Tensor& x, const Dims& out_shape);

// Helpers shared by the files above.
// Views a {W, C} (rank 1) or {H, W, C} (rank 2) sample shape as H, W, C.
struct Hwc {
  int64_t h, w, c;
};
Hwc as_hwc(int rank, const Dims& s);

}  // namespace nnd::ref
