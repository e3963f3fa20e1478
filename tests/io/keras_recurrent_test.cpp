// Keras LSTM, GRU, SimpleRNN and Bidirectional loaded from their configs (load_keras_json, zero
// weights shaped from the config): the IR layer they map onto, the weight shapes Keras stores
// (GRU's two bias rows split into the IR's input and recurrent bias), the roles .h5 weight names
// play, and every refused form by name. Their numbers are checked against tfjs and the float64
// formulas by the recurrent fixtures (tests/data/fixtures: lstm_*, gru_*, simple_rnn_*, bidir_*).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/keras_hdf5.h"
#include "core/io/keras_layers.h"
#include "core/util/error.h"
#include "tests/support/keras_config_json.h"

namespace nnd {
namespace {

using json = nlohmann::json;

Graph load(const std::string& cls, const json& cfg, const std::vector<int64_t>& shape) {
  return load_keras_json(test::k3_one_layer_model(cls, cfg, shape), "3.4.1", "rnn.json");
}

const RecurrentParams& recurrent_of(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (const auto* p = std::get_if<RecurrentParams>(&n.params)) return *p;
  }
  throw Error(ErrorCode::kInternal, "no recurrent node");
}

const Dims& output_shape(const Graph& g) { return g.values[static_cast<size_t>(g.outputs[0])].shape; }

std::string error_of(const std::string& cls, const json& cfg, const std::vector<int64_t>& shape = {5, 3}) {
  try {
    load(cls, cfg, shape);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

json lstm(int units, bool sequences = false) {
  return {{"units", units}, {"return_sequences", sequences}, {"activation", "tanh"}, {"recurrent_activation", "sigmoid"}};
}

TEST(KerasRecurrent, LstmGruAndSimpleRnnMapOntoOneLayer) {
  {
    const Graph g = load("LSTM", lstm(4, true), {5, 3});
    const RecurrentParams& p = recurrent_of(g);
    EXPECT_EQ(p.cell, RecurrentCell::kLstm);
    EXPECT_EQ(p.output, RecurrentOutput::kSequence);
    EXPECT_EQ(p.direction, RecurrentDirection::kForward);
    EXPECT_EQ(p.directions.at(0).kernel.shape, (Dims{3, 16}));
    EXPECT_EQ(p.directions.at(0).recurrent_kernel.shape, (Dims{4, 16}));
    EXPECT_EQ(p.directions.at(0).bias.shape, (Dims{16}));
    EXPECT_EQ(output_shape(g), (Dims{5, 4}));
  }
  {
    // GRU with reset_after (the default) stores (2, 3 * units): input bias, recurrent bias.
    const Graph g = load("GRU", {{"units", 6}}, {7, 2});
    const RecurrentParams& p = recurrent_of(g);
    EXPECT_EQ(p.cell, RecurrentCell::kGru);
    EXPECT_TRUE(p.reset_after);
    EXPECT_EQ(p.output, RecurrentOutput::kLastHidden);
    EXPECT_EQ(p.directions.at(0).bias.shape, (Dims{18}));
    EXPECT_EQ(p.directions.at(0).recurrent_bias.shape, (Dims{18}));
    EXPECT_EQ(output_shape(g), (Dims{6}));
  }
  {
    const Graph g = load("GRU", {{"units", 2}, {"reset_after", false}, {"use_bias", false}}, {4, 3});
    const RecurrentParams& p = recurrent_of(g);
    EXPECT_FALSE(p.reset_after);
    EXPECT_TRUE(p.directions.at(0).bias.empty());
    EXPECT_TRUE(p.directions.at(0).recurrent_bias.empty());
  }
  {
    const Graph g = load("SimpleRNN", {{"units", 3}, {"activation", "relu"}, {"go_backwards", true}}, {4, 2});
    const RecurrentParams& p = recurrent_of(g);
    EXPECT_EQ(p.cell, RecurrentCell::kSimple);
    EXPECT_EQ(p.activation, ActivationKind::kRelu);
    EXPECT_EQ(p.direction, RecurrentDirection::kReverse);
    EXPECT_EQ(output_shape(g), (Dims{3}));
  }
}

TEST(KerasRecurrent, BidirectionalMergeModes) {
  const json inner = {{"class_name", "LSTM"}, {"config", lstm(4, true)}};
  const Graph concat = load("Bidirectional", {{"layer", inner}, {"merge_mode", "concat"}}, {5, 3});
  EXPECT_EQ(recurrent_of(concat).direction, RecurrentDirection::kBidirectional);
  EXPECT_EQ(recurrent_of(concat).directions.size(), 2U);
  EXPECT_EQ(output_shape(concat), (Dims{5, 8}));
  for (const auto& [mode, merge] : {std::pair{"sum", RecurrentMerge::kSum}, std::pair{"mul", RecurrentMerge::kMultiply},
                                    std::pair{"ave", RecurrentMerge::kAverage}}) {
    const Graph g = load("Bidirectional", {{"layer", inner}, {"merge_mode", mode}}, {5, 3});
    EXPECT_EQ(recurrent_of(g).merge, merge) << mode;
    EXPECT_EQ(output_shape(g), (Dims{5, 4})) << mode;
  }
  // Keras 3 writes the backward copy too, with go_backwards set.
  json backward = lstm(4, true);
  backward["go_backwards"] = true;
  const Graph k3 = load("Bidirectional",
                        {{"layer", inner}, {"merge_mode", "concat"}, {"backward_layer", {{"class_name", "LSTM"}, {"config", backward}}}},
                        {5, 3});
  EXPECT_EQ(output_shape(k3), (Dims{5, 8}));
}

TEST(KerasRecurrent, WeightRolesOfBidirectionalNames) {
  const keras::LayerCtx ctx{"rnn.json: layer 'b' (Bidirectional)", keras::Version::kKeras2};
  const json cfg = {{"layer", {{"class_name", "GRU"}, {"config", {{"units", 2}}}}}, {"merge_mode", "concat"}};
  const keras::MappedLayer m = keras::map_layer("Bidirectional", cfg, nullptr, ctx);
  EXPECT_EQ(keras::weight_role("bidirectional/forward_gru/gru_cell_1/kernel:0", m), "forward/kernel");
  EXPECT_EQ(keras::weight_role("bidirectional/backward_gru/gru_cell/bias", m), "backward/bias");
  EXPECT_EQ(keras::weight_role("model/bidirectional/backward_gru/gru_cell/recurrent_kernel:0", m),
            "backward/recurrent_kernel");
  // Keras 3 archives keep each direction's variables in its cell.
  EXPECT_EQ(m.weights.at(0).archive_group, "forward_layer/cell/vars");
  EXPECT_EQ(m.weights.at(3).archive_group, "backward_layer/cell/vars");
  const keras::MappedLayer plain = keras::map_layer("LSTM", lstm(2), nullptr, ctx);
  EXPECT_EQ(keras::weight_role("lstm/lstm_cell/kernel:0", plain), "kernel");
  EXPECT_EQ(plain.weights.at(0).archive_group, "cell/vars");
}

TEST(KerasRecurrent, RefusedFormsAreNamed) {
  auto expect_refused = [](const std::string& cls, const json& cfg, const std::string& part) {
    const std::string e = error_of(cls, cfg);
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  json c = lstm(4);
  c["stateful"] = true;
  expect_refused("LSTM", c, "stateful: true is not supported");
  c = lstm(4);
  c["time_major"] = true;
  expect_refused("LSTM", c, "time_major: true is not supported");
  c = lstm(4, true);
  c["go_backwards"] = true;
  expect_refused("LSTM", c, "go_backwards: with return_sequences the output runs backward in time");
  expect_refused("GRU", {{"units", 0}}, "units");
  expect_refused("LSTM", {{"units", int64_t{1} << 62}}, "units: 4611686018427387904 exceeds the limit");
  expect_refused("LSTM", {{"units", 3}, {"recurrent_activation", "gelu_approx"}}, "recurrent_activation: activation 'gelu_approx'");

  const json inner = {{"class_name", "LSTM"}, {"config", lstm(4)}};
  expect_refused("Bidirectional", {{"layer", inner}, {"merge_mode", nullptr}}, "merge_mode: None returns the two directions");
  expect_refused("Bidirectional", {{"layer", inner}, {"merge_mode", "max"}}, "merge_mode: \"max\" is not");
  expect_refused("Bidirectional", {{"layer", {{"class_name", "Dense"}, {"config", {{"units", 2}}}}}, {"merge_mode", "concat"}},
                 "layer: wraps a Dense");
  expect_refused("Bidirectional", {{"merge_mode", "concat"}}, "layer: missing");
  json back = lstm(5);
  back["go_backwards"] = true;
  expect_refused("Bidirectional",
                 {{"layer", inner}, {"merge_mode", "concat"}, {"backward_layer", {{"class_name", "LSTM"}, {"config", back}}}},
                 "backward_layer: differs from the forward layer");
  expect_refused("Bidirectional",
                 {{"layer", inner}, {"merge_mode", "concat"}, {"backward_layer", {{"class_name", "LSTM"}, {"config", lstm(4)}}}},
                 "backward_layer: must have go_backwards=True");
  json fw_back = lstm(4);
  fw_back["go_backwards"] = true;
  expect_refused("Bidirectional", {{"layer", {{"class_name", "LSTM"}, {"config", fw_back}}}, {"merge_mode", "concat"}},
                 "layer: the forward layer has go_backwards=True");
  // A recurrent layer reads {steps, features} per sample.
  const std::string e = error_of("LSTM", lstm(2), {4, 4, 3});
  EXPECT_NE(e.find("{steps, features}"), std::string::npos) << e;
}

}  // namespace
}  // namespace nnd
