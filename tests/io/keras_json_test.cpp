// The JSON -> graph mapping through load_keras_json (zero-filled weights): model dialects,
// activation names per Keras version, every layer kind, TFOpLambda, and rejections.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/keras_hdf5.h"
#include "core/util/error.h"
#include "tests/support/keras_config_json.h"

namespace nnd {
namespace {

using json = nlohmann::json;

using test::k2_input;

json k2_layer(const std::string& cls, const std::string& name, std::vector<std::string> inputs,
              json cfg = json::object()) {
  json refs = json::array();
  for (const auto& i : inputs) refs.push_back(json::array({i, 0, 0, json::object()}));
  cfg["name"] = name;
  return {{"class_name", cls}, {"name", name}, {"config", cfg}, {"inbound_nodes", json::array({refs})}};
}

// input (shape) -> layer(cls, cfg) -> output
std::string one_layer(const std::string& cls, json cfg, std::vector<int64_t> shape) {
  json m = {{"class_name", "Functional"},
            {"config",
             {{"name", "m"},
              {"layers", json::array({k2_input("input", shape), k2_layer(cls, "l", {"input"}, cfg)})},
              {"input_layers", json::array({json::array({"input", 0, 0})})},
              {"output_layers", json::array({json::array({"l", 0, 0})})}}}};
  return m.dump();
}

Graph load(const std::string& text, const std::string& version = "2.6.0") {
  return load_keras_json(text, version, "test.json");
}

std::string error_of(const std::string& text, const std::string& version = "2.6.0") {
  try {
    load(text, version);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const Dims& out_shape(const Graph& g, size_t i = 0) { return g.values[static_cast<size_t>(g.outputs[i])].shape; }

ActivationKind act_of(const std::string& name, const std::string& version) {
  Graph g = load(one_layer("Activation", {{"activation", name}}, {4}), version);
  return std::get<ActivationParams>(g.nodes.at(0).params).activation;
}

TEST(KerasJson, ActivationStringsPerVersion) {
  EXPECT_EQ(act_of("hard_sigmoid", "2.6.0"), ActivationKind::kHardSigmoidK2);
  EXPECT_EQ(act_of("hard_sigmoid", "2.2.4-tf"), ActivationKind::kHardSigmoidK2);
  EXPECT_EQ(act_of("hard_sigmoid", "3.4.1"), ActivationKind::kHardSigmoidK3);
  EXPECT_EQ(act_of("gelu", "2.15.0"), ActivationKind::kGeluErf);
  EXPECT_EQ(act_of("gelu", "3.8.0"), ActivationKind::kGeluErf);  // keras.activations.gelu(approximate=False)
  EXPECT_EQ(act_of("silu", "3.4.1"), ActivationKind::kSwish);
  EXPECT_EQ(act_of("swish", "2.6.0"), ActivationKind::kSwish);
  EXPECT_EQ(act_of("hard_silu", "3.4.1"), ActivationKind::kHardSwish);
  EXPECT_EQ(act_of("hard_swish", "3.4.1"), ActivationKind::kHardSwish);
  EXPECT_EQ(act_of("relu6", "3.4.1"), ActivationKind::kRelu6);
  EXPECT_EQ(act_of("leaky_relu", "3.4.1"), ActivationKind::kLeakyRelu);
  EXPECT_EQ(act_of("elu", "2.6.0"), ActivationKind::kElu);
  EXPECT_EQ(act_of("selu", "2.6.0"), ActivationKind::kSelu);
  EXPECT_EQ(act_of("softplus", "2.6.0"), ActivationKind::kSoftplus);
  EXPECT_EQ(act_of("softsign", "2.6.0"), ActivationKind::kSoftsign);
  EXPECT_EQ(act_of("exponential", "2.6.0"), ActivationKind::kExponential);
  EXPECT_EQ(act_of("mish", "2.15.0"), ActivationKind::kMish);
  EXPECT_EQ(act_of("log_softmax", "3.4.1"), ActivationKind::kLogSoftmax);
  EXPECT_EQ(act_of("linear", "2.6.0"), ActivationKind::kLinear);
  EXPECT_EQ(act_of("softmax", "2.6.0"), ActivationKind::kSoftmax);
  EXPECT_EQ(act_of("tanh", "2.6.0"), ActivationKind::kTanh);
  EXPECT_EQ(act_of("sigmoid", "2.6.0"), ActivationKind::kSigmoid);
  // Keras 3 may serialize a built-in function as an object.
  Graph g = load(one_layer("Activation",
                           {{"activation",
                             {{"module", "keras.activations"}, {"class_name", "function"}, {"config", "relu"},
                              {"registered_name", "function"}}}},
                           {4}),
                 "3.4.1");
  EXPECT_EQ(std::get<ActivationParams>(g.nodes[0].params).activation, ActivationKind::kRelu);
  EXPECT_NE(error_of(one_layer("Activation", {{"activation", "crelu"}}, {4})).find(
                "test.json: layer 'l' (Activation): activation: activation 'crelu' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(one_layer("Dense", {{"units", 2}, {"activation", {{"class_name", "LeakyReLU"}, {"config", json::object()}}}}, {4}))
                .find("layer 'l' (Dense): activation: activation object"),
            std::string::npos);
}

TEST(KerasJson, DenseZeroWeightsAndShapes) {
  Graph g = load(one_layer("Dense", {{"units", 5}, {"activation", "relu"}, {"use_bias", true}}, {3, 7}));
  const auto& d = std::get<DenseParams>(g.nodes[0].params);
  EXPECT_EQ(d.kernel.shape, (Dims{7, 5}));
  EXPECT_EQ(d.kernel.data.size(), 35u);
  EXPECT_EQ(d.bias.shape, (Dims{5}));
  EXPECT_EQ(d.activation, ActivationKind::kRelu);
  EXPECT_EQ(out_shape(g), (Dims{3, 5}));
  Graph nb = load(one_layer("Dense", {{"units", 5}, {"use_bias", false}}, {7}));
  EXPECT_TRUE(std::get<DenseParams>(nb.nodes[0].params).bias.empty());
}

TEST(KerasJson, ConvolutionFamily) {
  json conv = {{"filters", 6}, {"kernel_size", {3, 2}}, {"strides", {2, 1}}, {"padding", "same"},
               {"data_format", "channels_last"}, {"dilation_rate", {1, 1}}, {"groups", 2},
               {"activation", "linear"}, {"use_bias", true}};
  Graph g = load(one_layer("Conv2D", conv, {9, 8, 4}));
  const auto& c = std::get<ConvParams>(g.nodes[0].params);
  EXPECT_EQ(c.kernel.shape, (Dims{3, 2, 2, 6}));
  EXPECT_EQ(c.window.padding, Padding::kSame);
  EXPECT_EQ(out_shape(g), (Dims{5, 8, 6}));

  Graph g1 = load(one_layer("Conv1D", {{"filters", 3}, {"kernel_size", {3}}, {"padding", "causal"},
                                       {"dilation_rate", {2}}}, {10, 2}));
  const auto& c1 = std::get<ConvParams>(g1.nodes[0].params);
  EXPECT_EQ(c1.rank, 1);
  EXPECT_EQ(c1.kernel.shape, (Dims{1, 3, 2, 3}));
  EXPECT_EQ(c1.window.padding, Padding::kCausal);
  EXPECT_EQ(out_shape(g1), (Dims{10, 3}));

  Graph dw = load(one_layer("DepthwiseConv2D", {{"kernel_size", {3, 3}}, {"depth_multiplier", 2},
                                                {"padding", "valid"}, {"use_bias", true}}, {5, 5, 3}));
  const auto& d = std::get<DepthwiseConvParams>(dw.nodes[0].params);
  EXPECT_EQ(d.kernel.shape, (Dims{3, 3, 3, 2}));
  EXPECT_EQ(d.bias.shape, (Dims{6}));
  EXPECT_EQ(out_shape(dw), (Dims{3, 3, 6}));

  Graph sep = load(one_layer("SeparableConv2D", {{"filters", 4}, {"kernel_size", {3, 3}}, {"depth_multiplier", 2},
                                                 {"padding", "same"}, {"use_bias", false}}, {5, 5, 3}));
  const auto& s = std::get<SeparableConvParams>(sep.nodes[0].params);
  EXPECT_EQ(s.depthwise_kernel.shape, (Dims{3, 3, 3, 2}));
  EXPECT_EQ(s.pointwise_kernel.shape, (Dims{1, 1, 6, 4}));
  EXPECT_TRUE(s.bias.empty());

  Graph tr = load(one_layer("Conv2DTranspose", {{"filters", 4}, {"kernel_size", {3, 3}}, {"strides", {2, 2}},
                                                {"padding", "same"}, {"output_padding", nullptr}}, {4, 5, 3}));
  const auto& t = std::get<ConvTransposeParams>(tr.nodes[0].params);
  EXPECT_EQ(t.kernel.shape, (Dims{3, 3, 4, 3}));
  EXPECT_EQ(out_shape(tr), (Dims{8, 10, 4}));

  EXPECT_NE(error_of(one_layer("Conv2DTranspose", {{"filters", 4}, {"kernel_size", {3, 3}}, {"strides", {2, 2}},
                                                   {"output_padding", {2, 2}}}, {4, 5, 3}))
                .find("output_padding: must be smaller than the stride"),
            std::string::npos);
  EXPECT_NE(error_of(one_layer("Conv2D", {{"filters", 4}, {"kernel_size", {3, 3}}, {"groups", 2}}, {5, 5, 3}))
                .find("layer 'l' (Conv2D): groups: 2 does not divide the input channels 3"),
            std::string::npos);
  EXPECT_NE(error_of(one_layer("Conv2D", {{"filters", 4}, {"kernel_size", {3, 3}}, {"padding", "causal"}}, {5, 5, 3}))
                .find("padding: 'causal' is not supported"),
            std::string::npos);
}

TEST(KerasJson, NormalisationAndActivationLayers) {
  Graph bn = load(one_layer("BatchNormalization", {{"axis", {3}}, {"epsilon", 0.01}, {"center", false}}, {4, 4, 5}));
  const auto& b = std::get<BatchNormParams>(bn.nodes[0].params);
  EXPECT_EQ(b.gamma.shape, (Dims{5}));
  EXPECT_EQ(b.beta.shape, (Dims{5}));
  EXPECT_EQ(b.axis, 2);
  EXPECT_DOUBLE_EQ(b.epsilon, 0.01);

  Graph ln = load(one_layer("LayerNormalization", {{"axis", {-2, -1}}, {"epsilon", 1e-5}}, {3, 4, 5}), "3.4.1");
  const auto& l = std::get<LayerNormParams>(ln.nodes[0].params);
  EXPECT_EQ(l.axes, (std::vector<int>{1, 2}));
  EXPECT_EQ(l.gamma.data.size(), 20u);

  Graph relu = load(one_layer("ReLU", {{"max_value", 6.0}, {"negative_slope", 0.1}, {"threshold", 0.5}}, {4}));
  const auto& r = std::get<ReluParams>(relu.nodes[0].params);
  EXPECT_DOUBLE_EQ(r.max_value, 6.0);
  EXPECT_DOUBLE_EQ(r.negative_slope, 0.1);
  EXPECT_DOUBLE_EQ(r.threshold, 0.5);

  EXPECT_DOUBLE_EQ(std::get<ReluParams>(load(one_layer("LeakyReLU", {{"alpha", 0.25}}, {4})).nodes[0].params).negative_slope, 0.25);
  EXPECT_DOUBLE_EQ(std::get<ReluParams>(load(one_layer("LeakyReLU", {{"negative_slope", 0.05}}, {4}), "3.4.1").nodes[0].params).negative_slope, 0.05);
  EXPECT_DOUBLE_EQ(std::get<ReluParams>(load(one_layer("LeakyReLU", json::object(), {4})).nodes[0].params).negative_slope, 0.3);

  Graph pr = load(one_layer("PReLU", {{"shared_axes", {1, 2}}}, {4, 5, 3}));
  EXPECT_EQ(std::get<PReluParams>(pr.nodes[0].params).alpha.shape, (Dims{1, 1, 3}));
  EXPECT_DOUBLE_EQ(std::get<EluParams>(load(one_layer("ELU", {{"alpha", 0.5}}, {4})).nodes[0].params).alpha, 0.5);
  EXPECT_DOUBLE_EQ(std::get<ThresholdedReluParams>(load(one_layer("ThresholdedReLU", {{"theta", 2.0}}, {4})).nodes[0].params).theta, 2.0);
  Graph sm = load(one_layer("Softmax", {{"axis", 1}}, {4, 3}));
  EXPECT_EQ(std::get<SoftmaxParams>(sm.nodes[0].params).axis, 0);
}

TEST(KerasJson, PoolingReshapingAndPadding) {
  Graph mp = load(one_layer("MaxPooling2D", {{"pool_size", {3, 3}}, {"strides", {2, 2}}, {"padding", "same"}}, {7, 8, 2}));
  EXPECT_EQ(out_shape(mp), (Dims{4, 4, 2}));
  Graph ap = load(one_layer("AveragePooling1D", {{"pool_size", {2}}, {"strides", nullptr}}, {7, 2}));
  EXPECT_EQ(out_shape(ap), (Dims{3, 2}));
  Graph gp = load(one_layer("GlobalAveragePooling2D", {{"keepdims", true}}, {7, 8, 2}));
  EXPECT_EQ(out_shape(gp), (Dims{1, 1, 2}));
  EXPECT_EQ(out_shape(load(one_layer("GlobalMaxPooling1D", json::object(), {7, 2}))), (Dims{2}));
  EXPECT_EQ(out_shape(load(one_layer("Flatten", json::object(), {3, 4, 2}))), (Dims{24}));
  EXPECT_EQ(out_shape(load(one_layer("Reshape", {{"target_shape", {-1, 4}}}, {3, 4, 2}))), (Dims{6, 4}));
  EXPECT_EQ(out_shape(load(one_layer("Permute", {{"dims", {2, 1}}}, {3, 4}))), (Dims{4, 3}));
  EXPECT_EQ(out_shape(load(one_layer("RepeatVector", {{"n", 3}}, {4}))), (Dims{3, 4}));
  EXPECT_EQ(out_shape(load(one_layer("ZeroPadding2D", {{"padding", {{1, 2}, {0, 3}}}}, {3, 4, 2}))), (Dims{6, 7, 2}));
  EXPECT_EQ(out_shape(load(one_layer("ZeroPadding2D", {{"padding", 1}}, {3, 4, 2}))), (Dims{5, 6, 2}));
  EXPECT_EQ(out_shape(load(one_layer("ZeroPadding1D", {{"padding", {1, 2}}}, {3, 2}))), (Dims{6, 2}));
  EXPECT_EQ(out_shape(load(one_layer("Cropping2D", {{"cropping", {{1, 0}, {1, 1}}}}, {3, 4, 2}))), (Dims{2, 2, 2}));
  EXPECT_EQ(out_shape(load(one_layer("Cropping1D", {{"cropping", {1, 1}}}, {5, 2}))), (Dims{3, 2}));
  EXPECT_EQ(out_shape(load(one_layer("UpSampling2D", {{"size", {2, 3}}, {"interpolation", "bilinear"}}, {3, 4, 2}))),
            (Dims{6, 12, 2}));
  EXPECT_EQ(out_shape(load(one_layer("UpSampling1D", {{"size", 2}}, {3, 2}))), (Dims{6, 2}));
  for (const char* id : {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "GaussianNoise", "GaussianDropout",
                         "AlphaDropout", "ActivityRegularization"}) {
    Graph g = load(one_layer(id, {{"rate", 0.5}}, {3, 4}));
    EXPECT_TRUE(std::holds_alternative<IdentityParams>(g.nodes[0].params)) << id;
  }
}

std::string k3_tensor_json(const std::string& layer, int node = 0) {
  return R"({"class_name": "__keras_tensor__", "config": {"shape": [null, 4], "dtype": "float32", "keras_history": [")" +
         layer + "\", " + std::to_string(node) + ", 0]}}";
}

TEST(KerasJson, Keras3SharedLayerAndMergeNesting) {
  const std::string text = R"({"module": "keras", "class_name": "Functional", "config": {"name": "f", "layers": [
    {"module": "keras.layers", "class_name": "InputLayer", "name": "x",
     "config": {"batch_shape": [null, 4], "dtype": "float32", "sparse": false, "name": "x"}, "inbound_nodes": []},
    {"module": "keras.layers", "class_name": "Dense", "name": "d",
     "config": {"name": "d", "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}},
                "units": 4, "activation": "gelu", "use_bias": true},
     "inbound_nodes": [{"args": [)" + k3_tensor_json("x") + R"(], "kwargs": {}},
                       {"args": [)" + k3_tensor_json("d") + R"(], "kwargs": {}}]},
    {"module": "keras.layers", "class_name": "Subtract", "name": "sub", "config": {"name": "sub"},
     "inbound_nodes": [{"args": [[)" + k3_tensor_json("d", 1) + ", " + k3_tensor_json("x") + R"(]], "kwargs": {}}]}],
    "input_layers": [["x", 0, 0]], "output_layers": [["sub", 0, 0], ["d", 1, 0]]}})";
  Graph g = load(text, "3.8.0");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.values[static_cast<size_t>(g.nodes[1].output)].name, "d:1");
  EXPECT_EQ(g.nodes[2].inputs.size(), 2u);
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"sub", "d"}));
  EXPECT_EQ(std::get<DenseParams>(g.nodes[0].params).activation, ActivationKind::kGeluErf);
  // Version guessed from the dialect when none is given.
  EXPECT_EQ(load_keras_json(text, "", "t").nodes.size(), 3u);
}

TEST(KerasJson, SequentialVariants) {
  // Keras 2.2: config is the layer list; the input is named "<first layer>_input".
  const std::string old = R"({"class_name": "Sequential", "config": [
    {"class_name": "Dense", "config": {"name": "dense_1", "batch_input_shape": [null, 3], "units": 2}},
    {"class_name": "Dropout", "config": {"name": "dropout_1", "rate": 0.5}}]})";
  Graph g = load(old, "2.2.4");
  EXPECT_EQ(g.input_names, std::vector<std::string>{"dense_1_input"});
  EXPECT_EQ(g.output_names, std::vector<std::string>{"dropout_1"});
  // Keras 3 without InputLayer, shape from build_input_shape.
  const std::string k3 = R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
    {"module": "keras.layers", "class_name": "Dense", "config": {"name": "dense", "units": 2}}],
    "build_input_shape": [null, 6]}})";
  Graph g3 = load(k3, "3.4.1");
  EXPECT_EQ(g3.input_names, std::vector<std::string>{"input_layer"});
  EXPECT_EQ(g3.values[static_cast<size_t>(g3.inputs[0])].shape, (Dims{6}));
  EXPECT_NE(error_of(R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}})")
                .find("no InputLayer"),
            std::string::npos);
}

TEST(KerasJson, TFOpLambdaTable) {
  auto tfop = [](const std::string& fn, json kwargs = {{"name", nullptr}}) {
    json m = {{"class_name", "Functional"},
              {"config",
               {{"layers", json::array({k2_input("x", {3, 4}),
                                        {{"class_name", "TFOpLambda"},
                                         {"name", "op"},
                                         {"config", {{"name", "op"}, {"function", fn}, {"dtype", "float32"}}},
                                         {"inbound_nodes", json::array({json::array({"x", 0, 0, kwargs})})}}})},
                {"input_layers", json::array({"x", 0, 0})},  // single triple
                {"output_layers", json::array({"op", 0, 0})}}}};
    return m.dump();
  };
  auto kind = [&](const std::string& fn, json kwargs = {{"name", nullptr}}) {
    Graph g = load(tfop(fn, kwargs));
    return std::get<ActivationParams>(g.nodes.at(0).params).activation;
  };
  EXPECT_EQ(kind("nn.relu"), ActivationKind::kRelu);
  EXPECT_EQ(kind("nn.relu6"), ActivationKind::kRelu6);
  EXPECT_EQ(kind("math.sigmoid"), ActivationKind::kSigmoid);
  EXPECT_EQ(kind("nn.sigmoid"), ActivationKind::kSigmoid);
  EXPECT_EQ(kind("math.tanh"), ActivationKind::kTanh);
  EXPECT_EQ(kind("nn.softmax"), ActivationKind::kSoftmax);
  EXPECT_EQ(kind("math.softmax", {{"axis", -1}, {"name", nullptr}}), ActivationKind::kSoftmax);
  EXPECT_EQ(kind("nn.elu"), ActivationKind::kElu);
  EXPECT_EQ(kind("nn.selu"), ActivationKind::kSelu);
  EXPECT_EQ(kind("math.softplus"), ActivationKind::kSoftplus);
  EXPECT_EQ(kind("nn.softsign"), ActivationKind::kSoftsign);
  EXPECT_EQ(kind("nn.silu"), ActivationKind::kSwish);
  EXPECT_EQ(kind("nn.swish"), ActivationKind::kSwish);
  EXPECT_EQ(kind("math.exp"), ActivationKind::kExponential);
  EXPECT_EQ(kind("nn.gelu"), ActivationKind::kGeluErf);
  EXPECT_EQ(kind("nn.gelu", {{"approximate", true}}), ActivationKind::kGeluTanh);
  Graph sm = load(tfop("nn.softmax", {{"axis", 1}}));
  EXPECT_EQ(std::get<SoftmaxParams>(sm.nodes[0].params).axis, 0);
  Graph lr = load(tfop("nn.leaky_relu", {{"alpha", 0.1}}));
  EXPECT_DOUBLE_EQ(std::get<ReluParams>(lr.nodes[0].params).negative_slope, 0.1);
  EXPECT_NE(error_of(tfop("math.reduce_sum")).find(
                "test.json: layer 'op' (TFOpLambda): function: TFOpLambda function 'math.reduce_sum' is not supported"),
            std::string::npos);
  EXPECT_NE(error_of(tfop("nn.relu", {{"foo", 3}})).find("argument 'foo'"), std::string::npos);
}

TEST(KerasJson, StructuralErrors) {
  EXPECT_NE(error_of("{").find("test.json: model_config: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("model_config: expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"class_name": "Foo", "config": {}})").find("class_name 'Foo'"), std::string::npos);
  // Deeply nested JSON is rejected, not recursed into.
  std::string deep(100000, '[');
  EXPECT_NE(error_of(deep).find("nested deeper"), std::string::npos);
  // Duplicate layer names.
  json m = {{"class_name", "Functional"},
            {"config",
             {{"layers", json::array({k2_input("x", {4}), k2_layer("Dense", "x", {"x"}, {{"units", 2}})})},
              {"input_layers", json::array({json::array({"x", 0, 0})})},
              {"output_layers", json::array({json::array({"x", 0, 0})})}}}};
  EXPECT_NE(error_of(m.dump()).find("two layers are named 'x'"), std::string::npos);
  // A merge layer called on the wrong number of inputs.
  json s = {{"class_name", "Functional"},
            {"config",
             {{"layers", json::array({k2_input("x", {4}), k2_layer("Subtract", "s", {"x"})})},
              {"input_layers", json::array({json::array({"x", 0, 0})})},
              {"output_layers", json::array({json::array({"s", 0, 0})})}}}};
  EXPECT_NE(error_of(s.dump()).find("layer 's' (Subtract): inbound_nodes: called on 1 input(s)"), std::string::npos);
  // Wrong JSON types in a config are reported with the field, not as a JSON library error.
  EXPECT_NE(error_of(one_layer("Dense", {{"units", "many"}}, {4})).find("layer 'l' (Dense): units: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of(one_layer("Conv2D", {{"filters", 2}, {"kernel_size", {3, 3, 3}}}, {5, 5, 1}))
                .find("kernel_size: expected an integer or a list of 2 integers"),
            std::string::npos);
}

// Random mutations of a valid config never crash: each either loads or throws nnd::Error.
TEST(KerasJson, MutatedConfigsNeverCrash) {
  const std::string base = one_layer("Conv2D", {{"filters", 3}, {"kernel_size", {3, 3}}, {"strides", {1, 2}},
                                                {"padding", "same"}, {"activation", "relu"}}, {6, 5, 2});
  uint64_t state = 88172645463325252ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet = "[]{}\",:0123456789-e.nulltruefalse";
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = base;
    int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = next() % t.size();
      switch (next() % 3) {
        case 0: t[pos] = alphabet[next() % alphabet.size()]; break;
        case 1: t.erase(pos, 1 + next() % 4); break;
        default: t.insert(pos, 1, alphabet[next() % alphabet.size()]); break;
      }
    }
    try {
      load(t);
      ++loaded;
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  SUCCEED() << loaded << " loaded, " << rejected << " rejected";
}

}  // namespace
}  // namespace nnd
