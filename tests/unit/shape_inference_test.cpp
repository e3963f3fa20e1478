// Shape inference: accepted shapes, and every rejected case names the node and the field.
#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

// Expects infer_shapes on a one-node graph named "bad_layer" to fail with a message naming the
// file, the node and each of `parts`.
void expect_rejected(LayerParams p, std::vector<Dims> shapes, std::vector<std::string> parts) {
  Graph g = one_node(std::move(p), std::move(shapes), "bad_layer");
  parts.insert(parts.begin(), "test.h5: layer 'bad_layer' (TestClass): ");
  expect_error([&] { infer_shapes(g); }, parts);
}

Dims infer(LayerParams p, std::vector<Dims> shapes) {
  Graph g = one_node(std::move(p), std::move(shapes));
  infer_shapes(g);
  return g.values[g.outputs[0]].shape;
}

ConvParams conv(int64_t cin, int64_t filters, int64_t k) {
  ConvParams p;
  p.filters = filters;
  p.window.kernel_h = p.window.kernel_w = k;
  p.kernel = W({k, k, cin, filters}, std::vector<float>(k * k * cin * filters, 0.f));
  return p;
}

TEST(ShapeInference, ConvKernelShapeMismatch) {
  ConvParams p = conv(4, 8, 3);
  expect_rejected(p, {{10, 10, 5}}, {"kernel: expected shape (3, 3, 5, 8), got (3, 3, 4, 8)"});
  p = conv(5, 8, 3);
  p.bias = W({7}, std::vector<float>(7, 0.f));
  expect_rejected(p, {{10, 10, 5}}, {"bias: expected shape (8,), got (7,)"});
  p = conv(5, 8, 3);
  p.kernel.data.pop_back();
  expect_rejected(p, {{10, 10, 5}}, {"kernel: holds 359 values"});
}

TEST(ShapeInference, ConvGroupsAndWindow) {
  ConvParams p = conv(2, 8, 1);
  p.groups = 4;
  expect_rejected(p, {{4, 4, 6}}, {"groups: input channels 6 are not divisible by groups 4"});
  p = conv(2, 6, 1);
  p.groups = 4;
  expect_rejected(p, {{4, 4, 8}}, {"groups: filters 6 are not divisible by groups 4"});
  p = conv(3, 2, 3);
  p.window.stride_w = 0;
  expect_rejected(p, {{5, 5, 3}}, {"strides: must be >= 1, got 0"});
  p = conv(3, 2, 3);
  p.window.dilation_h = -1;
  expect_rejected(p, {{5, 5, 3}}, {"dilation_rate: must be >= 1, got -1"});
  p = conv(3, 2, 3);
  p.window.dilation_h = p.window.dilation_w = 2;
  expect_rejected(p, {{3, 3, 3}}, {"kernel_size: input 3x3 is smaller than the dilated kernel 5x5"});
  p.window.padding = Padding::kSame;
  EXPECT_EQ(infer(p, {{3, 3, 3}}), (Dims{3, 3, 2}));
  p = conv(3, 2, 3);
  p.window.padding = Padding::kCausal;
  expect_rejected(p, {{5, 5, 3}}, {"padding: \"causal\""});
  p = conv(3, 2, 3);
  expect_rejected(p, {{5, 3}}, {"input shape: Conv2D needs a rank-3 input", "(5, 3)"});
  ConvParams c1;
  c1.rank = 1;
  c1.filters = 2;
  c1.window.kernel_w = 4;
  c1.kernel = W({4, 3, 2}, std::vector<float>(24, 0.f));
  expect_rejected(c1, {{3, 3}}, {"kernel_size: input length 3 is smaller than the dilated kernel 4"});
  expect_rejected(c1, {{5, 5, 3}}, {"input shape: Conv1D needs a rank-2 input"});
  EXPECT_EQ(infer(c1, {{9, 3}}), (Dims{6, 2}));
}

TEST(ShapeInference, DenseAndDepthwiseAndSeparableWeights) {
  DenseParams d;
  d.units = 4;
  d.kernel = W({3, 4}, std::vector<float>(12, 0.f));
  expect_rejected(d, {{5}}, {"kernel: expected shape (5, 4), got (3, 4)"});
  EXPECT_EQ(infer(d, {{7, 3}}), (Dims{7, 4}));
  DepthwiseConvParams dw;
  dw.depth_multiplier = 2;
  dw.window.kernel_h = dw.window.kernel_w = 3;
  dw.kernel = W({3, 3, 4, 1}, std::vector<float>(36, 0.f));
  expect_rejected(dw, {{5, 5, 4}}, {"depthwise_kernel: expected shape (3, 3, 4, 2), got (3, 3, 4, 1)"});
  SeparableConvParams sp;
  sp.filters = 5;
  sp.depth_multiplier = 2;
  sp.window.kernel_h = sp.window.kernel_w = 1;
  sp.depthwise_kernel = W({1, 1, 3, 2}, std::vector<float>(6, 0.f));
  sp.pointwise_kernel = W({1, 1, 3, 5}, std::vector<float>(15, 0.f));
  expect_rejected(sp, {{2, 2, 3}}, {"pointwise_kernel: expected shape (1, 1, 6, 5), got (1, 1, 3, 5)"});
}

TEST(ShapeInference, ConvTransposeOutputPadding) {
  ConvTransposeParams p;
  p.filters = 1;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.stride_h = p.window.stride_w = 2;
  p.kernel = W({3, 3, 1, 2}, std::vector<float>(18, 0.f));
  p.output_padding_h = 2;
  p.output_padding_w = 0;
  expect_rejected(p, {{4, 4, 2}}, {"output_padding: must be smaller than the stride"});
  p.output_padding_h = 1;
  EXPECT_EQ(infer(p, {{4, 4, 2}}), (Dims{10, 9, 1}));
  p.window.padding = Padding::kSame;
  EXPECT_EQ(infer(p, {{4, 4, 2}}), (Dims{8, 7, 1}));
  // Even kernel, same padding, output_padding 0: (in-1)*2 + 2 - 2 + 0 = 6 -> forward gives 3 != 4.
  p.window.kernel_h = p.window.kernel_w = 2;
  p.kernel = W({2, 2, 1, 2}, std::vector<float>(8, 0.f));
  p.output_padding_h = p.output_padding_w = 0;
  expect_rejected(p, {{4, 4, 2}}, {"output_padding: output size 6x6 is inconsistent with input 4x4"});
  p.kernel = W({2, 2, 2, 1}, std::vector<float>(8, 0.f));
  p.output_padding_h = p.output_padding_w = -1;
  expect_rejected(p, {{4, 4, 2}}, {"kernel: expected shape (2, 2, 1, 2), got (2, 2, 2, 1)"});
}

TEST(ShapeInference, NormalisationAxes) {
  BatchNormParams bn;
  bn.gamma = bn.beta = bn.moving_mean = bn.moving_variance = W({3}, {1, 1, 1});
  expect_rejected(bn, {{4, 5}}, {"gamma: expected shape (5,), got (3,)"});
  bn.keras_axis = 0;
  expect_rejected(bn, {{4, 3}}, {"axis: axis 0 is the batch axis"});
  bn.keras_axis = 3;
  expect_rejected(bn, {{4, 3}}, {"axis: axis 3 is out of range"});
  bn.keras_axis = -3;
  expect_rejected(bn, {{4, 3}}, {"axis: axis -3 is the batch axis"});
  bn.keras_axis = 2;
  Graph g = one_node(bn, {{4, 3}});
  infer_shapes(g);
  EXPECT_EQ(std::get<BatchNormParams>(g.nodes[0].params).axis, 1);
  BatchNormParams bn2 = bn;
  bn2.moving_variance = W({4}, {1, 1, 1, 1});
  bn2.keras_axis = -1;
  expect_rejected(bn2, {{4, 3}}, {"moving_variance: expected shape (3,), got (4,)"});
  LayerNormParams ln;
  ln.keras_axes = {-1, 2};
  expect_rejected(ln, {{4, 3}}, {"axis: duplicate axis"});
  ln.keras_axes = {-1};
  ln.gamma = W({4}, {1, 1, 1, 1});
  expect_rejected(ln, {{4, 3}}, {"gamma: shape (4,) does not match the 3 normalised elements"});
  SoftmaxParams sm;
  sm.keras_axis = 0;
  expect_rejected(sm, {{4}}, {"axis: axis 0 is the batch axis"});
  ConcatParams cc;
  cc.keras_axis = -1;
  expect_rejected(cc, {{2, 3}, {3, 3}}, {"axis: input 1 has shape (3, 3), which differs from (2, 3) outside axis -1"});
  expect_rejected(cc, {{2, 3}, {2, 3, 1}}, {"axis: input 1 has shape"});
}

TEST(ShapeInference, MergeAndReshapeFamily) {
  MergeParams m;
  expect_rejected(m, {{2, 3}, {3, 2}}, {"inputs: shapes (2, 3), (3, 2) cannot be broadcast together"});
  m.op = MergeOp::kSubtract;
  expect_rejected(m, {{2}, {2}, {2}}, {"inputs: expected 2 input(s), got 3"});
  ReshapeParams r;
  r.target = {4, 4};
  expect_rejected(r, {{3, 5}}, {"target_shape: (4, 4) has 16 elements, the input (3, 5) has 15"});
  r.target = {-1, -1};
  expect_rejected(r, {{3, 5}}, {"target_shape: more than one -1"});
  r.target = {-1, 4};
  expect_rejected(r, {{3, 5}}, {"target_shape: (-1, 4) cannot hold the 15 elements"});
  r.target = {0, 15};
  expect_rejected(r, {{3, 5}}, {"target_shape: dimension 0"});
  r.target = {-1, 5};
  EXPECT_EQ(infer(r, {{3, 5}}), (Dims{3, 5}));
  PermuteParams pm;
  pm.dims = {1, 1};
  expect_rejected(pm, {{3, 5}}, {"dims: is not a permutation of 1..2"});
  pm.dims = {1, 2, 3};
  expect_rejected(pm, {{3, 5}}, {"dims: has 3 entries for an input of rank 2"});
  RepeatVectorParams rv;
  rv.n = 2;
  expect_rejected(rv, {{3, 5}}, {"input shape: RepeatVector needs a rank-1 input"});
  CroppingParams c;
  c.left = 2;
  c.right = 2;
  expect_rejected(c, {{5, 4, 1}}, {"cropping: removes 4 of the 4 elements along the width"});
  ZeroPaddingParams z;
  z.top = -1;
  expect_rejected(z, {{5, 4, 1}}, {"padding: must be >= 0, got -1"});
  PoolParams pool;
  pool.window.kernel_h = pool.window.kernel_w = 3;
  pool.window.stride_h = pool.window.stride_w = 3;
  expect_rejected(pool, {{2, 5, 1}}, {"kernel_size: input 2x5 is smaller than the dilated kernel 3x3"});
  pool.window.dilation_h = 2;
  expect_rejected(pool, {{9, 9, 1}}, {"dilation_rate: must be 1"});
  PReluParams pr;
  pr.alpha = W({2, 3}, std::vector<float>(6, 0.f));
  expect_rejected(pr, {{2, 4}}, {"alpha: shape (2, 3) does not match the input (2, 4)"});
  GlobalPoolParams gp;
  expect_rejected(gp, {{4, 4}}, {"input shape: 2-D global pooling needs a rank-3 input"});
  UpSamplingParams up;
  up.rank = 1;
  up.interpolation = Interpolation::kBilinear;
  expect_rejected(up, {{4, 4}}, {"interpolation:"});
}

TEST(ShapeInference, OverflowIsRejectedNotWrapped) {
  const int64_t big = int64_t{1} << 40;
  // A graph input of 2^40 elements.
  Graph g = one_node(FlattenParams{}, {{big, 2}});
  expect_error([&] { infer_shapes(g); }, {"test.h5: input 'in0'", "exceeds the limit"});
  // Products that wrap 64 bits if unchecked: 2^32 x 2^32.
  Graph g2 = one_node(FlattenParams{}, {{int64_t{1} << 32, int64_t{1} << 32}});
  expect_error([&] { infer_shapes(g2); }, {"exceeds the limit"});
  // Layer parameters that blow up the output.
  RepeatVectorParams rv;
  rv.n = big;
  expect_rejected(rv, {{4}}, {"n: 1099511627776 exceeds the limit"});
  UpSamplingParams up;
  up.size_h = up.size_w = int64_t{1} << 20;
  expect_rejected(up, {{4096, 4096, 1}}, {"size", "exceeds the limit"});
  ZeroPaddingParams z;
  z.left = big;
  expect_rejected(z, {{4, 4, 1}}, {"padding: 1099511627776 exceeds the limit"});
  ConvParams c = conv(1, 1, 1);
  c.window.kernel_h = big;
  expect_rejected(c, {{4, 4, 1}}, {"kernel_size: 1099511627776 exceeds the limit"});
  DenseParams d;
  d.units = int64_t{1} << 30;
  d.kernel = W({16, int64_t{1} << 30}, {});
  expect_rejected(d, {{16}}, {"kernel", "exceeds the limit"});
  ReshapeParams r;
  r.target = {-1, int64_t{1} << 32, int64_t{1} << 32};
  expect_rejected(r, {{4}}, {"target_shape", "exceeds the limit"});
}

TEST(ShapeInference, AcceptedShapesAndDtype) {
  DepthwiseConvParams dw;
  dw.depth_multiplier = 3;
  dw.window.kernel_h = 2;
  dw.window.kernel_w = 3;
  dw.window.stride_h = dw.window.stride_w = 2;
  dw.window.padding = Padding::kSame;
  dw.kernel = W({2, 3, 4, 3}, std::vector<float>(72, 0.f));
  Graph g = one_node(dw, {{5, 6, 4}}, "dw", DType::kUInt8);
  infer_shapes(g);
  EXPECT_EQ(g.values[g.outputs[0]].shape, (Dims{3, 3, 12}));
  EXPECT_EQ(g.values[g.outputs[0]].dtype, DType::kFloat32);
  GlobalPoolParams gp;
  gp.rank = 1;
  EXPECT_EQ(infer(gp, {{7, 5}}), (Dims{5}));
  UpSamplingParams up;
  up.size_h = 2;
  up.size_w = 3;
  EXPECT_EQ(infer(up, {{4, 5, 2}}), (Dims{8, 15, 2}));
}

}  // namespace
}  // namespace nnd::test
