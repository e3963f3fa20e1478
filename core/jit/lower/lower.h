// One lowering function per layer kind, each in the unit of its operator family:
//   conv.cpp           Conv1D/2D (Winograd, planar, rows/GEMM or spatial direct), Conv transpose
//   dense.cpp          Dense
//   depthwise.cpp      DepthwiseConv, SeparableConv
//   pool.cpp           max / average pooling, global pooling
//   elementwise.cpp    Activation, ReLU, ELU, ThresholdedReLU, PReLU, Softmax (+ fast math, helpers)
//   normalization.cpp  BatchNormalization (any axis), LayerNormalization
//   merge.cpp          Add, Subtract, Multiply, Average, Maximum, Minimum (with broadcasting)
//   concat.cpp         Concatenate
//   matmul.cpp         MatMul of two computed tensors
//   pad.cpp            ZeroPadding (and the pad kernels of window layers)
//   shape.cpp          Flatten, Reshape, Identity, Permute, RepeatVector, Cropping, UpSampling,
//                      Resize, Gather (index maps), Constant
//   recurrent.cpp      recurrent layers (expanded by a graph pass; only the step-count limit here)
// lower_node.cpp dispatches over the params variant with one overload per kind and no fallback,
// so a layer kind without a lowering does not compile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/jit/kernel_helpers.h"
#include "core/jit/lower/lower_context.h"

namespace nnd::jit {

// Plans the whole graph into cx: the inputs' buffers (and their uint8 conversion buffers), every
// node, in-place reuse on each node's plan (in_place.h), then padded storage on the whole plan
// (padded_storage.h).
void lower_graph(LowerContext& cx);

// Plans the kernels of node n into cx.
void lower_node(LowerContext& cx, const Node& n);

// Why the JIT cannot compile n (nullopt: it can): a recurrent layer over more steps than
// passes::ExpandRecurrent unrolls. Every other layer kind has a lowering.
std::optional<std::string> recurrent_limit(const Graph& g, const Node& n);

void lower(LowerContext& cx, const Node& n, const DenseParams& p);
void lower(LowerContext& cx, const Node& n, const ConvParams& p);
void lower(LowerContext& cx, const Node& n, const ConvTransposeParams& p);
void lower(LowerContext& cx, const Node& n, const DepthwiseConvParams& p);
void lower(LowerContext& cx, const Node& n, const SeparableConvParams& p);
void lower(LowerContext& cx, const Node& n, const PoolParams& p);
void lower(LowerContext& cx, const Node& n, const GlobalPoolParams& p);
void lower(LowerContext& cx, const Node& n, const ActivationParams& p);
void lower(LowerContext& cx, const Node& n, const ReluParams& p);
void lower(LowerContext& cx, const Node& n, const EluParams& p);
void lower(LowerContext& cx, const Node& n, const ThresholdedReluParams& p);
void lower(LowerContext& cx, const Node& n, const PReluParams& p);
void lower(LowerContext& cx, const Node& n, const SoftmaxParams& p);
void lower(LowerContext& cx, const Node& n, const BatchNormParams& p);
void lower(LowerContext& cx, const Node& n, const LayerNormParams& p);
void lower(LowerContext& cx, const Node& n, const MergeParams& p);
void lower(LowerContext& cx, const Node& n, const ConcatParams& p);
void lower(LowerContext& cx, const Node& n, const ZeroPaddingParams& p);
void lower(LowerContext& cx, const Node& n, const FlattenParams& p);
void lower(LowerContext& cx, const Node& n, const ReshapeParams& p);
void lower(LowerContext& cx, const Node& n, const IdentityParams& p);
void lower(LowerContext& cx, const Node& n, const PermuteParams& p);
void lower(LowerContext& cx, const Node& n, const RepeatVectorParams& p);
void lower(LowerContext& cx, const Node& n, const CroppingParams& p);
void lower(LowerContext& cx, const Node& n, const UpSamplingParams& p);
void lower(LowerContext& cx, const Node& n, const ResizeParams& p);
void lower(LowerContext& cx, const Node& n, const GatherParams& p);
void lower(LowerContext& cx, const Node& n, const ConstantParams& p);
void lower(LowerContext& cx, const Node& n, const RecurrentParams& p);
// matmul.cpp: the product of two computed tensors (f32-matmul).
void lower(LowerContext& cx, const Node& n, const MatMulParams& p);
// quantized.cpp: refused by name, kUnsupported (int8 is reference-only in this build).
void lower(LowerContext& cx, const Node& n, const QuantizeParams& p);
void lower(LowerContext& cx, const Node& n, const DequantizeParams& p);
void lower(LowerContext& cx, const Node& n, const QConvParams& p);
void lower(LowerContext& cx, const Node& n, const QDenseParams& p);

// ---- building blocks shared between units ----

// elementwise.cpp. An element-wise activation kernel on buffer b (in place) unless act is linear.
void activation_step(LowerContext& cx, const Node& n, int b, ActivationKind act, int64_t count, int64_t last_dim);
// y = act(x) from src to dst: an f32-fast-* kernel, a vectorised one, or a helper call.
void unary_step(LowerContext& cx, const Node& n, int src, int dst, ActivationKind act, int64_t count,
                int64_t last_dim);
// The f32-fast-* kernel (generators/fast_math.h) when the math mode takes it for `act` (fast_kernel_serves;
// softmax: over rows of last_dim floats); false otherwise.
bool fast_step(LowerContext& cx, const Node& n, int src, int dst, ActivationKind act, float alpha, int64_t count,
               int64_t last_dim);
void helper_step(LowerContext& cx, const Node& n, int src, int dst, HelperTag tag, std::array<float, 3> params,
                 int64_t count, const std::string& what);
// A per-element parameter kernel (PReLU slopes, or an affine y = x * a + b).
void param_step(LowerContext& cx, const Node& n, ParamOp op, const std::vector<float>& a, const std::vector<float>* b,
                int src, int dst);

// pad.cpp. Pads (and replicates channels dm times) into a new arena buffer when needed; returns the
// buffer to read and its padded geometry. A plain pad declares that it reads padding, so padded
// storage (padded_storage.h) may turn it into a border fill afterwards.
int pad_step(LowerContext& cx, const Node& n, int src, const Hwc& in, int64_t dm, const Pads& pd, float value,
             Hwc* padded);

// conv.cpp. A conv spec with the register blocking for cin_g -> cout_g channels per group.
ConvSpec conv_spec(const LowerContext& cx, int64_t cin_g, int64_t cout_g);
// Packs the weights for cs and plans its kernel: gemm in rows mode, else conv with `variant`
// (default: direct, or grouped for >= 4 groups). residual: buffer or -1.
void conv_step(LowerContext& cx, const Node& n, ConvSpec cs, const Weights& kernel, const Weights& bias, int src,
               int dst, const std::string& variant, int residual = -1);

// depthwise.cpp. A depthwise window (channels replicated dm times), then `act` when not fused.
void depthwise_step(LowerContext& cx, const Node& n, const Window& win, const Weights& kernel, const Weights* bias,
                    int64_t dm, ActivationKind act, int src, int dst, const Hwc& in, const Pads& pd,
                    int residual = -1);

// shape.cpp. A copy kernel following an index map (out index -> in index, -1 = zero).
void gather_step(LowerContext& cx, const Node& n, const std::vector<int64_t>& map, int64_t in_count, int src,
                 int dst, const std::string& kernel = "gather");
// Output axis a reads input axis perm[a]; *out_shape receives the permuted shape when non-null.
std::vector<int64_t> permute_map(const Dims& in, const std::vector<int>& perm, Dims* out_shape);

}  // namespace nnd::jit
