// Helpers for unit tests: one-node graphs built by hand and run through the reference engine.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/shape_inference.h"
#include "core/ref/reference_engine.h"
#include "core/util/error.h"
#include "tests/support/one_node_graph.h"

namespace nnd::test {

inline Weights W(Dims shape, std::vector<float> data) { return Weights{std::move(shape), std::move(data)}; }

// Weights 1, 2, 3, ... (times `scale`), for non-symmetric kernels whose layout matters.
inline Weights Iota(Dims shape, float scale = 1.0f, float start = 1.0f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = (start + static_cast<float>(i)) * scale;
  return W(std::move(shape), std::move(v));
}

// A graph whose single node `name` applies `params` to graph inputs of the given shapes.
inline Graph one_node(LayerParams params, std::vector<Dims> input_shapes, const std::string& name = "layer",
                      DType input_dtype = DType::kFloat32) {
  return one_node_graph(std::move(params), input_shapes, input_dtype, {"test.h5", name, "TestClass"});
}

inline int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Runs shape inference and the reference engine; returns the single output.
inline std::vector<float> run_graph(Graph g, int64_t batch, const std::vector<std::vector<float>>& inputs,
                                    Dims* out_shape = nullptr) {
  infer_shapes(g);
  auto engine = make_reference_engine(g);
  std::vector<InputView> views;
  for (const auto& in : inputs) views.push_back({DType::kFloat32, in.data()});
  const Dims shape = engine->graph().values[engine->graph().outputs[0]].shape;
  if (out_shape) *out_shape = shape;
  std::vector<float> out(static_cast<size_t>(batch * count_of(shape)), NAN);
  float* outs[] = {out.data()};
  engine->run(batch, views, outs);
  return out;
}

inline std::vector<float> run1(LayerParams p, std::vector<Dims> shapes, const std::vector<std::vector<float>>& inputs,
                               Dims* out_shape = nullptr) {
  return run_graph(one_node(std::move(p), std::move(shapes)), 1, inputs, out_shape);
}

inline std::vector<float> seq(int64_t n, float start = 1.0f, float step = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

// Deterministic pseudo-random values in [-1, 1).
inline std::vector<float> pseudo_random(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
  }
  return v;
}

#define EXPECT_VALUES_NEAR(actual, expected, tol)                                             \
  do {                                                                                       \
    const auto& a_ = (actual);                                                               \
    const auto& ex_ = (expected);                                                            \
    const std::vector<double> e_(std::begin(ex_), std::end(ex_));                            \
    ASSERT_EQ(a_.size(), e_.size());                                                         \
    for (size_t i_ = 0; i_ < e_.size(); ++i_) {                                              \
      EXPECT_NEAR(a_[i_], e_[i_], (tol) * std::max(1.0, std::fabs(e_[i_]))) << "index " << i_; \
    }                                                                                        \
  } while (0)

// Expects `f` to throw nnd::Error whose message contains each of `parts`.
template <typename F>
void expect_error(F f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown; expected one containing '" << parts.front() << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

}  // namespace nnd::test
