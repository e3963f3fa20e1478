// The operators attention exports lean on, on hand-built graphs: MatMul of two computed tensors
// (stacks over heads, a broadcast leading axis, the batch moved by a Transpose) and constants
// that meet computed tensors (a class token concatenated in front, a position embedding added,
// a divisor, a constant on the left of Sub). Checked against index arithmetic on both engines,
// batch 2; the refusals name the node, the operator and the reason.
#include <string>

#include <gtest/gtest.h>

#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

// y = a · b per head, a = x[:, 0] as [N, H, M, K] and b = x[:, 1] reshaped to [N, H, K, M].
TEST(OnnxAttentionOps, MatMulOfTwoComputedTensors) {
  constexpr int64_t H = 2, M = 3, K = 4;
  OnnxGraph m(13);
  m.input("x", {2, H, M, K}).ints("zero", {0}).ints("one", {1}).ints("bshape", {-1, H, K, M});
  m.output("y");
  auto& ga = m.node("Gather", {"x", "zero"}, {"a4"});  // [N, 1, H, M, K], squeezed below
  OnnxGraph::attr(ga, "axis", int64_t{1});
  m.node("Squeeze", {"a4", "one"}, {"a"});
  auto& gb = m.node("Gather", {"x", "one"}, {"b4"});
  OnnxGraph::attr(gb, "axis", int64_t{1});
  m.node("Squeeze", {"b4", "one"}, {"bm"});
  m.node("Reshape", {"bm", "bshape"}, {"b"});
  m.node("MatMul", {"a", "b"}, {"y"}, "scores");
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{H, M, M}));
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    const int64_t sample = 2 * H * M * K;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < M; ++j) {
            double acc = 0;
            for (int64_t t = 0; t < K; ++t) {
              const double a = x[static_cast<size_t>(n * sample + (h * M + i) * K + t)];
              const double b = x[static_cast<size_t>(n * sample + H * M * K + (h * K + t) * M + j)];
              acc += a * b;
            }
            y.push_back(static_cast<float>(acc));
          }
    return y;
  });
}

// One operand's head axis broadcasts (length 1), and the batch sits on axis 1 of both (a
// Transpose put it there): the product still pairs each sample with itself.
TEST(OnnxAttentionOps, MatMulBroadcastAndBatchOnAxisOne) {
  constexpr int64_t H = 3, M = 2, K = 4;
  OnnxGraph m(13);
  m.input("x", {H, M, K}).input("w", {1, K, M}).output("y");
  auto& ta = m.node("Transpose", {"x"}, {"a"});
  OnnxGraph::attr(ta, "perm", std::vector<int64_t>{1, 0, 2, 3});  // [H, N, M, K]
  auto& tb = m.node("Transpose", {"w"}, {"b"});
  OnnxGraph::attr(tb, "perm", std::vector<int64_t>{1, 0, 2, 3});  // [1, N, K, M]
  m.node("MatMul", {"a", "b"}, {"p"});
  auto& back = m.node("Transpose", {"p"}, {"y"});
  OnnxGraph::attr(back, "perm", std::vector<int64_t>{1, 0, 2, 3});
  const Graph g = m.load();
  EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{H, M, M}));
  // Two inputs: run the reference engine and the JIT by hand.
  const std::vector<float> x = wavy(2 * H * M * K, 0.2), w = wavy(2 * K * M, 1.3);
  for (EngineKind kind : engines_here(g)) {
    EngineOptions o;
    o.engine = kind;
    auto engine = make_engine(g, o);
    ModelOutputs out = allocate_outputs(g, 2);
    const InputView in[2] = {{DType::kFloat32, x.data()}, {DType::kFloat32, w.data()}};
    engine->run(2, std::span<const InputView>(in, 2), out.views());
    size_t o_i = 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < M; ++j, ++o_i) {
            double acc = 0;
            for (int64_t t = 0; t < K; ++t) {
              acc += static_cast<double>(x[static_cast<size_t>(((n * H + h) * M + i) * K + t)]) *
                     w[static_cast<size_t>((n * K + t) * M + j)];
            }
            ASSERT_NEAR(out.buffers[0][o_i], acc, 1e-5 * std::max(1.0, std::fabs(acc)))
                << (kind == EngineKind::kJit ? "jit" : "reference") << " at " << o_i;
          }
  }
}

// y = (Concat(token, x) + pos) / d - (c - x0) with a class token [1, 1, F], a position embedding
// [1, T + 1, F], a divisor [T + 1, F] and a constant [T + 1, F] on the left of Sub.
TEST(OnnxAttentionOps, ConstantsBesideComputedTensors) {
  constexpr int64_t T = 3, F = 4, T1 = T + 1;
  const std::vector<float> token = wavy(F, 0.5), pos = wavy(T1 * F, 1.5), d = {1, 2, 4, -2, 0.5f, 1, 8, 2, 1, 1, 2, 4, 4, 2, 1, 0.25f};
  const std::vector<float> c = wavy(T1 * F, 2.5);
  OnnxGraph m(13);
  m.input("x", {T, F}).floats("token", {1, 1, F}, token).floats("pos", {1, T1, F}, pos).floats("d", {T1, F}, d);
  m.floats("c", {T1, F}, c).output("y");
  auto& cat = m.node("Concat", {"token", "x"}, {"t"}, "prepend");
  OnnxGraph::attr(cat, "axis", int64_t{1});
  m.node("Add", {"t", "pos"}, {"p"}, "embed");
  m.node("Div", {"p", "d"}, {"q"});
  m.node("Sub", {"c", "t"}, {"r"});
  m.node("Sub", {"q", "r"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) {
    std::vector<float> y;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t t = 0; t < T1; ++t)
        for (int64_t f = 0; f < F; ++f) {
          const size_t e = static_cast<size_t>(t * F + f);
          const double tv = t == 0 ? token[static_cast<size_t>(f)] : x[static_cast<size_t>((n * T + t - 1) * F + f)];
          y.push_back(static_cast<float>((tv + pos[e]) / d[e] - (c[e] - tv)));
        }
    return y;
  });
}

// What torchvision's Swin Transformer adds around its windows: Mod in the shape arithmetic of
// padding to whole windows (ONNX's integer Mod takes the divisor's sign, fmod = 1 the dividend's),
// a Pad of nothing, and F.dropout(p=0.0) exported in training mode: both the identity.
TEST(OnnxAttentionOps, SwinShapeArithmeticPadAndDropout) {
  {  // Mod([0, 7, -2], [5, 4, 10]) = [0, 3, 8]: Python's %, not C's (which gives -2).
    OnnxGraph m(13);
    m.input("x", {24}).ints("a", {0, 7, -2}).ints("b", {5, 4, 10}).output("y");
    m.node("Mod", {"a", "b"}, {"shape"});
    m.node("Reshape", {"x", "shape"}, {"y"});
    const Graph g = m.load();
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{3, 8}));
  }
  {  // fmod = 1: [0, 0, 0] - Mod([0, -3, -7], [5, 4, 4]) = [0, 3, 3] (C's fmod: -3, -3).
    OnnxGraph m(13);
    m.input("x", {9}).ints("a", {0, -3, -7}).ints("b", {5, 4, 4}).ints("zero", {0, 0, 0}).output("y");
    auto& mod = m.node("Mod", {"a", "b"}, {"r"});
    OnnxGraph::attr(mod, "fmod", int64_t{1});
    m.node("Sub", {"zero", "r"}, {"shape"});
    m.node("Reshape", {"x", "shape"}, {"y"});
    const Graph g = m.load();
    EXPECT_EQ(g.values[static_cast<size_t>(g.outputs[0])].shape, (Dims{3, 3}));
  }
  {  // Pad by nothing (any rank) and Dropout with ratio 0 in training mode: y = x.
    OnnxGraph m(13);
    m.input("x", {5}).ints("pads", {0, 0, 0, 0}).scalar("ratio", 0.0f).bools("training", {true}).output("y");
    m.node("Pad", {"x", "pads"}, {"p"});
    m.node("Dropout", {"p", "ratio", "training"}, {"y"});
    const Graph g = m.load();
    expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return x; });
  }
  {  // Range(4, -1, -2) = [4, 2, 0] and ScatterND([0..5], [[0], [5]], [5, 0]) = [5, 1, 2, 3, 4, 0]
     // as gather indices.
    OnnxGraph m(13);
    m.input("x", {6}).ints("start", {4}).ints("limit", {-1}).ints("delta", {-2});
    m.ints("data", {0, 1, 2, 3, 4, 5}).ints("where", {2, 1}, {0, 5}).ints("updates", {5, 0}).output("y").output("z");
    m.node("Squeeze", {"start"}, {"s"});
    m.node("Squeeze", {"limit"}, {"l"});
    m.node("Squeeze", {"delta"}, {"d"});
    m.node("Range", {"s", "l", "d"}, {"steps"});
    auto& g1 = m.node("Gather", {"x", "steps"}, {"y"});
    OnnxGraph::attr(g1, "axis", int64_t{1});
    m.node("ScatterND", {"data", "where", "updates"}, {"order"});
    auto& g2 = m.node("Gather", {"x", "order"}, {"z"});
    OnnxGraph::attr(g2, "axis", int64_t{1});
    const Graph g = m.load();
    expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
      std::vector<float> y;
      const std::vector<size_t> pick = k == 0 ? std::vector<size_t>{4, 2, 0} : std::vector<size_t>{5, 1, 2, 3, 4, 0};
      for (size_t n = 0; n < 2; ++n)
        for (size_t i : pick) y.push_back(x[n * 6 + i]);
      return y;
    });
  }
  {  // Mod of a computed tensor and a real dropout are refused by name.
    OnnxGraph m(13);
    m.input("x", {5}).ints("b", {3}).output("y");
    m.node("Mod", {"x", "b"}, {"y"}, "mod");
    const std::string e = m.refusal();
    expect_contains(e, "node 'mod' (Mod)");
    expect_contains(e, "Mod of a computed tensor is not supported");
  }
  {
    OnnxGraph m(13);
    m.input("x", {5}).scalar("ratio", 0.5f).bools("training", {true}).output("y");
    m.node("Dropout", {"x", "ratio", "training"}, {"y"}, "drop");
    const std::string e = m.refusal();
    expect_contains(e, "node 'drop' (Dropout)");
    expect_contains(e, "training_mode is true with ratio 0.5");
  }
}

// torch 2's causal attention mask: Trilu of a constant folds. A 3x3 matrix of ones: the lower
// triangle with k = 0 (ones(L, S).tril()), the upper with k = 1 (above the diagonal only), added to
// x; a Trilu of a computed tensor is refused by name.
TEST(OnnxAttentionOps, TriluOfAConstantFolds) {
  OnnxGraph m(14);
  m.input("x", {3, 3}).floats("ones", {3, 3}, std::vector<float>(9, 1.0f)).ints("one", {}, {1}).output("y").output("z");
  auto& lower = m.node("Trilu", {"ones"}, {"l"});
  OnnxGraph::attr(lower, "upper", int64_t{0});
  m.node("Trilu", {"ones", "one"}, {"u"});
  m.node("Add", {"x", "l"}, {"y"});
  m.node("Add", {"x", "u"}, {"z"});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    std::vector<float> y = x;
    for (size_t i = 0; i < x.size(); ++i) {
      const int row = static_cast<int>(i / 3 % 3), col = static_cast<int>(i % 3);
      if (k == 0 ? col <= row : col - row >= 1) y[i] += 1.0f;
    }
    return y;
  });
  OnnxGraph c(14);
  c.input("x", {3, 3}).output("y");
  c.node("Trilu", {"x"}, {"y"}, "tri");
  const std::string e = c.refusal();
  expect_contains(e, "node 'tri' (Trilu)");
  expect_contains(e, "Trilu of a computed tensor is not supported");
}

TEST(OnnxAttentionOps, Refusals) {
  {  // A constant that varies along the batch axis.
    OnnxGraph m(13);
    m.input("x", {2, 3}).floats("c", {2, 2, 3}, wavy(12)).output("y");
    m.node("Add", {"x", "c"}, {"y"}, "plus");
    const std::string e = m.refusal();
    expect_contains(e, "node 'plus' (Add)");
    expect_contains(e, "varies along the batch axis");
  }
  {  // Two computed operands of rank 2 would pair samples with rows.
    OnnxGraph m(13);
    m.input("x", {3}).input("z", {3}).output("y");
    m.node("MatMul", {"x", "z"}, {"y"}, "outer");
    const std::string e = m.refusal();
    expect_contains(e, "node 'outer' (MatMul)");
    expect_contains(e, "two computed operands of rank 2");
  }
  {  // Computed operands of different ranks.
    OnnxGraph m(13);
    m.input("x", {2, 3, 4}).input("z", {4, 5}).output("y");
    m.node("MatMul", {"x", "z"}, {"y"}, "mixed");
    const std::string e = m.refusal();
    expect_contains(e, "node 'mixed' (MatMul)");
    expect_contains(e, "two computed operands of ranks 4 and 3");
  }
}

}  // namespace
}  // namespace nnd::test
