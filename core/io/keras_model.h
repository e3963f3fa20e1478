// Keras `model_config` JSON -> graph IR, private to core/io. Shared by the two Keras containers:
// `.h5` files (keras_hdf5.cpp: weights under /model_weights/<layer>, found by name) and `.keras`
// archives (keras_archive.cpp: weights under layers/<class>/vars/<i>, found by position). The
// container supplies the JSON text and a WeightReader; everything about the model structure
// (Sequential, Functional/Model in the Keras 2 and Keras 3 dialects) is decided here.
//
// Naming (see Value::name): the k-th call (k >= 1) of a shared layer produces value "<layer>:<k>",
// the first call "<layer>". A Sequential model without an InputLayer gets the input Keras itself
// would create: "<first layer>_input" for Keras 2 files, "input_layer" for Keras 3 files.
//
// Nested models (a Functional or Sequential model used as a layer) are flattened while the spec
// is built: each layer of the inner model becomes a layer "<outer>/<inner>" of the spec (deeper
// models add more levels), its InputLayers are bound to the outer call's arguments and references
// to the nested model's outputs lead to the inner layers that compute them. A nested model called
// k times is inlined k times as k calls of the same flattened layers, so they share one set of
// weights exactly as Keras' shared layers do. The containers find the weights through `scope`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/io/keras_layers.h"
#include "core/ir/graph.h"

namespace nnd::keras {

// [layer_name, node_index, tensor_index] of a call argument or a model input/output.
struct TensorRef {
  std::string layer;
  int64_t node = 0;
  int64_t tensor = 0;
};

inline const json& empty_json_object() {
  static const json kEmpty = json::object();
  return kEmpty;
}

// The spec points into the parsed model_config (alive for the whole build) instead of copying
// each layer's config and call arguments: the copies were a sizeable share of load time.

// One call of a layer (one entry of its `inbound_nodes`).
struct Call {
  std::vector<TensorRef> inputs;
  const json* kwargs = &empty_json_object();  // an object (possibly empty)
};

// One step of the path from the top-level model to a layer: the name and class of the layer (a
// nested model for all steps but the last) and where it sits in its model's layer list
// (ModelSpec::levels[level][index]).
struct ScopeStep {
  std::string name;
  std::string cls;
  size_t level = 0;
  size_t index = 0;
};

struct LayerEntry {
  std::string name;  // "<model>/.../<layer>" for a layer of a nested model
  std::string cls;
  const json* config = nullptr;  // an object
  std::unique_ptr<json> owned_config;  // the config of an InputLayer made up for a Sequential model
  std::vector<Call> calls;
  // The path to this layer: one step for a layer of the top-level model; for a layer of a nested
  // model the nested models it sits in first (scope[0] is the one the top-level model lists).
  std::vector<ScopeStep> scope;
};

// The model's layers in the order of the config's `layers` list (a Sequential model without an
// InputLayer gets one made up in front), and its inputs and outputs. After flattening, the layers
// of a nested model stand where the model stood in its parent's list.
struct ModelSpec {
  std::vector<LayerEntry> layers;
  std::vector<TensorRef> inputs, outputs;
  std::vector<std::string> output_names;  // the layer names the top-level model's outputs refer to
  // The class names of each model's layer list as the config writes it (levels[0]: the top-level
  // model; one entry per nested model), for containers that store weights by position in them.
  std::vector<std::vector<std::string>> levels;
};

// Supplies the weights of `spec.layers[layer]` as (role, tensor) pairs in file order. `expected`
// is what the layer's config implies (roles in Keras' variable order), for containers that store
// weights by position. Called once per layer that has weights; a null reader zero-fills them.
using WeightReader = std::function<std::vector<std::pair<std::string, Weights>>(
    const ModelSpec& spec, size_t layer, const MappedLayer& expected, const LayerCtx& ctx)>;

// Parses `config_text` (a model_config / config.json) and builds the graph, shapes inferred.
// `keras_version` ("2.6.0", "3.4.1"; empty: guessed from the JSON dialect) selects
// version-dependent meanings; `source` starts every message. Throws nnd::Error.
Graph build_graph(const std::string& config_text, const std::string& keras_version,
                  const std::string& source, const WeightReader& reader);

}  // namespace nnd::keras
