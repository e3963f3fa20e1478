// ONNX Pad in every mode (constant with any finite value, edge, reflect, wrap) on 1-D and 2-D
// spatial axes of NCHW tensors, checked in both engines against numpy's np.pad index rules written
// out here; and the refusals. The PyTorch fixtures pad_reflect, pad_replicate, pad_constant,
// pad_op2_attr and pad_op11_inputs check the same lowering against ONNX Runtime's numbers.
#include <string>

#include <gtest/gtest.h>

#include "tests/io/onnx_graph_builder.h"

namespace nnd::test {
namespace {

// Source index of padded position i along an axis of n elements with `before` padding; -1 means
// the constant value.
int64_t source(const std::string& mode, int64_t i, int64_t n, int64_t before) {
  int64_t k = i - before;
  if (k >= 0 && k < n) return k;
  if (mode == "constant") return -1;
  if (mode == "edge") return k < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((k % n) + n) % n;
  // reflect: mirror about the border elements, which are not repeated
  while (k < 0 || k >= n) k = k < 0 ? -k : 2 * (n - 1) - k;
  return k;
}

// np.pad of x (batch, channels, spatial...) over the spatial axes, pads = (begins..., ends...).
std::vector<float> np_pad(const std::vector<float>& x, const std::vector<int64_t>& dims, const std::vector<int64_t>& pads,
                          const std::string& mode, float value) {
  const size_t r = dims.size();  // without the batch
  const int64_t batch = static_cast<int64_t>(x.size()) / count_of(Dims(dims));
  std::vector<int64_t> out_dims = dims;
  for (size_t a = 1; a < r; ++a) out_dims[a] += pads[a + 1] + pads[a + 1 + r + 1];
  const int64_t per_out = count_of(Dims(out_dims)), per_in = count_of(Dims(dims));
  std::vector<float> y;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < per_out; ++o) {
      int64_t rem = o, src = 0, stride = 1;
      bool constant = false;
      for (size_t a = r; a-- > 0;) {
        const int64_t i = rem % out_dims[a];
        rem /= out_dims[a];
        const int64_t s = a == 0 ? i : source(mode, i, dims[a], pads[a + 1]);
        constant |= s < 0;
        src += s * stride;
        stride *= dims[a];
      }
      y.push_back(constant ? value : x[static_cast<size_t>(b * per_in + src)]);
    }
  }
  return y;
}

Graph pad_graph(const std::vector<int64_t>& dims, const std::vector<int64_t>& pads, const std::string& mode,
                float value, int opset = 19) {
  OnnxGraph m(opset);
  m.input("x", dims).output("y").ints("pads", pads);
  m.scalar("value", value);
  auto& n = m.node("Pad", {"x", "pads", mode == "constant" ? "value" : ""}, {"y"}, "/Pad");
  OnnxGraph::attr(n, "mode", mode);
  return m.load();
}

void expect_pad(const std::vector<int64_t>& dims, const std::vector<int64_t>& pads, const std::string& mode,
                float value = 0.0f) {
  SCOPED_TRACE(mode);
  const Graph g = pad_graph(dims, pads, mode, value);
  expect_outputs(g, 2, [&](size_t, const std::vector<float>& x) { return np_pad(x, dims, pads, mode, value); });
}

TEST(OnnxPad, EveryModeOnTwoSpatialAxes) {
  const std::vector<int64_t> dims{3, 5, 6}, pads{0, 0, 2, 1, 0, 0, 3, 2};  // top 2 bottom 3, left 1 right 2
  for (const char* mode : {"edge", "reflect", "wrap"}) expect_pad(dims, pads, mode);
  expect_pad(dims, pads, "constant", -1.25f);
  expect_pad(dims, pads, "constant", 0.0f);
}

TEST(OnnxPad, EveryModeOnOneSpatialAxis) {
  const std::vector<int64_t> dims{2, 7}, pads{0, 0, 3, 0, 0, 4};
  for (const char* mode : {"edge", "reflect", "wrap"}) expect_pad(dims, pads, mode);
  expect_pad(dims, pads, "constant", 2.5f);
}

TEST(OnnxPad, OnlyOneOfTwoSpatialAxes) {
  expect_pad({2, 4, 5}, {0, 0, 0, 2, 0, 0, 0, 1}, "reflect");
  expect_pad({2, 4, 5}, {0, 0, 1, 0, 0, 0, 2, 0}, "edge");
}

TEST(OnnxPad, Refusals) {
  auto refusal = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& pads, const std::string& mode) {
    OnnxGraph m(19);
    m.input("x", dims).output("y").ints("pads", pads);
    auto& n = m.node("Pad", {"x", "pads"}, {"y"}, "/Pad");
    OnnxGraph::attr(n, "mode", mode);
    return m.refusal();
  };
  auto expect_contains = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected: " << part;
  };
  expect_contains(refusal({2, 4}, {0, 0, 4, 0, 0, 0}, "reflect"), "reflect pads must be shorter than the axis (4)");
  expect_contains(refusal({2, 100}, {0, 0, 40, 0, 0, 40}, "reflect"), "reflect pads of more than 64 elements");
  expect_contains(refusal({2, 4}, {0, 0, 5, 0, 0, 0}, "wrap"), "wrap pads longer than the axis (4)");
  expect_contains(refusal({2, 4}, {0, 0, 1, 0, 0, 0}, "mirror"), "mode 'mirror' is not one of constant, reflect, edge, wrap");
  expect_contains(refusal({2, 4}, {0, 1, 1, 0, 0, 0}, "edge"), "pad every non-batch axis");
  EXPECT_EQ(refusal({2, 4}, {0, 0, 3, 0, 0, 3}, "reflect"), "");
}

}  // namespace
}  // namespace nnd::test
