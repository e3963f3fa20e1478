// Nested models (a Functional or Sequential model used as a layer) flattened by the Keras model
// builder, through load_keras_json (zero-filled weights): names, shared calls, node indices per
// Keras version, multi-input/-output models, stale input shapes, and every rejection naming the
// file, the outer and the inner layer. Weight layouts are covered by the fixtures (three
// containers) and tests/data/broken{,_keras}.
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

// One call of layer `name` on (layer, node, tensor) triples.
json k2_layer(const std::string& cls, const std::string& name, const json& refs, json cfg = json::object()) {
  json node = json::array();
  for (const json& r : refs) node.push_back(json::array({r[0], r[1], r[2], json::object()}));
  cfg["name"] = name;
  return {{"class_name", cls}, {"name", name}, {"config", cfg}, {"inbound_nodes", json::array({node})}};
}

json tref(const std::string& layer, int node = 0, int tensor = 0) { return json::array({layer, node, tensor}); }

json dense(const std::string& name, const json& input, int units = 3) {
  return k2_layer("Dense", name, json::array({input}), {{"units", units}, {"activation", "linear"}});
}

json functional(const std::string& name, json layers, json inputs, json outputs) {
  return {{"class_name", "Functional"},
          {"config", {{"name", name}, {"layers", layers}, {"input_layers", inputs}, {"output_layers", outputs}}}};
}

// `model` (a functional() value) as a layer, called once per entry of `calls` (lists of refs).
json as_layer(json model, const std::string& name, const json& calls) {
  json nodes = json::array();
  for (const json& call : calls) {
    json node = json::array();
    for (const json& r : call) node.push_back(json::array({r[0], r[1], r[2], json::object()}));
    nodes.push_back(node);
  }
  model["name"] = name;
  model["config"]["name"] = name;
  model["inbound_nodes"] = nodes;
  return model;
}

// input (4) -> Dense(3) -> Dense(2): the usual inner model.
json inner_model() {
  return functional("inner",
                    json::array({k2_input("inner_in", {4}), dense("d1", tref("inner_in")), dense("d2", tref("d1"), 2)}),
                    json::array({tref("inner_in")}), json::array({tref("d2")}));
}

Graph load(const json& m, const std::string& version = "2.6.0") {
  return load_keras_json(m.dump(), version, "test.json");
}

std::string error_of(const json& m, const std::string& version = "2.6.0") {
  try {
    load(m, version);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const Value& value(const Graph& g, ValueId id) { return g.values[static_cast<size_t>(id)]; }

TEST(KerasNested, InlinedWithPrefixedNamesAndFirstCallAtNode1) {
  json m = functional("outer",
                      json::array({k2_input("x", {4}), as_layer(inner_model(), "enc", json::array({json::array({tref("x")})})),
                                   dense("head", tref("enc", 1), 5)}),
                      json::array({tref("x")}), json::array({tref("head")}));
  Graph g = load(m);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "enc/d1");
  EXPECT_EQ(g.nodes[1].name, "enc/d2");
  EXPECT_EQ(g.nodes[2].name, "head");
  EXPECT_EQ(g.nodes[0].inputs, std::vector<ValueId>{g.inputs[0]});  // the inner input is bound to x
  EXPECT_EQ(value(g, g.outputs[0]).shape, (Dims{5}));
}

TEST(KerasNested, SharedModelIsInlinedPerCallAndItsOutputsKeepTheOuterName) {
  json m = functional("outer",
                      json::array({k2_input("a", {4}), k2_input("b", {4}),
                                   as_layer(inner_model(), "enc", json::array({json::array({tref("a")}), json::array({tref("b")})}))}),
                      json::array({tref("a"), tref("b")}), json::array({tref("enc", 1), tref("enc", 2)}));
  Graph g = load(m);
  ASSERT_EQ(g.nodes.size(), 4u);  // d1, d2 for each call
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"enc", "enc:1"}));
  EXPECT_EQ(value(g, g.outputs[0]).name, "enc/d2");
  EXPECT_EQ(value(g, g.outputs[1]).name, "enc/d2:1");
  EXPECT_EQ(g.nodes[0].name, "enc/d1");  // one layer, two calls: one set of weights
  EXPECT_EQ(g.nodes[1].name, "enc/d1");
}

TEST(KerasNested, NodeIndicesPerKerasVersion) {
  // A Keras 3 Sequential model is no Functional: its first call is node 0; Keras 2 counts the
  // construction node of a Sequential model built from an input shape.
  json seq = {{"class_name", "Sequential"},
              {"config", {{"name", "s"}, {"layers", json::array({k2_input("s_in", {4}), {{"class_name", "Dense"}, {"config", {{"name", "sd"}, {"units", 2}}}}})}}}};
  auto outer = [&](int node) {
    json s = seq;
    s["name"] = "s";
    s["inbound_nodes"] = json::array({json::array({json::array({"x", 0, 0, json::object()})})});
    return functional("outer", json::array({k2_input("x", {4}), s}), json::array({tref("x")}), json::array({tref("s", node)}));
  };
  EXPECT_NO_THROW(load(outer(1), "2.6.0"));
  EXPECT_NE(error_of(outer(0), "2.6.0").find("nested model 's' has no call (node) 0"), std::string::npos);
  EXPECT_NO_THROW(load(outer(0), "3.4.1"));
  EXPECT_NE(error_of(outer(1), "3.4.1").find("nested model 's' has no call (node) 1"), std::string::npos);
  // Without an input shape (built when first called) it is node 0 in Keras 2 as well.
  json lazy = outer(0);
  lazy["config"]["layers"][1]["config"]["layers"].erase(0);
  EXPECT_NO_THROW(load(lazy, "2.6.0"));
}

TEST(KerasNested, StaleInputShapeOfTheInnerModelIsIgnored) {
  json inner = inner_model();
  inner["config"]["layers"][0]["config"]["batch_input_shape"] = json::array({nullptr, 3, 8, 8, 2});
  json seq = {{"class_name", "Sequential"},
              {"config", {{"name", "s"},
                          {"layers", json::array({{{"class_name", "Dense"},
                                                   {"config", {{"name", "sd"}, {"units", 2}, {"batch_input_shape", json::array({nullptr, 7, 7, 7, 7})}}}}})}}},
              {"name", "s"},
              {"inbound_nodes", json::array({json::array({json::array({"enc", 1, 0, json::object()})})})}};
  json m = functional("outer", json::array({k2_input("x", {4}), as_layer(inner, "enc", json::array({json::array({tref("x")})})), seq}),
                      json::array({tref("x")}), json::array({tref("s", 1)}));
  Graph g = load(m);
  EXPECT_EQ(value(g, g.outputs[0]).shape, (Dims{2}));
}

TEST(KerasNested, MultiInputMultiOutput) {
  json twin = functional("twin",
                         json::array({k2_input("u", {4}), k2_input("v", {2}),
                                      k2_layer("Concatenate", "cat", json::array({tref("u"), tref("v")})),
                                      dense("o1", tref("cat"), 3), dense("o2", tref("cat"), 5)}),
                         json::array({tref("u"), tref("v")}), json::array({tref("o1"), tref("o2")}));
  json m = functional("outer",
                      json::array({k2_input("a", {4}), k2_input("b", {2}),
                                   as_layer(twin, "twin", json::array({json::array({tref("a"), tref("b")})}))}),
                      json::array({tref("a"), tref("b")}), json::array({tref("twin", 1, 1), tref("twin", 1, 0)}));
  Graph g = load(m);
  EXPECT_EQ(value(g, g.outputs[0]).shape, (Dims{5}));
  EXPECT_EQ(value(g, g.outputs[1]).shape, (Dims{3}));
  EXPECT_EQ(g.output_names, (std::vector<std::string>{"twin", "twin:1"}));
  m["config"]["output_layers"][0] = tref("twin", 1, 2);
  EXPECT_NE(error_of(m).find("output 2 of nested model 'twin' does not exist (it has 2)"), std::string::npos);
}

TEST(KerasNested, BadNestingNamesFileOuterAndInnerLayer) {
  auto outer_with = [](json inner, const json& call) {
    return functional("outer", json::array({k2_input("x", {4}), as_layer(std::move(inner), "enc", json::array({call}))}),
                      json::array({tref("x")}), json::array({tref("enc", 1)}));
  };
  // An inner layer refers to a layer the nested model does not have.
  json inner = inner_model();
  inner["config"]["layers"][2]["inbound_nodes"][0][0][0] = "nowhere";
  std::string e = error_of(outer_with(inner, json::array({tref("x")})));
  EXPECT_NE(e.find("test.json: layer 'enc/d2' (Dense): inbound_nodes: inbound layer 'nowhere' does not exist in "
                   "nested model 'enc'"),
            std::string::npos)
      << e;
  // Called on two tensors, but it has one input.
  e = error_of(outer_with(inner_model(), json::array({tref("x"), tref("x")})));
  EXPECT_NE(e.find("test.json: layer 'enc' (Functional): inbound_nodes: called on 2 input(s); the nested model has 1"),
            std::string::npos)
      << e;
  // An unknown layer class inside: the flattened name says where.
  inner = inner_model();
  inner["config"]["layers"][1]["class_name"] = "NoSuchLayer";
  e = error_of(outer_with(inner, json::array({tref("x")})));
  EXPECT_NE(e.find("test.json: layer 'enc/d1' (NoSuchLayer)"), std::string::npos) << e;
  // A broken inner config: the message names the nested model.
  inner = inner_model();
  inner["config"].erase("output_layers");
  e = error_of(outer_with(inner, json::array({tref("x")})));
  EXPECT_NE(e.find("test.json: layer 'enc' (Functional): output_layers: missing"), std::string::npos) << e;
  // The nested model called on its own output.
  json cyc = functional("outer", json::array({k2_input("x", {4}), as_layer(inner_model(), "enc", json::array({json::array({tref("enc", 1)})}))}),
                        json::array({tref("x")}), json::array({tref("enc", 1)}));
  e = error_of(cyc);
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
}

// `depth` Functional models, each holding the next; the innermost holds one Dense.
json nest(int depth) {
  json m = inner_model();
  for (int i = 0; i < depth; ++i) {
    // Names built with append: GCC 12 warns (-Wrestrict, falsely) on `std::string + "..."` here.
    std::string name = "m", in, call;
    name.append(std::to_string(i));
    in.append(name).append("_in");
    call.append(name).append("_x");
    m = functional(name, json::array({k2_input(in, {4}), as_layer(m, call, json::array({json::array({tref(in)})}))}),
                   json::array({tref(in)}), json::array({tref(call, 1)}));
  }
  return m;
}

TEST(KerasNested, DepthIsBounded) {
  // nest(n) is a model with n levels of nested models below it (the innermost is inner_model()).
  Graph g = load(nest(8));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "m7_x/m6_x/m5_x/m4_x/m3_x/m2_x/m1_x/m0_x/d1");
  const std::string e = error_of(nest(9));
  EXPECT_NE(e.find("nested models deeper than 8 levels are not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("test.json: layer '"), std::string::npos) << e;
}

}  // namespace
}  // namespace nnd
