// ONNX Split and Slice of computed tensors: IR Croppings in the layout the input has (steps: a
// 1x1 max pool with strides after the crop), checked against index arithmetic in both engines;
// and the refusals.
#include <string>

#include <gtest/gtest.h>

#include "core/ir/layers.h"
#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

// x (batch, dims...) in C order: every `step`-th element along `axis` (batch = axis 0) from
// `begin`, `len` of them.
std::vector<float> every(const std::vector<float>& x, std::vector<int64_t> dims, size_t axis, int64_t begin,
                         int64_t step, int64_t len) {
  dims.insert(dims.begin(), static_cast<int64_t>(x.size()) / count_of(Dims(dims)));
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= dims[k];
  for (size_t k = axis + 1; k < dims.size(); ++k) inner *= dims[k];
  std::vector<float> y;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < inner; ++j) y.push_back(x[static_cast<size_t>((o * dims[axis] + begin + i * step) * inner + j)]);
  return y;
}

// x cut to [begin, begin + len) along `axis`.
std::vector<float> cut(const std::vector<float>& x, std::vector<int64_t> dims, size_t axis, int64_t begin, int64_t len) {
  return every(x, std::move(dims), axis, begin, 1, len);
}

int count_kind(const Graph& g, const char* kind) {
  int n = 0;
  for (const Node& node : g.nodes) n += std::string(layer_kind_name(node.params)) == kind;
  return n;
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected to contain: " << part;
}

TEST(OnnxSplit, ChannelsOfAChannelsLastTensorAreCroppedWithoutMovingData) {
  // A 1x1 conv with identity weights leaves x channels last in the IR; the split cuts its last
  // IR axis, which a Cropping keeps whole: the crop runs on a (H*W, C, 1) view.
  OnnxGraph m(13);
  m.input("x", {5, 3, 4}).output("a").output("b");
  std::vector<float> eye(25, 0.0f);
  for (int k = 0; k < 5; ++k) eye[static_cast<size_t>(k * 6)] = 1.0f;
  m.floats("w", {5, 5, 1, 1}, eye).ints("parts", {2, 3});
  m.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
  auto& s = m.node("Split", {"c", "parts"}, {"s0", "s1"}, "/Split");
  OnnxGraph::attr(s, "axis", int64_t{1});
  m.node("Relu", {"s0"}, {"a"});
  m.node("Sigmoid", {"s1"}, {"b"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Cropping"), 2);
  EXPECT_EQ(count_kind(g, "Permute"), 3);  // the conv's input, and each output back to NCHW
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    std::vector<float> y = cut(x, {5, 3, 4}, 1, k == 0 ? 0 : 2, k == 0 ? 2 : 3);
    for (float& v : y) v = k == 0 ? std::max(v, 0.0f) : 1.0f / (1.0f + std::exp(-v));
    return y;
  });
}

TEST(OnnxSplit, NumOutputsGivesTheLastPartTheRest) {
  OnnxGraph m(18);
  m.input("x", {7}).output("p").output("q").output("r");
  auto& s = m.node("Split", {"x"}, {"p", "q", "r"});
  OnnxGraph::attr(s, "axis", int64_t{-1});
  OnnxGraph::attr(s, "num_outputs", int64_t{3});
  const Graph g = m.load();
  expect_outputs(g, 3, [](size_t k, const std::vector<float>& x) {
    return cut(x, {7}, 1, static_cast<int64_t>(3 * k), k == 2 ? 1 : 3);
  });
}

TEST(OnnxSplit, EqualPartsOfAMiddleAxisOfRank5) {
  OnnxGraph m(11);
  m.input("x", {2, 6, 3, 2}).output("p").output("q");
  auto& s = m.node("Split", {"x"}, {"p", "q"});
  OnnxGraph::attr(s, "axis", int64_t{2});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    return cut(x, {2, 6, 3, 2}, 2, static_cast<int64_t>(3 * k), 3);
  });
}

TEST(OnnxSplit, SplitAttributeBeforeOpset13) {
  OnnxGraph m(11);
  m.input("x", {4, 3}).output("p").output("q");
  auto& s = m.node("Split", {"x"}, {"p", "q"});
  OnnxGraph::attr(s, "axis", int64_t{1});
  OnnxGraph::attr(s, "split", std::vector<int64_t>{1, 3});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    return cut(x, {4, 3}, 1, k == 0 ? 0 : 1, k == 0 ? 1 : 3);
  });
}

TEST(OnnxSplit, Refusals) {
  auto split = [](int opset, int64_t axis, std::vector<int64_t> parts, int outputs, int64_t num_outputs) {
    OnnxGraph m(opset);
    m.input("x", {6, 2});
    std::vector<std::string> outs;
    for (int k = 0; k < outputs; ++k) {
      outs.push_back(std::string(1, static_cast<char>('a' + k)));
      m.output(outs.back());
    }
    auto& s = m.node("Split", {"x"}, outs, "/Split");
    OnnxGraph::attr(s, "axis", axis);
    if (!parts.empty()) OnnxGraph::attr(s, "split", parts);
    if (num_outputs) OnnxGraph::attr(s, "num_outputs", num_outputs);
    return m.refusal();
  };
  expect_contains(split(11, 0, {}, 2, 0), "node '/Split' (Split): splitting the batch axis is not supported");
  expect_contains(split(11, 1, {2, 3}, 2, 0), "split [2, 3] does not add up to the axis length 6");
  expect_contains(split(11, 1, {6, 0}, 2, 0), "split [6, 0] for an axis of 6 has an empty part");
  expect_contains(split(11, 1, {6}, 2, 0), "split [6] does not give one length to each of the 2 outputs");
  expect_contains(split(11, 1, {}, 4, 0), "an axis of 6 does not split into 4 equal parts");
  expect_contains(split(18, 1, {}, 2, 3), "num_outputs 3 does not match the 2 outputs");
  expect_contains(split(18, 1, {}, 5, 5), "has an empty part");  // 2, 2, 2, 2, -2
  expect_contains(split(11, 3, {}, 2, 0), "axis 3 is out of range for rank 3");
  EXPECT_EQ(split(11, 2, {}, 2, 0), "");
}

TEST(OnnxSlice, TwoAxesApartCropOnAView) {
  // Axes 1 and 3 of (N, 3, 4, 5) in the input's own layout: axis 1 absorbs axis 2 in a
  // (3*4, 5, 1) view, so no Permute.
  OnnxGraph m(13);
  m.input("x", {3, 4, 5}).output("y").ints("starts", {1, 1}).ints("ends", {3, -1}).ints("axes", {1, 3});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Permute"), 0);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    return cut(cut(x, {3, 4, 5}, 1, 1, 2), {2, 4, 5}, 3, 1, 3);
  });
}

TEST(OnnxSlice, StepsOnSpatialAxesSubsample) {
  // YOLOv5's Focus: x[:, :, ::2, 1::2] of (N, 3, 6, 7): rows 0, 2, 4 and columns 1, 3, 5.
  OnnxGraph m(13);
  m.input("x", {3, 6, 7}).output("y").ints("starts", {0, 1}).ints("ends", {1 << 30, 7}).ints("axes", {2, 3});
  m.ints("steps", {2, 2});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Pool"), 1);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    return every(every(x, {3, 6, 7}, 2, 0, 2, 3), {3, 3, 7}, 3, 1, 2, 3);
  });
}

TEST(OnnxSlice, StepOnTheChannelAxisMovesItOutOfTheLastPlace) {
  OnnxGraph m(13);
  m.input("x", {7, 2, 3}).output("y").ints("starts", {1}).ints("ends", {-1}).ints("axes", {1}).ints("steps", {3});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) { return every(x, {7, 2, 3}, 1, 1, 3, 2); });
}

TEST(OnnxSlice, StepRefusals) {
  auto refusal = [](std::vector<int64_t> dims, int64_t axis, int64_t step) {
    OnnxGraph m(13);
    m.input("x", dims).output("y").ints("starts", {0}).ints("ends", {1 << 30}).ints("axes", {axis}).ints("steps", {step});
    m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    return m.refusal();
  };
  expect_contains(refusal({4, 5}, 2, 0), "a step of 0");
  expect_contains(refusal({6}, 1, 2), "a slice with steps on axes [1] of a rank-2 tensor is not supported");
  EXPECT_EQ(refusal({4, 5}, 1, 2), "");
}

// x (batch, dims...) in C order with the elements along `axis` picked in the order `picked`.
std::vector<float> pick(const std::vector<float>& x, std::vector<int64_t> dims, size_t axis, const std::vector<int64_t>& picked) {
  std::vector<float> y;
  const int64_t len = dims[axis - 1];
  std::vector<float> all;
  for (int64_t i : picked) {
    std::vector<float> one = cut(x, dims, axis, i, 1);
    all.insert(all.end(), one.begin(), one.end());
  }
  // `all` holds the picked slices one after another; interleave them back along `axis`.
  dims.insert(dims.begin(), static_cast<int64_t>(x.size()) / count_of(Dims(dims)));
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= dims[k];
  for (size_t k = axis + 1; k < dims.size(); ++k) inner *= dims[k];
  (void)len;
  const auto n = static_cast<int64_t>(picked.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < inner; ++j) y.push_back(all[static_cast<size_t>((i * outer + o) * inner + j)]);
  return y;
}

TEST(OnnxSlice, BackwardStepsAreGathers) {
  // torch.flip(x, [2, 3]) exports Slice(starts -1, ends -INT64_MAX, steps -1); x[:, 4:0:-2] too.
  OnnxGraph m(13);
  m.input("x", {3, 4, 5}).output("flip").output("every_other");
  m.ints("starts", {-1, -1}).ints("ends", {-(int64_t{1} << 62), -(int64_t{1} << 62)}).ints("axes", {2, 3});
  m.ints("steps", {-1, -1}).ints("s2", {4}).ints("e2", {0}).ints("a2", {3}).ints("st2", {-2});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"flip"});
  m.node("Slice", {"x", "s2", "e2", "a2", "st2"}, {"every_other"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Gather"), 3);
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    if (k == 0) return pick(pick(x, {3, 4, 5}, 2, {3, 2, 1, 0}), {3, 4, 5}, 3, {4, 3, 2, 1, 0});
    return pick(x, {3, 4, 5}, 3, {4, 2});
  });
}

TEST(OnnxGather, AnIndexListPicksInThatOrder) {
  // BGR -> RGB on the channels of an NCHW input, and a repeated row.
  OnnxGraph m(13);
  m.input("x", {3, 4, 5}).output("rgb").output("rows").ints("bgr", {2, 1, 0}).ints("r", {-1, 0, 0});
  auto& g1 = m.node("Gather", {"x", "bgr"}, {"rgb"});
  OnnxGraph::attr(g1, "axis", int64_t{1});
  auto& g2 = m.node("Gather", {"x", "r"}, {"rows"});
  OnnxGraph::attr(g2, "axis", int64_t{2});
  const Graph g = m.load();
  expect_outputs(g, 2, [](size_t k, const std::vector<float>& x) {
    return k == 0 ? pick(x, {3, 4, 5}, 1, {2, 1, 0}) : pick(x, {3, 4, 5}, 2, {3, 0, 0});
  });
}

TEST(OnnxSlice, ThreeCroppedAxesCropInStages) {
  // No view of (N, 3, 4, 5) crops all three axes with one Cropping: axis 1 goes first, alone.
  OnnxGraph m(13);
  m.input("x", {3, 4, 5}).output("y").ints("starts", {1, 1, 1}).ints("ends", {3, 3, -1}).ints("axes", {1, 2, 3});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Cropping"), 2);
  EXPECT_EQ(count_kind(g, "Permute"), 0);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    return cut(cut(cut(x, {3, 4, 5}, 1, 1, 2), {2, 4, 5}, 2, 1, 2), {2, 2, 5}, 3, 1, 3);
  });
}

TEST(OnnxSlice, AnUncroppedAxisOutsideTwoCroppedOnesCropsInStages) {
  // (N, 2, 3, 4, 5) cropped on axes 2 and 4: the view (2, 3, 4, 5, 1) would have two cropped axes
  // and an uncropped one outside them.
  OnnxGraph m(13);
  m.input("x", {2, 3, 4, 5}).output("y").ints("starts", {1, 2}).ints("ends", {2, 4}).ints("axes", {2, 4});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"});
  const Graph g = m.load();
  EXPECT_EQ(count_kind(g, "Cropping"), 2);
  expect_outputs(g, 2, [](size_t, const std::vector<float>& x) {
    return cut(cut(x, {2, 3, 4, 5}, 2, 1, 1), {2, 1, 4, 5}, 4, 2, 2);
  });
}

}  // namespace
}  // namespace nnd::test
