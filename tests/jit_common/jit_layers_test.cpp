// Randomised property tests: for every layer kind the JIT compiles, one-node graphs with random
// parameters and shapes (odd sizes, channels 1..67, strides, dilations, paddings, batch 1..9),
// JIT vs the reference engine within 1e-5 * max(1, |ref|), on every ISA this CPU has.
#include <gtest/gtest.h>

#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

class JitLayers : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }

  void check(const Graph& g, int64_t batch, uint32_t seed, const std::string& what, bool u8 = false) {
    std::string where;
    const double err = jit_vs_reference(g, GetParam(), batch, seed, u8, &where);
    EXPECT_LE(err, kTol) << what << " batch " << batch << " (" << isa_id(GetParam()) << "): " << where;
  }
};

ActivationKind pick_act(Rng& r) {
  static const ActivationKind kinds[] = {ActivationKind::kLinear, ActivationKind::kRelu, ActivationKind::kRelu6,
                                         ActivationKind::kSigmoid, ActivationKind::kTanh, ActivationKind::kLinear};
  return kinds[r.range(0, 5)];
}

Padding pick_pad(Rng& r) { return r.coin() ? Padding::kSame : Padding::kValid; }

TEST_P(JitLayers, Dense) {
  Rng r(1);
  for (int i = 0; i < 16; ++i) {
    const int64_t k = r.range(1, 67), units = r.range(1, 67), rows = r.range(1, 3);
    DenseParams p;
    p.units = units;
    p.activation = i % 5 == 4 ? ActivationKind::kSoftmax : pick_act(r);
    p.kernel = r.weights({k, units});
    if (r.coin()) p.bias = r.weights({units});
    const Dims in = r.coin() ? Dims{k} : Dims{rows, k};
    check(one_node(p, {in}), r.range(1, 9), 100 + i,
          "Dense k=" + std::to_string(k) + " units=" + std::to_string(units) + " " + activation_name(p.activation));
  }
}

// "Conv2D 7x9x12 f=16 k=3x3 s=1,2 d=1,1 g=4 same": what a failing case was.
std::string conv_label(const ConvParams& p, int64_t h, int64_t w, int64_t cin) {
  const Window& win = p.window;
  return "Conv2D " + std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(cin) +
         " f=" + std::to_string(p.filters) + " k=" + std::to_string(win.kernel_h) + "x" +
         std::to_string(win.kernel_w) + " s=" + std::to_string(win.stride_h) + "," + std::to_string(win.stride_w) +
         " d=" + std::to_string(win.dilation_h) + "," + std::to_string(win.dilation_w) +
         " g=" + std::to_string(p.groups) + (win.padding == Padding::kSame ? " same" : " valid");
}

TEST_P(JitLayers, Conv2D) {
  Rng r(2);
  for (int i = 0; i < 24; ++i) {
    ConvParams p;
    const int64_t kh = r.range(1, 3), kw = r.range(1, 3);
    Window& w = p.window;
    w.kernel_h = kh;
    w.kernel_w = kw;
    if (r.range(0, 3) == 0) {
      w.dilation_h = r.range(1, 2);
      w.dilation_w = r.range(1, 2);
    } else {
      w.stride_h = r.range(1, 3);
      w.stride_w = r.range(1, 3);
    }
    w.padding = pick_pad(r);
    p.groups = r.range(0, 4) == 0 ? r.range(2, 3) : 1;
    const int64_t cin = p.groups * r.range(1, i % 3 == 0 ? 67 : 12);
    p.filters = p.groups * r.range(1, i % 3 == 1 ? 67 : 20);
    const int64_t h = r.range((kh - 1) * w.dilation_h + 1, 11), wd = r.range((kw - 1) * w.dilation_w + 1, 13);
    p.kernel = r.weights({kh, kw, cin / p.groups, p.filters}, 0.3f);
    if (r.coin()) p.bias = r.weights({p.filters});
    p.activation = pick_act(r);
    check(one_node(p, {{h, wd, cin}}), r.range(1, 4), 200 + i, conv_label(p, h, wd, cin));
  }
}

// Four or more evenly packed groups run one copy of the group's code in a loop (emit_conv).
TEST_P(JitLayers, Conv2DManyGroups) {
  Rng r(31);
  for (int i = 0; i < 10; ++i) {
    ConvParams p;
    Window& w = p.window;
    w.kernel_h = r.range(1, 3);
    w.kernel_w = r.range(1, 3);
    w.stride_h = r.range(1, 2);
    w.stride_w = r.range(1, 2);
    w.padding = pick_pad(r);
    static const int64_t kGroups[] = {4, 5, 8, 16};
    p.groups = kGroups[r.range(0, 3)];
    const int64_t cin = p.groups * r.range(1, 6);
    p.filters = p.groups * r.range(1, 9);
    const int64_t h = r.range(w.kernel_h, 9), wd = r.range(w.kernel_w, 11);
    p.kernel = r.weights({w.kernel_h, w.kernel_w, cin / p.groups, p.filters}, 0.3f);
    if (r.coin()) p.bias = r.weights({p.filters});
    p.activation = pick_act(r);
    check(one_node(p, {{h, wd, cin}}), r.range(1, 4), 3100 + i, conv_label(p, h, wd, cin));
  }
}

TEST_P(JitLayers, Conv1DCausalAndPointwise) {
  Rng r(3);
  for (int i = 0; i < 8; ++i) {
    ConvParams p;
    p.rank = 1;
    p.window.kernel_w = i < 4 ? r.range(1, 4) : 1;
    p.window.padding = i % 2 ? Padding::kCausal : Padding::kSame;
    const int64_t cin = r.range(1, 40);
    p.filters = r.range(1, 40);
    p.kernel = r.weights({1, p.window.kernel_w, cin, p.filters}, 0.3f);
    p.bias = r.weights({p.filters});
    check(one_node(p, {{r.range(4, 17), cin}}), r.range(1, 9), 300 + i, "Conv1D");
  }
}

// Strides and dilations above 1 on the same axis (ONNX/PyTorch allow it): every convolution kind
// the JIT lowers (direct, grouped, planar on SSE4.1 with few channels, depthwise, 1-D, transposed).
TEST_P(JitLayers, StridedDilatedConvolutions) {
  Rng r(35);
  for (int i = 0; i < 24; ++i) {
    Window w;
    const int rank = i % 6 == 5 ? 1 : 2;
    w.kernel_w = r.range(2, 4);
    w.stride_w = r.range(2, 3);
    w.dilation_w = r.range(2, 3);
    if (rank == 2) {
      w.kernel_h = r.range(1, 3);
      w.stride_h = r.range(1, 3);
      w.dilation_h = r.range(2, 3);
    }
    w.padding = pick_pad(r);
    const int64_t h = rank == 2 ? r.range((w.kernel_h - 1) * w.dilation_h + 1, 13) : 1;
    const int64_t wd = r.range((w.kernel_w - 1) * w.dilation_w + 1, 17);
    const Dims in_hw = rank == 2 ? Dims{h, wd} : Dims{wd};
    auto with_c = [&](int64_t c) {
      Dims d = in_hw;
      d.push_back(c);
      return d;
    };
    const int kind = i % 4;
    const std::string geo = " k=" + std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) + " s=" +
                            std::to_string(w.stride_h) + "," + std::to_string(w.stride_w) + " d=" +
                            std::to_string(w.dilation_h) + "," + std::to_string(w.dilation_w) + " in " +
                            std::to_string(h) + "x" + std::to_string(wd);
    if (kind == 2) {
      DepthwiseConvParams p;
      p.rank = rank;
      p.window = w;
      p.depth_multiplier = r.range(1, 2);
      const int64_t c = r.range(1, 40);
      p.kernel = r.weights({w.kernel_h, w.kernel_w, c, p.depth_multiplier});
      if (r.coin()) p.bias = r.weights({c * p.depth_multiplier});
      p.activation = pick_act(r);
      check(one_node(p, {with_c(c)}), r.range(1, 4), 3500 + i, "DepthwiseConv c=" + std::to_string(c) + geo);
    } else if (kind == 3 && rank == 2) {
      ConvTransposeParams p;
      p.window = w;
      p.window.padding = Padding::kValid;
      const int64_t cin = r.range(1, 20);
      p.filters = r.range(1, 20);
      p.kernel = r.weights({w.kernel_h, w.kernel_w, p.filters, cin}, 0.3f);
      if (r.coin()) p.bias = r.weights({p.filters});
      const Dims in{r.range(1, 6), r.range(1, 7), cin};
      check(one_node(p, {in}), r.range(1, 4), 3500 + i, "Conv2DTranspose cin=" + std::to_string(cin) + geo);
    } else {
      ConvParams p;
      p.rank = rank;
      p.window = w;
      p.groups = kind == 1 ? r.range(2, 3) : 1;
      // Few input channels and filters in fours take the planar kernels on SSE4.1.
      const int64_t cin = p.groups * (i % 8 == 0 ? r.range(1, 4) : r.range(1, 24));
      p.filters = i % 8 == 0 ? 4 * r.range(1, 4) : p.groups * r.range(1, 24);
      p.kernel = r.weights({w.kernel_h, w.kernel_w, cin / p.groups, p.filters}, 0.3f);
      if (r.coin()) p.bias = r.weights({p.filters});
      p.activation = pick_act(r);
      check(one_node(p, {with_c(cin)}), r.range(1, 4), 3500 + i, conv_label(p, h, wd, cin));
    }
  }
}

TEST_P(JitLayers, DepthwiseConv2D) {
  Rng r(4);
  for (int i = 0; i < 16; ++i) {
    DepthwiseConvParams p;
    Window& w = p.window;
    w.kernel_h = r.range(1, 5);
    w.kernel_w = r.range(1, 3);
    w.stride_h = r.range(1, 2);
    w.stride_w = r.range(1, 3);
    w.padding = pick_pad(r);
    p.depth_multiplier = r.range(0, 2) == 0 ? r.range(2, 3) : 1;
    const int64_t c = r.range(1, 67);
    p.kernel = r.weights({w.kernel_h, w.kernel_w, c, p.depth_multiplier});
    if (r.coin()) p.bias = r.weights({c * p.depth_multiplier});
    p.activation = pick_act(r);
    check(one_node(p, {{r.range(w.kernel_h, 11), r.range(w.kernel_w, 11), c}}), r.range(1, 5), 400 + i,
          "DepthwiseConv2D c=" + std::to_string(c) + " dm=" + std::to_string(p.depth_multiplier));
  }
}

TEST_P(JitLayers, SeparableConv2D) {
  Rng r(5);
  for (int i = 0; i < 12; ++i) {
    SeparableConvParams p;
    Window& w = p.window;
    w.kernel_h = r.range(1, 3);
    w.kernel_w = r.range(1, 3);
    w.stride_h = w.stride_w = r.range(1, 2);
    w.padding = pick_pad(r);
    p.depth_multiplier = r.range(1, 2);
    const int64_t c = r.range(1, 40);
    p.filters = r.range(1, 67);
    p.depthwise_kernel = r.weights({w.kernel_h, w.kernel_w, c, p.depth_multiplier});
    p.pointwise_kernel = r.weights({1, 1, c * p.depth_multiplier, p.filters}, 0.3f);
    if (r.coin()) p.bias = r.weights({p.filters});
    p.activation = pick_act(r);
    check(one_node(p, {{r.range(3, 11), r.range(3, 11), c}}), r.range(1, 5), 500 + i, "SeparableConv2D");
  }
}

TEST_P(JitLayers, BatchNormalization) {
  Rng r(6);
  for (int i = 0; i < 8; ++i) {
    BatchNormParams p;
    const int64_t c = r.range(1, 67);
    p.gamma = r.weights({c});
    p.beta = r.weights({c});
    p.moving_mean = r.weights({c});
    p.moving_variance = Weights{{c}, r.vec(c, 0.1f, 2.0f)};
    p.epsilon = 1e-3;
    const Dims in = i % 2 ? Dims{r.range(1, 7), r.range(1, 7), c} : Dims{c};
    check(one_node(p, {in}), r.range(1, 9), 600 + i, "BatchNormalization c=" + std::to_string(c));
  }
}

TEST_P(JitLayers, ActivationsExact) {
  for (int k = 0; k <= static_cast<int>(kLastActivationKind); ++k) {
    ActivationParams p;
    p.activation = static_cast<ActivationKind>(k);
    Rng r(static_cast<uint32_t>(700 + k));
    const int64_t c = r.range(1, 67);
    check(one_node(p, {{r.range(1, 5), c}}), r.range(1, 9), 700 + k, std::string("Activation ") + activation_name(p.activation));
  }
}

TEST_P(JitLayers, ReluFamily) {
  Rng r(8);
  const ReluParams cases[] = {{INFINITY, 0, 0}, {6, 0, 0}, {INFINITY, 0.3, 0}, {1.5, 0.1, 0}, {INFINITY, 0.2, 0.5}};
  int i = 0;
  for (const ReluParams& p : cases) check(one_node(p, {{r.range(1, 67)}}), r.range(1, 9), 800 + i++, "ReLU");
  check(one_node(EluParams{0.7}, {{33}}), 3, 810, "ELU");
  check(one_node(ThresholdedReluParams{0.4}, {{35}}), 2, 811, "ThresholdedReLU");
}

TEST_P(JitLayers, Softmax) {
  Rng r(9);
  for (int i = 0; i < 4; ++i) {
    SoftmaxParams p;
    p.keras_axis = i % 2 ? -1 : 1;
    check(one_node(p, {{r.range(1, 5), r.range(1, 67)}}), r.range(1, 9), 900 + i, "Softmax");
  }
}

TEST_P(JitLayers, Pooling) {
  Rng r(10);
  for (int i = 0; i < 16; ++i) {
    PoolParams p;
    p.kind = i % 2 ? PoolKind::kAverage : PoolKind::kMax;
    Window& w = p.window;
    w.kernel_h = r.range(1, 3);
    w.kernel_w = r.range(1, 3);
    w.stride_h = r.range(1, 3);
    w.stride_w = r.range(1, 3);
    w.padding = pick_pad(r);
    const int64_t c = r.range(1, 67);
    check(one_node(p, {{r.range(3, 12), r.range(3, 12), c}}), r.range(1, 5), 1000 + i,
          std::string(p.kind == PoolKind::kMax ? "MaxPooling2D" : "AveragePooling2D") + " c=" + std::to_string(c));
  }
  for (int i = 0; i < 4; ++i) {
    GlobalPoolParams p;
    p.kind = i % 2 ? PoolKind::kAverage : PoolKind::kMax;
    p.keepdims = i >= 2;
    check(one_node(p, {{r.range(1, 9), r.range(1, 9), r.range(1, 67)}}), r.range(1, 5), 1020 + i, "GlobalPooling2D");
  }
}

TEST_P(JitLayers, MergesAndConcat) {
  Rng r(11);
  const MergeOp ops[] = {MergeOp::kAdd, MergeOp::kSubtract, MergeOp::kMultiply, MergeOp::kAverage,
                         MergeOp::kMaximum, MergeOp::kMinimum};
  int i = 0;
  for (MergeOp op : ops) {
    const Dims s{r.range(1, 5), r.range(1, 67)};
    const int inputs = op == MergeOp::kSubtract ? 2 : static_cast<int>(r.range(2, 3));
    check(one_node(MergeParams{op}, std::vector<Dims>(static_cast<size_t>(inputs), s)), r.range(1, 9), 1100 + i++,
          "Merge");
  }
  for (int j = 0; j < 6; ++j) {
    ConcatParams p;
    p.keras_axis = static_cast<int>(r.range(1, 3));
    const Dims base{r.range(1, 5), r.range(1, 5), r.range(1, 30)};
    std::vector<Dims> ins;
    for (int k = 0; k < static_cast<int>(r.range(2, 3)); ++k) {
      Dims d = base;
      d[static_cast<size_t>(p.keras_axis - 1)] = r.range(1, 30);
      ins.push_back(d);
    }
    check(one_node(p, ins), r.range(1, 9), 1200 + j, "Concatenate axis " + std::to_string(p.keras_axis));
  }
}

TEST_P(JitLayers, FreeLayersAndPadding) {
  check(one_node(FlattenParams{}, {{3, 5, 7}}), 4, 1300, "Flatten");
  check(one_node(ReshapeParams{{-1, 5}}, {{3, 5, 7}}), 3, 1301, "Reshape");
  check(one_node(IdentityParams{}, {{17}}), 2, 1302, "Dropout");
  check(one_node(ZeroPaddingParams{2, 1, 2, 3, 0}, {{5, 4, 7}}), 3, 1303, "ZeroPadding2D");
}

TEST_P(JitLayers, Uint8Input) {
  Rng r(12);
  ConvParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.padding = Padding::kSame;
  p.filters = 9;
  p.kernel = r.weights({3, 3, 2, 9}, 0.01f);
  p.bias = r.weights({9});
  check(one_node(p, {{7, 11, 2}}, DType::kUInt8), 3, 1400, "Conv2D on uint8 input", true);
  check(one_node(IdentityParams{}, {{13}}, DType::kUInt8), 2, 1401, "uint8 input as output", true);
}

NND_ISA_SUITE(JitLayers);

}  // namespace
}  // namespace nnd::jit::test
