// Keras layer configs (JSON) -> typed IR parameters. Private to core/io.
//
// One function maps a layer's class name and `config` object onto LayerParams and lists the
// weights the layer must carry (by role: "kernel", "bias", "gamma", ...), with the dimensions the
// config implies. The loader then attaches weights read from the file (attach_weights) or, for
// the JSON-only entry point, zero-filled weights shaped from the input shapes (zero_weights).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ir/layers.h"
#include "core/ir/tensor.h"
#include "core/util/error.h"

namespace nnd::keras {

using json = nlohmann::json;

enum class Version { kKeras2, kKeras3 };

// "2.6.0", "2.2.4-tf", "3.4.1" -> major version (Keras 2 for anything not starting with "3").
Version version_from_string(const std::string& keras_version);

// Message context of one layer: `prefix` is "file.h5: layer 'name' (Class)" (Graph::node_context).
struct LayerCtx {
  std::string prefix;
  Version version = Version::kKeras2;

  // Throws nnd::Error "<prefix>: <field>: <msg>" with `code`; without one, kFormat (a malformed
  // or inconsistent config).
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const;
  [[noreturn]] void fail(ErrorCode code, const std::string& field, const std::string& msg) const;
};

// One weight the layer needs. `dims` is the shape Keras stores (-1 where it depends on the input
// shape); `prepend_one` marks 1-D convolution kernels the IR stores with a leading 1.
struct WeightSpec {
  std::string role;
  std::vector<int64_t> dims;
  bool prepend_one = false;
  std::string alias;  // another name the same weight has in some Keras version
  // A wrapper's weight belongs to one of its sub-layers: Bidirectional's "forward" or "backward"
  // layer. Its role is "<sublayer>/<weight>"; in a .h5 weight name the sub-layer shows as a path
  // component "<sublayer>_<layer name>" ("bidirectional/forward_lstm/lstm_cell/kernel:0").
  std::string sublayer;
  // Where a Keras 3 archive keeps the variable, below the layer's group: its own "vars", or a
  // tracked child's ("cell/vars" for a recurrent layer, "forward_layer/cell/vars").
  std::string archive_group = "vars";
  // Stored by Keras but not needed at inference (Normalization's int64 sample count): it must be
  // in the file, may be an integer, and is dropped after reading.
  bool unused = false;
};

struct MappedLayer {
  LayerParams params;
  std::vector<WeightSpec> weights;  // expected weights, in Keras' usual order
  int min_inputs = 1, max_inputs = 1;
  bool bn_center = true, bn_scale = true;     // BatchNormalization flags
  std::vector<int> prelu_shared_axes;         // PReLU, Keras 1-based axes
  // Set by layers whose IR form depends on their input shapes (preprocessing layers: per-channel
  // constants, crop offsets, resize factors). The model builder calls it once, with the shapes of
  // this call's inputs, before the layer is added; it throws nnd::Error like map_layer.
  std::function<void(MappedLayer&, const std::vector<Dims>& input_shapes)> complete_from_shapes;
};

// Maps a layer (class name and config) onto IR parameters. `call_kwargs` are the keyword
// arguments of this call (TFOpLambda reads its function's arguments there; may be null).
// Throws nnd::Error naming the layer, class and parameter for anything unsupported.
MappedLayer map_layer(const std::string& class_name, const json& config, const json* call_kwargs,
                      const LayerCtx& ctx);

// Maps a Keras activation (string, null, or serialized function object) onto a kind.
ActivationKind map_activation(const json& value, const LayerCtx& ctx, const std::string& field);

// Moves the weights read from the file (role -> tensor, in file order) into `m.params`, checking
// that each expected role is present, that no unexpected one is, and that every dimension the
// config implies matches. BatchNormalization without center/scale gets beta = 0 / gamma = 1.
void attach_weights(MappedLayer& m, std::vector<std::pair<std::string, Weights>> weights,
                    const LayerCtx& ctx);

// Fills every expected weight of `m` with zeros, shaped from the input shapes.
void zero_weights(MappedLayer& m, const std::vector<Dims>& input_shapes, const LayerCtx& ctx);

// Weight role of a Keras weight name: "conv2d/kernel:0" -> "kernel", "bn/moving_mean" ->
// "moving_mean".
std::string weight_role(const std::string& weight_name);

// The role a .h5 weight name plays for layer `m`: weight_role, behind the sub-layer the name runs
// through when `m` expects sub-layer weights ("bidirectional/backward_gru/gru_cell/bias:0" ->
// "backward/bias").
std::string weight_role(const std::string& weight_name, const MappedLayer& m);

}  // namespace nnd::keras
