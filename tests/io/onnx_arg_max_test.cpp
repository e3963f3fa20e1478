// ONNX ArgMax / ArgMin: int64 indices along one non-batch axis, served only as graph outputs.
// Every axis, with and without keepdims, on a tensor the importer holds channels-last (the
// output of a pool of an NCHW model), against plain index arithmetic in both engines; and the
// refusals: the batch axis, an index that feeds another node than a view of it.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/ir/layers.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

constexpr int64_t kC = 3, kH = 4, kW = 5;

// The index of the largest (smallest) element along ONNX axis `axis` of x [batch, C, H, W] in C
// order, the first of equal ones: C order of the result, which keepdims does not change.
std::vector<int64_t> arg_extreme(const std::vector<float>& x, int axis, bool smallest) {
  const std::vector<int64_t> dims{static_cast<int64_t>(x.size()) / (kC * kH * kW), kC, kH, kW};
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= dims[static_cast<size_t>(a)];
  for (int a = axis + 1; a < 4; ++a) inner *= dims[static_cast<size_t>(a)];
  const int64_t len = dims[static_cast<size_t>(axis)];
  std::vector<int64_t> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < len; ++k) {
        const float v = x[static_cast<size_t>((o * len + k) * inner + i)];
        const float b = x[static_cast<size_t>((o * len + best) * inner + i)];
        if (smallest ? v < b : v > b) best = k;
      }
      out.push_back(best);
    }
  }
  return out;
}

struct Case {
  std::string op;
  int64_t axis;  // as written in the node (negative counts from the end)
  bool keepdims;
};

std::vector<Case> every_case() {
  std::vector<Case> cases;
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {1, 2, 3, -1}) {
      for (bool keep : {false, true}) cases.push_back({op, axis, keep});
    }
  }
  return cases;
}

// x [N, 3, 4, 5] -> MaxPool 1x1 (the importer's channels-last layout) -> one ArgMax/ArgMin per case.
OnnxGraph graph_of(const std::vector<Case>& cases) {
  OnnxGraph g(13);
  g.input("x", {kC, kH, kW});
  OnnxGraph::attr(g.node("MaxPool", {"x"}, {"p"}), "kernel_shape", std::vector<int64_t>{1, 1});
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string out = "y";  // not "y" + ...: GCC 12 warns of a false -Wrestrict there
    out += std::to_string(i);
    onnx::NodeProto& n = g.node(cases[i].op, {"p"}, {out});
    OnnxGraph::attr(n, "axis", cases[i].axis);
    OnnxGraph::attr(n, "keepdims", int64_t{cases[i].keepdims ? 1 : 0});
    g.output(out);
  }
  return g;
}

TEST(OnnxArgMax, EveryAxisWithAndWithoutKeepdimsInBothEngines) {
  const std::vector<Case> cases = every_case();
  const Graph g = graph_of(cases).load();
  ASSERT_EQ(g.outputs.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.outputs[i])];
    EXPECT_EQ(v.dtype, DType::kInt64) << "output " << i;
    // The ONNX shape without the batch: the axis dropped, or kept with length 1 in its place.
    Dims want{kC, kH, kW};
    const auto axis = static_cast<size_t>(cases[i].axis < 0 ? cases[i].axis + 4 : cases[i].axis) - 1;
    if (cases[i].keepdims) {
      want[axis] = 1;
    } else {
      want.erase(want.begin() + static_cast<std::ptrdiff_t>(axis));
    }
    EXPECT_EQ(v.shape, want) << cases[i].op << " axis " << cases[i].axis << " keepdims " << cases[i].keepdims;
  }
  const int64_t batch = 3;
  const std::vector<float> x = wavy(batch * kC * kH * kW);
  for (EngineKind kind : engines_here(g)) {
    const ModelOutputs out = run_outputs(g, kind, batch, x);
    const char* engine = kind == EngineKind::kJit ? "jit" : "reference";
    for (size_t i = 0; i < cases.size(); ++i) {
      const int axis = static_cast<int>(cases[i].axis < 0 ? cases[i].axis + 4 : cases[i].axis);
      EXPECT_EQ(out.indices[i], arg_extreme(x, axis, cases[i].op == "ArgMin"))
          << engine << ": " << cases[i].op << " axis " << cases[i].axis << " keepdims " << cases[i].keepdims;
    }
  }
}

// Views of the indices (`argmax(1).unsqueeze(1)`, a Squeeze of keepdims, a Flatten) are served:
// the same indices in the view's shape, next to the ArgMax itself as another output.
TEST(OnnxArgMax, ViewsOfTheIndicesAreServed) {
  OnnxGraph g(13);
  g.input("x", {kC, kH, kW});
  g.ints("one", {1});
  onnx::NodeProto& flat = g.node("ArgMax", {"x"}, {"flat"});
  OnnxGraph::attr(flat, "axis", int64_t{1});
  OnnxGraph::attr(flat, "keepdims", int64_t{0});
  g.node("Unsqueeze", {"flat", "one"}, {"unsqueezed"});
  OnnxGraph::attr(g.node("ArgMin", {"x"}, {"kept"}), "axis", int64_t{1});
  g.node("Squeeze", {"kept", "one"}, {"squeezed"});
  OnnxGraph::attr(g.node("Flatten", {"kept"}, {"flattened"}), "axis", int64_t{1});
  for (const char* out : {"flat", "unsqueezed", "squeezed", "flattened"}) g.output(out);
  const Graph graph = g.load();
  const std::vector<Dims> shapes{{kH, kW}, {1, kH, kW}, {kH, kW}, {kH * kW}};
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(graph.values[static_cast<size_t>(graph.outputs[i])].dtype, DType::kInt64) << "output " << i;
    EXPECT_EQ(graph.values[static_cast<size_t>(graph.outputs[i])].shape, shapes[i]) << "output " << i;
  }
  const int64_t batch = 2;
  const std::vector<float> x = wavy(batch * kC * kH * kW, 0.7);
  const std::vector<int64_t> max = arg_extreme(x, 1, false), min = arg_extreme(x, 1, true);
  for (EngineKind kind : engines_here(graph)) {
    const ModelOutputs out = run_outputs(graph, kind, batch, x);
    const char* engine = kind == EngineKind::kJit ? "jit" : "reference";
    EXPECT_EQ(out.indices[0], max) << engine;
    EXPECT_EQ(out.indices[1], max) << engine;
    EXPECT_EQ(out.indices[2], min) << engine;
    EXPECT_EQ(out.indices[3], min) << engine;
  }
}

// A float-only run of a graph with index outputs names the output it cannot write.
TEST(OnnxArgMax, AFloatOnlyRunNamesTheIndexOutput) {
  const Graph g = graph_of({{"ArgMax", 1, false}}).load();
  auto engine = make_engine(g, EngineOptions{});
  std::vector<float> x(kC * kH * kW, 0.0f), y(kH * kW);
  const InputView in{DType::kFloat32, x.data()};
  float* outs[] = {y.data()};
  try {
    engine->run(1, std::span<const InputView>(&in, 1), std::span<float* const>(outs));
    FAIL() << "an int64 output ran as float32";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("output 'y0' is int64"), std::string::npos) << e.what();
  }
}

TEST(OnnxArgMax, TheBatchAxisIsRefused) {
  OnnxGraph g(13);
  g.input("x", {kC});
  OnnxGraph::attr(g.node("ArgMax", {"x"}, {"y"}, "over_batch"), "axis", int64_t{0});
  g.output("y");
  const std::string why = g.refusal();
  EXPECT_NE(why.find("over_batch"), std::string::npos) << why;
  EXPECT_NE(why.find("batch axis"), std::string::npos) << why;
}

// Indices are served, never computed with: a node that reads them is refused, naming the ArgMax.
TEST(OnnxArgMax, AnIndexThatFeedsAnotherNodeIsRefused) {
  OnnxGraph g(13);
  g.input("x", {kC, kH});
  OnnxGraph::attr(g.node("ArgMax", {"x"}, {"i"}, "pick"), "axis", int64_t{1});
  g.node("Neg", {"i"}, {"y"}, "negate");
  g.output("y");
  const std::string why = g.refusal();
  EXPECT_NE(why.find("int64 indices of an ArgMax"), std::string::npos) << why;
}

// A cast of the indices to int64 is nothing; to float (`argmax().float()`) it is refused by name.
TEST(OnnxArgMax, CastsOfTheIndices) {
  for (int64_t to : {int64_t{onnx::TensorProto_DataType_INT64}, int64_t{onnx::TensorProto_DataType_FLOAT}}) {
    OnnxGraph g(13);
    g.input("x", {kC, kH});
    OnnxGraph::attr(g.node("ArgMax", {"x"}, {"i"}), "axis", int64_t{1});
    OnnxGraph::attr(g.node("Cast", {"i"}, {"y"}, "to_type"), "to", to);
    g.output("y");
    const std::string why = g.refusal();
    if (to == onnx::TensorProto_DataType_INT64) {
      EXPECT_EQ(why, "");
    } else {
      EXPECT_NE(why.find("cast of the int64 indices of an ArgMax to type 1"), std::string::npos) << why;
    }
  }
}

}  // namespace
}  // namespace nnd::test
