// Small ONNX graphs built in memory for the loader's tests, with the same protobuf classes the
// loader parses (fixture files come from tools/onnx_fixtures; these cover variants and refusals
// that are quicker to state in C++), and a runner that checks both engines against a formula.
#pragma once

#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_inputs.h"
#include "core/io/onnx_loader.h"
#include "core/util/error.h"
#include "tests/support/engines_here.h"

namespace nnd::test {

class OnnxGraph {
 public:
  explicit OnnxGraph(int opset) {
    m_.set_ir_version(8);
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }

  // A float input; dims exclude the batch, which is free ("N").
  OnnxGraph& input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("N");
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
  }
  // A float input with every dimension fixed, the batch's included (`dims` are the file's).
  OnnxGraph& fixed_input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* v = m_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    return *this;
  }
  OnnxGraph& output(const std::string& name) {
    m_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  OnnxGraph& floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  OnnxGraph& scalar(const std::string& name, float v) { return floats(name, {}, {v}); }
  OnnxGraph& ints(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  // An int64 initializer of any shape (index tuples, say).
  OnnxGraph& ints(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  OnnxGraph& bools(const std::string& name, const std::vector<bool>& values) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_BOOL);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (bool v : values) t->add_int32_data(v ? 1 : 0);
    return *this;
  }
  // A node named `name` (PyTorch-style "/scope/Op" names matter for the IR names).
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  Graph load() const {
    std::string bytes;
    m_.SerializeToString(&bytes);
    return load_onnx_bytes(bytes.data(), bytes.size(), "test.onnx");
  }
  // The loader's error message, or "" when the graph loads.
  std::string refusal() const {
    try {
      (void)load();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

 private:
  onnx::ModelProto m_;
};

// Values in [-4, 4] that differ along every axis.
inline std::vector<float> wavy(int64_t n, double phase = 0.0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(4.0 * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

inline int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// The outputs of `g`, each in its dtype, for `batch` samples of input `x` (one input), engine `kind`.
inline ModelOutputs run_outputs(const Graph& g, EngineKind kind, int64_t batch, const std::vector<float>& x) {
  EngineOptions o;
  o.engine = kind;
  auto engine = make_engine(g, o);
  ModelOutputs out = allocate_outputs(g, batch);
  const InputView in{DType::kFloat32, x.data()};
  engine->run(batch, std::span<const InputView>(&in, 1), out.views());
  return out;
}

// Output k of a graph of float32 outputs, as run_outputs runs it.
inline std::vector<std::vector<float>> run_batch(const Graph& g, EngineKind kind, int64_t batch, const std::vector<float>& x) {
  return run_outputs(g, kind, batch, x).buffers;
}

// Runs `g` on one input of `batch` samples (wavy values) in the reference engine and the JIT (where
// the build has one: engines_here()), and
// checks output k against want(k, input) within 1e-5 * max(1, |want|).
inline void expect_outputs(const Graph& g, int64_t batch,
                           const std::function<std::vector<float>(size_t, const std::vector<float>&)>& want) {
  ASSERT_EQ(g.inputs.size(), 1u);
  const std::vector<float> x = wavy(batch * count_of(g.values[static_cast<size_t>(g.inputs[0])].shape));
  for (EngineKind kind : test::engines_here(g)) {
    const std::vector<std::vector<float>> out = run_batch(g, kind, batch, x);
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const std::vector<float> w = want(k, x);
      ASSERT_EQ(w.size(), out[k].size()) << "output " << k;
      for (size_t i = 0; i < w.size(); ++i) {
        ASSERT_NEAR(out[k][i], w[i], 1e-5 * std::max(1.0f, std::fabs(w[i])))
            << (kind == EngineKind::kJit ? "jit" : "reference") << " output " << k << " at " << i;
      }
    }
  }
}

// Three different samples in one run give, sample by sample, what each gives alone (bit for bit,
// on every engine here).
inline void expect_batch_is_samples(const Graph& g) {
  ASSERT_EQ(g.inputs.size(), 1u);
  const int64_t per = count_of(g.values[static_cast<size_t>(g.inputs[0])].shape);
  const std::vector<float> x3 = wavy(3 * per, 0.4);
  for (EngineKind kind : engines_here(g)) {
    const auto all = run_batch(g, kind, 3, x3);
    for (int64_t s = 0; s < 3; ++s) {
      const std::vector<float> one(x3.begin() + s * per, x3.begin() + (s + 1) * per);
      const auto alone = run_batch(g, kind, 1, one);
      for (size_t k = 0; k < alone.size(); ++k) {
        ASSERT_EQ(all[k].size(), 3 * alone[k].size());
        for (size_t i = 0; i < alone[k].size(); ++i) {
          ASSERT_EQ(all[k][static_cast<size_t>(s) * alone[k].size() + i], alone[k][i])
              << (kind == EngineKind::kJit ? "jit" : "reference") << " output " << k << " sample " << s << " at " << i;
        }
      }
    }
  }
}

}  // namespace nnd::test
