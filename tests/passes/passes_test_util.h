// Helpers of the graph-pass tests: a small graph builder, random weights, and the check that a
// rewritten graph computes what the original computes (reference engine, random inputs).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/dump.h"
#include "core/ir/graph.h"
#include "core/ir/shape_inference.h"
#include "core/ref/reference_engine.h"

namespace nnd::passes::test {

class Rng {
 public:
  explicit Rng(uint32_t seed) : e_(seed) {}
  float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(e_); }
  std::vector<float> vec(int64_t n, float lo = -1.0f, float hi = 1.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = uniform(lo, hi);
    return v;
  }
  Weights weights(Dims shape, float lo = -0.5f, float hi = 0.5f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return Weights{std::move(shape), vec(n, lo, hi)};
  }

 private:
  std::mt19937 e_;
};

// Builds a graph node by node; add() returns the output value id.
class Builder {
 public:
  explicit Builder(uint32_t seed = 1) : rng(seed) { g.source = "passes-test"; }

  ValueId input(Dims shape) {
    Value v;
    v.name = "in" + std::to_string(g.inputs.size());
    v.shape = std::move(shape);
    g.values.push_back(v);
    const auto id = static_cast<ValueId>(g.values.size() - 1);
    g.inputs.push_back(id);
    g.input_names.push_back(v.name);
    return id;
  }

  ValueId add(LayerParams p, std::vector<ValueId> inputs, const std::string& name = "") {
    Node n;
    n.name = name.empty() ? "n" + std::to_string(g.nodes.size()) : name;
    n.source_op = layer_kind_name(p);
    n.params = std::move(p);
    n.inputs = std::move(inputs);
    Value v;
    v.name = n.name;
    v.producer = static_cast<NodeId>(g.nodes.size());
    g.values.push_back(v);
    n.output = static_cast<ValueId>(g.values.size() - 1);
    g.nodes.push_back(std::move(n));
    return g.nodes.back().output;
  }

  void output(ValueId v, const std::string& name) {
    g.outputs.push_back(v);
    g.output_names.push_back(name);
  }

  Graph finish() {
    verify_structure(g);
    infer_shapes(g);
    return g;
  }

  // Layer factories with random weights.
  ConvParams conv(int64_t kh, int64_t cin, int64_t filters, Padding pad = Padding::kSame, int64_t stride = 1,
                  ActivationKind act = ActivationKind::kLinear, int64_t groups = 1) {
    ConvParams p;
    p.filters = filters;
    p.groups = groups;
    p.window.kernel_h = p.window.kernel_w = kh;
    p.window.stride_h = p.window.stride_w = stride;
    p.window.padding = pad;
    p.activation = act;
    p.kernel = rng.weights({kh, kh, cin / groups, filters});
    p.bias = rng.weights({filters});
    return p;
  }
  DenseParams dense(int64_t in, int64_t units, ActivationKind act = ActivationKind::kLinear) {
    DenseParams p;
    p.units = units;
    p.activation = act;
    p.kernel = rng.weights({in, units});
    p.bias = rng.weights({units});
    return p;
  }
  DepthwiseConvParams depthwise(int64_t kh, int64_t cin, int64_t dm) {
    DepthwiseConvParams p;
    p.depth_multiplier = dm;
    p.window.kernel_h = p.window.kernel_w = kh;
    p.window.padding = Padding::kSame;
    p.kernel = rng.weights({kh, kh, cin, dm});
    p.bias = rng.weights({cin * dm});
    return p;
  }
  SeparableConvParams separable(int64_t kh, int64_t cin, int64_t filters, int64_t stride = 1) {
    SeparableConvParams p;
    p.filters = filters;
    p.window.kernel_h = p.window.kernel_w = kh;
    p.window.stride_h = p.window.stride_w = stride;
    p.window.padding = Padding::kSame;
    p.depthwise_kernel = rng.weights({kh, kh, cin, 1});
    p.pointwise_kernel = rng.weights({1, 1, cin, filters});
    p.bias = rng.weights({filters});
    return p;
  }
  BatchNormParams bn(int64_t c, bool zero_shift = false) {
    BatchNormParams p;
    p.gamma = rng.weights({c}, 0.5f, 1.5f);
    p.beta = rng.weights({c});
    p.moving_mean = rng.weights({c});
    p.moving_variance = rng.weights({c}, 0.2f, 2.0f);
    if (zero_shift) {
      // beta - mean * gamma / sqrt(var + eps) == 0 exactly: mean 0, beta 0.
      std::fill(p.beta.data.begin(), p.beta.data.end(), 0.0f);
      std::fill(p.moving_mean.data.begin(), p.moving_mean.data.end(), 0.0f);
    }
    return p;
  }
  static ReluParams relu(double max_value = INFINITY, double slope = 0.0) {
    ReluParams r;
    r.max_value = max_value;
    r.negative_slope = slope;
    return r;
  }
  static ActivationParams act(ActivationKind k) { return ActivationParams{k}; }

  Graph g;
  Rng rng;
};

inline int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Runs g with the reference engine on the given inputs; one vector per graph output.
inline std::vector<std::vector<float>> run_reference(const Graph& g, const std::vector<std::vector<float>>& inputs,
                                                     int64_t batch) {
  auto e = make_reference_engine(g);
  std::vector<InputView> views;
  for (const auto& in : inputs) views.push_back(InputView{DType::kFloat32, in.data()});
  std::vector<std::vector<float>> out;
  std::vector<float*> ptrs;
  for (ValueId v : g.outputs) out.emplace_back(static_cast<size_t>(batch * count_of(g.values[v].shape)), NAN);
  for (auto& o : out) ptrs.push_back(o.data());
  e->run(batch, views, ptrs);
  return out;
}

inline std::vector<std::vector<float>> random_inputs(const Graph& g, int64_t batch, uint32_t seed) {
  Rng r(seed);
  std::vector<std::vector<float>> in;
  for (ValueId v : g.inputs) in.push_back(r.vec(batch * count_of(g.values[v].shape), -2.0f, 2.0f));
  return in;
}

// Worst |a - b| / max(1, |b|) over all outputs.
inline double worst_scaled(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t k = 0; k < a[i].size(); ++k) {
      const double d = std::fabs(static_cast<double>(a[i][k]) - b[i][k]) / std::max(1.0, std::fabs(static_cast<double>(b[i][k])));
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
  }
  return worst;
}

// reference(rewritten) vs reference(original) on random inputs, batch 3.
inline void expect_same_function(const Graph& original, const Graph& rewritten, uint32_t seed = 7) {
  ASSERT_EQ(original.inputs.size(), rewritten.inputs.size());
  ASSERT_EQ(original.output_names, rewritten.output_names);
  const auto in = random_inputs(original, 3, seed);
  const double w = worst_scaled(run_reference(rewritten, in, 3), run_reference(original, in, 3));
  EXPECT_LE(w, 1e-5) << "rewritten:\n" << dump_graph(rewritten) << "original:\n" << dump_graph(original);
}

inline int count_kind(const Graph& g, size_t variant_index) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.params.index() == variant_index ? 1 : 0;
  return n;
}

template <class T>
int count(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += std::holds_alternative<T>(node.params) ? 1 : 0;
  return n;
}

}  // namespace nnd::passes::test

#include "core/passes/pass.h"

namespace nnd::passes::test {

// Copy of g rewritten by one pass (through a pipeline, so the result is re-verified).
template <class P>
Graph rewritten_by(const Graph& g, bool* changed = nullptr) {
  Graph r = g;
  PassPipeline pipe("");
  pipe.add(std::make_unique<P>());
  const bool c = pipe.run(r);
  if (changed) *changed = c;
  return r;
}

}  // namespace nnd::passes::test
