// kitchen_sink(): one small graph that reaches every kernel generator, shared by the code-property
// tests (jit_code_test.cpp) and the golden code hashes (jit_golden_code_test.cpp).
#pragma once

#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {

// A small graph that exercises every kernel generator (conv, gemm, depthwise, pad, pools, BN,
// activations, helpers, merges, concat, u8 conversion, planar and Winograd convolutions) with
// channel tails.
inline Graph kitchen_sink() {
  Rng r(77);
  GraphBuilder gb("kitchen-sink");
  auto node = [&](const std::string& name, LayerParams p, std::vector<ValueId> in) { return gb.node(name, std::move(p), std::move(in)); };
  const ValueId x = gb.input("input", {9, 11, 3}, DType::kUInt8);
  ConvParams c;
  c.window.kernel_h = c.window.kernel_w = 3;
  c.window.stride_h = 2;
  c.window.padding = Padding::kSame;
  c.filters = 13;
  c.kernel = r.weights({3, 3, 3, 13}, 0.01f);
  c.bias = r.weights({13});
  c.activation = ActivationKind::kRelu6;
  const auto c1 = static_cast<ValueId>(node("conv", c, {x}));
  DepthwiseConvParams d;
  d.window.kernel_h = d.window.kernel_w = 3;
  d.window.padding = Padding::kSame;
  d.kernel = r.weights({3, 3, 13, 1});
  d.activation = ActivationKind::kSigmoid;
  const auto d1 = static_cast<ValueId>(node("dw", d, {c1}));
  BatchNormParams bn;
  bn.gamma = r.weights({13});
  bn.beta = r.weights({13});
  bn.moving_mean = r.weights({13});
  bn.moving_variance = Weights{{13}, r.vec(13, 0.5f, 1.5f)};
  const auto b1 = static_cast<ValueId>(node("bn", bn, {d1}));
  const auto a1 = static_cast<ValueId>(node("add", MergeParams{MergeOp::kAdd}, {b1, c1}));
  PoolParams mp;
  mp.window.kernel_h = mp.window.kernel_w = 2;
  mp.window.stride_h = mp.window.stride_w = 2;
  mp.window.padding = Padding::kSame;
  const auto p1 = static_cast<ValueId>(node("maxpool", mp, {a1}));
  mp.kind = PoolKind::kAverage;
  const auto p2 = static_cast<ValueId>(node("avgpool", mp, {a1}));
  ConcatParams cc;
  const auto k1 = static_cast<ValueId>(node("concat", cc, {p1, p2}));
  const auto f1 = static_cast<ValueId>(node("flatten", FlattenParams{}, {k1}));
  DenseParams dn;
  dn.units = 5;
  dn.activation = ActivationKind::kSoftmax;
  dn.kernel = r.weights({3 * 6 * 26, 5}, 0.1f);
  dn.bias = r.weights({5});
  const auto o1 = static_cast<ValueId>(node("dense", dn, {f1}));
  ActivationParams hs{ActivationKind::kHardSwish};
  const auto o2 = static_cast<ValueId>(node("hswish", hs, {f1}));
  // SSE4.1's planar convolution (few input channels, whole channel quads) on the camera bytes.
  ConvParams pc;
  pc.window.kernel_h = pc.window.kernel_w = 3;
  pc.window.padding = Padding::kSame;
  pc.filters = 8;
  pc.kernel = r.weights({3, 3, 3, 8}, 0.01f);
  const auto o3 = static_cast<ValueId>(node("planar_conv", pc, {x}));
  // Winograd F(2x2, 3x3): 26 -> 9 channels over the concat padded to an even 4 x 6.
  ZeroPaddingParams zp;
  zp.bottom = 1;
  const auto z1 = static_cast<ValueId>(node("zero_padding", zp, {k1}));
  ConvParams wc;
  wc.window.kernel_h = wc.window.kernel_w = 3;
  wc.window.padding = Padding::kSame;
  wc.filters = 9;
  wc.kernel = r.weights({3, 3, 26, 9}, 0.1f);
  wc.bias = r.weights({9});
  wc.activation = ActivationKind::kRelu;
  const auto o4 = static_cast<ValueId>(node("winograd_conv", wc, {z1}));
  return gb.finish({o1, o2, o3, o4});
}

}  // namespace nnd::jit::test
