// Randomised property tests for the rarer kinds (core/jit/lower/: shape.cpp, conv.cpp, ...; transposed
// convolutions, LayerNormalization, PReLU, Permute, RepeatVector, UpSampling, Cropping, Gather,
// broadcasting merges, BatchNormalization on a non-last axis): JIT vs the reference engine within
// 1e-5 * max(1, |ref|), channels 1..67, odd sizes, batch 1..9, on every ISA this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/ir/dump.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

class JitLayersExtra : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }

  void check(const Graph& g, int64_t batch, uint32_t seed, const std::string& what) {
    std::string where;
    const double err = jit_vs_reference(g, GetParam(), batch, seed, false, &where);
    EXPECT_LE(err, kTol) << what << " batch " << batch << " (" << isa_id(GetParam()) << "): " << where;
  }
};

std::string dims_str(const Dims& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(d[i]);
  }
  return s;
}

TEST_P(JitLayersExtra, ConvTranspose) {
  Rng r(41);
  int ran = 0;
  for (int i = 0; i < 20; ++i) {
    ConvTransposeParams p;
    p.rank = i % 4 == 3 ? 1 : 2;
    Window& w = p.window;
    w.kernel_w = r.range(1, 4);
    w.kernel_h = p.rank == 1 ? 1 : r.range(1, 4);
    if (r.range(0, 3) == 0) {
      w.dilation_w = r.range(1, 2);
      if (p.rank == 2) w.dilation_h = r.range(1, 2);
    } else {
      w.stride_w = r.range(1, 3);
      if (p.rank == 2) w.stride_h = r.range(1, 3);
    }
    w.padding = r.coin() ? Padding::kSame : Padding::kValid;
    if (r.coin() && w.dilation_w == 1 && w.dilation_h == 1) {
      p.output_padding_w = r.range(0, w.stride_w - 1);
      if (p.rank == 2) p.output_padding_h = r.range(0, w.stride_h - 1);
    }
    const int64_t cin = r.range(1, i % 3 == 0 ? 67 : 9);
    p.filters = r.range(1, i % 3 == 1 ? 67 : 12);
    const int64_t h = r.range(1, 7), wd = r.range(1, 9);
    p.kernel = r.weights({w.kernel_h, w.kernel_w, p.filters, cin}, 0.3f);
    if (r.coin()) p.bias = r.weights({p.filters});
    p.activation = r.coin() ? ActivationKind::kRelu : ActivationKind::kLinear;
    const Dims in = p.rank == 1 ? Dims{wd, cin} : Dims{h, wd, cin};
    Graph g;
    try {
      g = one_node(p, {in});
    } catch (const std::exception&) {
      continue;  // geometry rejected by shape inference (Keras rejects it too)
    }
    ++ran;
    check(g, r.range(1, 9), 4100 + i,
          "Conv" + std::to_string(p.rank) + "DTranspose in " + dims_str(in) + " f=" + std::to_string(p.filters) +
              " k=" + std::to_string(w.kernel_h) + "x" + std::to_string(w.kernel_w) + " s=" +
              std::to_string(w.stride_h) + "," + std::to_string(w.stride_w) + " d=" + std::to_string(w.dilation_h) +
              "," + std::to_string(w.dilation_w) + " op=" + std::to_string(p.output_padding_h) + "," +
              std::to_string(p.output_padding_w) + (w.padding == Padding::kSame ? " same" : " valid"));
  }
  EXPECT_GE(ran, 15) << "too many random geometries rejected: the property test lost its coverage";
}

TEST_P(JitLayersExtra, LayerNormalization) {
  Rng r(42);
  for (int i = 0; i < 16; ++i) {
    const int rank = static_cast<int>(r.range(1, 3));
    Dims in;
    for (int a = 0; a < rank; ++a) in.push_back(r.range(1, a == rank - 1 ? 67 : 7));
    LayerNormParams p;
    std::vector<int> axes;
    for (int a = 0; a < rank; ++a) {
      if (r.coin()) axes.push_back(a);
    }
    if (axes.empty()) axes.push_back(rank - 1);
    int64_t block = 1;
    for (int a : axes) {
      p.keras_axes.push_back(a + 1);
      block *= in[static_cast<size_t>(a)];
    }
    p.epsilon = r.coin() ? 1e-3 : 1e-5;
    if (r.coin()) p.gamma = r.weights({block}, 1.0f);
    if (r.coin()) p.beta = r.weights({block}, 1.0f);
    std::string ax;
    for (int a : axes) ax += std::to_string(a) + " ";
    check(one_node(p, {in}), r.range(1, 9), 4200 + i, "LayerNormalization " + dims_str(in) + " axes " + ax);
  }
}

TEST_P(JitLayersExtra, PReLU) {
  Rng r(43);
  for (int i = 0; i < 12; ++i) {
    const int rank = static_cast<int>(r.range(1, 3));
    Dims in, alpha;
    for (int a = 0; a < rank; ++a) in.push_back(r.range(1, a == rank - 1 ? 67 : 9));
    for (int a = 0; a < rank; ++a) alpha.push_back(r.coin() ? 1 : in[static_cast<size_t>(a)]);
    PReluParams p;
    p.alpha = r.weights(alpha, 1.0f);
    check(one_node(p, {in}), r.range(1, 9), 4300 + i, "PReLU " + dims_str(in) + " alpha " + dims_str(alpha));
  }
}

TEST_P(JitLayersExtra, Permute) {
  Rng r(44);
  for (int i = 0; i < 12; ++i) {
    const int rank = static_cast<int>(r.range(2, 3));
    Dims in;
    for (int a = 0; a < rank; ++a) in.push_back(r.range(1, a == rank - 1 ? 67 : 9));
    PermuteParams p;
    p.dims.resize(static_cast<size_t>(rank));
    std::iota(p.dims.begin(), p.dims.end(), 1);
    for (int k = 0; k < rank; ++k) std::swap(p.dims[static_cast<size_t>(k)], p.dims[static_cast<size_t>(r.range(0, rank - 1))]);
    check(one_node(p, {in}), r.range(1, 9), 4400 + i, "Permute " + dims_str(in));
  }
}

TEST_P(JitLayersExtra, RepeatVector) {
  Rng r(45);
  for (int i = 0; i < 6; ++i) {
    RepeatVectorParams p;
    p.n = r.range(1, 7);
    check(one_node(p, {{r.range(1, 67)}}), r.range(1, 9), 4500 + i, "RepeatVector");
  }
}

TEST_P(JitLayersExtra, UpSampling) {
  Rng r(46);
  for (int i = 0; i < 16; ++i) {
    UpSamplingParams p;
    p.rank = i % 4 == 3 ? 1 : 2;
    p.size_w = r.range(1, 3);
    p.size_h = p.rank == 1 ? 1 : r.range(1, 3);
    p.interpolation = p.rank == 2 && r.coin() ? Interpolation::kBilinear : Interpolation::kNearest;
    const int64_t c = r.range(1, 67);
    const Dims in = p.rank == 1 ? Dims{r.range(1, 9), c} : Dims{r.range(1, 7), r.range(1, 9), c};
    check(one_node(p, {in}), r.range(1, 9), 4600 + i,
          std::string("UpSampling ") + dims_str(in) + (p.interpolation == Interpolation::kBilinear ? " bilinear" : " nearest"));
  }
}

TEST_P(JitLayersExtra, Resize) {
  Rng r(48);
  for (int i = 0; i < 24; ++i) {
    ResizeParams p;
    p.rank = i % 4 == 3 ? 1 : 2;
    p.interpolation = r.coin() ? Interpolation::kBilinear : Interpolation::kNearest;
    p.coordinates = static_cast<ResizeCoordinates>(r.range(0, 4));
    p.rounding = static_cast<NearestRounding>(r.range(0, 3));
    const int64_t c = r.range(1, 37);
    const Dims in = p.rank == 1 ? Dims{r.range(1, 9), c} : Dims{r.range(1, 7), r.range(1, 9), c};
    p.out_w = r.range(1, 13);
    p.out_h = p.rank == 1 ? 1 : r.range(1, 11);
    if (r.coin()) {  // the scales a file gives, which need not be out / in
      p.scale_w = static_cast<double>(r.range(1, 30)) / 8.0;
      if (p.rank == 2) p.scale_h = static_cast<double>(r.range(1, 30)) / 8.0;
    }
    check(one_node(p, {in}), r.range(1, 5), 4800 + i, "Resize " + dims_str(in) + " to " + std::to_string(p.out_h) + "x" +
                                                          std::to_string(p.out_w) + " (" + describe_params(p) + ")");
  }
}

TEST_P(JitLayersExtra, Cropping) {
  Rng r(47);
  for (int i = 0; i < 12; ++i) {
    CroppingParams p;
    p.rank = i % 3 == 2 ? 1 : 2;
    const int64_t c = r.range(1, 67), h = r.range(3, 9), w = r.range(3, 11);
    p.left = r.range(0, 1);
    p.right = r.range(0, 1);
    if (p.rank == 2) {
      p.top = r.range(0, 1);
      p.bottom = r.range(0, 1);
    }
    const Dims in = p.rank == 1 ? Dims{w, c} : Dims{h, w, c};
    check(one_node(p, {in}), r.range(1, 9), 4700 + i, "Cropping " + dims_str(in));
  }
}

TEST_P(JitLayersExtra, Gather) {
  // Constant index lists along any per-sample axis: reversals, repeats, any order.
  Rng r(53);
  for (int i = 0; i < 16; ++i) {
    const int rank = static_cast<int>(r.range(1, 4));
    Dims in;
    for (int a = 0; a < rank; ++a) in.push_back(r.range(1, a + 1 == rank ? 67 : 7));
    GatherParams p;
    p.axis = static_cast<int>(r.range(0, rank - 1));
    const int64_t len = in[static_cast<size_t>(p.axis)];
    if (i % 3 == 0) {
      for (int64_t k = len; k-- > 0;) p.indices.push_back(k);
    } else {
      for (int64_t k = r.range(1, 9); k-- > 0;) p.indices.push_back(r.range(0, len - 1));
    }
    check(one_node(p, {in}), r.range(1, 9), 5300 + i, "Gather axis " + std::to_string(p.axis) + " of " + dims_str(in));
  }
}

TEST_P(JitLayersExtra, BroadcastingMerges) {
  Rng r(48);
  const MergeOp ops[] = {MergeOp::kAdd, MergeOp::kSubtract, MergeOp::kMultiply, MergeOp::kAverage, MergeOp::kMaximum,
                         MergeOp::kMinimum};
  for (int i = 0; i < 18; ++i) {
    MergeParams p;
    p.op = ops[i % 6];
    const int rank = static_cast<int>(r.range(1, 3));
    Dims out;
    for (int a = 0; a < rank; ++a) out.push_back(r.range(1, a == rank - 1 ? 67 : 7));
    const int k = p.op == MergeOp::kSubtract ? 2 : static_cast<int>(r.range(2, 3));
    std::vector<Dims> ins;
    for (int j = 0; j < k; ++j) {
      Dims d = out;
      if (j > 0 || r.coin()) {
        for (auto& x : d) if (r.coin()) x = 1;
      }
      ins.push_back(d);
    }
    ins[static_cast<size_t>(r.range(0, k - 1))] = out;
    check(one_node(p, ins), r.range(1, 9), 4800 + i, "merge " + std::to_string(static_cast<int>(p.op)) + " out " + dims_str(out));
  }
}

TEST_P(JitLayersExtra, BatchNormNonLastAxis) {
  Rng r(49);
  for (int i = 0; i < 10; ++i) {
    const int rank = static_cast<int>(r.range(2, 3));
    Dims in;
    for (int a = 0; a < rank; ++a) in.push_back(r.range(1, 9 + (a == 0 ? 58 : 0)));
    BatchNormParams p;
    const int axis = static_cast<int>(r.range(0, rank - 1));
    p.keras_axis = axis + 1;
    const int64_t c = in[static_cast<size_t>(axis)];
    p.gamma = r.weights({c}, 1.0f);
    p.beta = r.weights({c}, 1.0f);
    p.moving_mean = r.weights({c}, 1.0f);
    p.moving_variance = Weights{{c}, r.vec(c, 0.2f, 2.0f)};
    check(one_node(p, {in}), r.range(1, 9), 4900 + i, "BatchNorm " + dims_str(in) + " axis " + std::to_string(axis));
  }
}

NND_ISA_SUITE(JitLayersExtra);

}  // namespace
}  // namespace nnd::jit::test
