// Merges with broadcasting, Concatenate, reshape family, padding/cropping, engine I/O.
#include "core/ir/cost.h"
#include "tests/unit/test_util.h"

namespace nnd::test {
namespace {

std::vector<float> merge(MergeOp op, std::vector<Dims> shapes, const std::vector<std::vector<float>>& xs,
                         Dims* shape = nullptr) {
  MergeParams p;
  p.op = op;
  return run1(p, std::move(shapes), xs, shape);
}

TEST(Merge, OpsSameShape) {
  const std::vector<float> a{1, -2, 3}, b{4, 5, -6}, c{0, 1, 2};
  EXPECT_VALUES_NEAR(merge(MergeOp::kAdd, {{3}, {3}, {3}}, {a, b, c}), (std::vector<double>{5, 4, -1}), 1e-7);
  EXPECT_VALUES_NEAR(merge(MergeOp::kSubtract, {{3}, {3}}, {a, b}), (std::vector<double>{-3, -7, 9}), 1e-7);
  EXPECT_VALUES_NEAR(merge(MergeOp::kMultiply, {{3}, {3}, {3}}, {a, b, c}), (std::vector<double>{0, -10, -36}), 1e-7);
  EXPECT_VALUES_NEAR(merge(MergeOp::kAverage, {{3}, {3}, {3}}, {a, b, c}), (std::vector<double>{5 / 3., 4 / 3., -1 / 3.}),
                     1e-6);
  EXPECT_VALUES_NEAR(merge(MergeOp::kMaximum, {{3}, {3}, {3}}, {a, b, c}), (std::vector<double>{4, 5, 3}), 1e-7);
  EXPECT_VALUES_NEAR(merge(MergeOp::kMinimum, {{3}, {3}, {3}}, {a, b, c}), (std::vector<double>{0, -2, -6}), 1e-7);
}

TEST(Merge, Broadcasting) {
  Dims shape;
  // (2, 3) - (1, 3): row broadcast
  auto y = merge(MergeOp::kSubtract, {{2, 3}, {1, 3}}, {seq(6), {1, 2, 3}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 3}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 0, 3, 3, 3}), 1e-7);
  // (2, 1) * (1, 3) -> (2, 3): outer product
  y = merge(MergeOp::kMultiply, {{2, 1}, {1, 3}}, {{2, 3}, {1, 10, 100}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 3}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{2, 20, 200, 3, 30, 300}), 1e-7);
  // (2, 2, 3) + (3,): lower rank aligned on the right (Keras expands at axis 1)
  y = merge(MergeOp::kAdd, {{2, 2, 3}, {3}}, {std::vector<float>(12, 0.f), {1, 2, 3}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 3}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}), 1e-7);
}

TEST(Concat, AnyAxis) {
  ConcatParams p;
  Dims shape;
  p.keras_axis = -1;
  auto y = run1(p, {{2, 1}, {2, 2}}, {{1, 2}, {10, 11, 20, 21}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 3}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 10, 11, 2, 20, 21}), 1e-7);
  p.keras_axis = 1;
  y = run1(p, {{1, 2}, {2, 2}}, {{1, 2}, {10, 11, 20, 21}}, &shape);
  EXPECT_EQ(shape, (Dims{3, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 10, 11, 20, 21}), 1e-7);
  p.keras_axis = 2;  // middle axis of (2, 2, 1) + (2, 1, 1)
  y = run1(p, {{2, 2, 1}, {2, 1, 1}}, {{1, 2, 3, 4}, {9, 8}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 3, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 9, 3, 4, 8}), 1e-7);
}

TEST(ShapeOps, FlattenReshapePermuteRepeat) {
  Dims shape;
  auto y = run1(FlattenParams{}, {{2, 2, 2}}, {seq(8)}, &shape);
  EXPECT_EQ(shape, (Dims{8}));
  EXPECT_VALUES_NEAR(y, seq(8), 0);
  ReshapeParams r;
  r.target = {-1, 4};
  y = run1(r, {{2, 2, 2}}, {seq(8)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 4}));
  PermuteParams pm;
  pm.dims = {2, 1};
  y = run1(pm, {{2, 3}}, {seq(6)}, &shape);
  EXPECT_EQ(shape, (Dims{3, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 4, 2, 5, 3, 6}), 0);
  pm.dims = {3, 1, 2};
  y = run1(pm, {{2, 3, 2}}, {seq(12)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 3}));
  // out[c][a][b] = in[a][b][c] = 6a + 2b + c + 1
  std::vector<double> e;
  for (int c = 0; c < 2; ++c)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b) e.push_back(6 * a + 2 * b + c + 1);
  EXPECT_VALUES_NEAR(y, e, 0);
  RepeatVectorParams rv;
  rv.n = 3;
  y = run1(rv, {{2}}, {{1, 2}}, &shape);
  EXPECT_EQ(shape, (Dims{3, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 1, 2, 1, 2}), 0);
  y = run1(IdentityParams{}, {{3}}, {{1, 2, 3}});
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2, 3}), 0);
}

TEST(ShapeOps, ZeroPaddingAndCropping) {
  ZeroPaddingParams z;
  z.top = 1;
  z.bottom = 0;
  z.left = 0;
  z.right = 2;
  Dims shape;
  auto y = run1(z, {{1, 2, 1}}, {{5, 6}}, &shape);
  EXPECT_EQ(shape, (Dims{2, 4, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 0, 0, 5, 6, 0, 0}), 0);
  ZeroPaddingParams z1;
  z1.rank = 1;
  z1.left = 2;
  z1.right = 1;
  y = run1(z1, {{1, 2}}, {{5, 6}}, &shape);
  EXPECT_EQ(shape, (Dims{4, 2}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{0, 0, 0, 0, 5, 6, 0, 0}), 0);
  CroppingParams c;
  c.top = 1;
  c.bottom = 0;
  c.left = 1;
  c.right = 1;
  y = run1(c, {{3, 4, 1}}, {seq(12)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 2, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{6, 7, 10, 11}), 0);
  CroppingParams c1;
  c1.rank = 1;
  c1.left = 0;
  c1.right = 2;
  y = run1(c1, {{4, 1}}, {seq(4)}, &shape);
  EXPECT_EQ(shape, (Dims{2, 1}));
  EXPECT_VALUES_NEAR(y, (std::vector<double>{1, 2}), 0);
}

ConvParams small_conv() {
  ConvParams p;
  p.filters = 3;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.stride_h = p.window.stride_w = 2;
  p.window.padding = Padding::kSame;
  p.activation = ActivationKind::kSwish;
  p.kernel = W({3, 3, 2, 3}, pseudo_random(54, 11));
  p.bias = W({3}, {0.1f, -0.2f, 0.3f});
  return p;
}

TEST(Engine, BatchEqualsSamplesRunSeparately) {
  Graph g = one_node(small_conv(), {{5, 4, 2}});
  const int64_t per = 5 * 4 * 2;
  const auto x = pseudo_random(3 * per, 12);
  const auto batched = run_graph(g, 3, {x});
  const size_t out_per = batched.size() / 3;
  ASSERT_EQ(out_per, 3u * 2u * 3u);
  for (int n = 0; n < 3; ++n) {
    std::vector<float> xs(x.begin() + n * per, x.begin() + (n + 1) * per);
    const auto single = run_graph(g, 1, {xs});
    for (size_t i = 0; i < out_per; ++i) EXPECT_EQ(batched[n * out_per + i], single[i]) << n << " " << i;
  }
  // Samples differ, so a batch that reused sample 0 would fail above.
  EXPECT_NE(batched[0], batched[out_per]);
}

TEST(Engine, Uint8InputsConvertToFloat) {
  DenseParams d;
  d.units = 1;
  d.kernel = W({3, 1}, {1, 0.5f, -1});
  Graph g = one_node(d, {{3}}, "dense", DType::kUInt8);
  infer_shapes(g);
  auto engine = make_reference_engine(g);
  const uint8_t in[6] = {0, 255, 7, 200, 2, 128};
  InputView v{DType::kUInt8, in};
  float out[2] = {NAN, NAN};
  float* outs[] = {out};
  engine->run(2, std::span<const InputView>(&v, 1), outs);
  EXPECT_FLOAT_EQ(out[0], 0 + 127.5f - 7);
  EXPECT_FLOAT_EQ(out[1], 200 + 1 - 128);
}

TEST(Engine, MultiNodeGraphAndMisuse) {
  // in -> dense(relu) -> add(dense, in) : a DAG with a skip connection.
  Graph g = one_node([] {
    DenseParams d;
    d.units = 2;
    d.activation = ActivationKind::kRelu;
    d.kernel = W({2, 2}, {1, -1, 2, 1});
    return LayerParams{d};
  }(), {{2}}, "dense");
  Value sum;
  sum.name = "add";
  sum.producer = 1;
  g.values.push_back(sum);
  Node add;
  add.name = "add";
  add.source_op = "Add";
  add.params = MergeParams{};
  add.inputs = {g.nodes[0].output, g.inputs[0]};
  add.output = 2;
  g.nodes.push_back(add);
  g.outputs = {2};
  g.output_names = {"add"};
  const auto y = run_graph(g, 2, {{1, 2, -3, 1}});
  // sample 0: dense = relu(1 + 4, -1 + 2) = (5, 1); + (1, 2) = (6, 3)
  // sample 1: dense = relu(-3 + 2, 3 + 1) = (0, 4); + (-3, 1) = (-3, 5)
  EXPECT_VALUES_NEAR(y, (std::vector<double>{6, 3, -3, 5}), 1e-7);
  infer_shapes(g);
  auto engine = make_reference_engine(g);
  float out[4];
  float* outs[] = {out};
  const float in[4] = {};
  InputView v{DType::kFloat32, in};
  expect_error([&] { engine->run(0, std::span<const InputView>(&v, 1), outs); }, {"batch"});
  expect_error([&] { engine->run(1, {}, outs); }, {"input"});
  InputView null_view{DType::kFloat32, nullptr};
  expect_error([&] { engine->run(1, std::span<const InputView>(&null_view, 1), outs); }, {"null"});
  EXPECT_EQ(engine->name(), "reference");
}

TEST(Cost, ParametersAndFlops) {
  Graph g = one_node(small_conv(), {{5, 4, 2}});
  infer_shapes(g);
  EXPECT_EQ(parameter_count(g), 54 + 3);
  // out 3x2x3 = 18 elements; 2 * 9 taps * 2 channels each; + bias + activation
  EXPECT_EQ(flops_per_sample(g), 18 * 2 * 18 + 18 + 18);
  BatchNormParams bn;
  bn.gamma = bn.beta = bn.moving_mean = bn.moving_variance = W({4}, {1, 1, 1, 1});
  Graph gb = one_node(bn, {{3, 4}});
  infer_shapes(gb);
  EXPECT_EQ(parameter_count(gb), 16);
  EXPECT_EQ(flops_per_sample(gb), 24);
  DenseParams d;
  d.units = 5;
  d.kernel = W({7, 5}, std::vector<float>(35, 1.f));
  Graph gd = one_node(d, {{2, 7}});
  infer_shapes(gd);
  EXPECT_EQ(parameter_count(gd), 35);
  EXPECT_EQ(flops_per_sample(gd), 2 * 7 * 10);
}

}  // namespace
}  // namespace nnd::test
