// Shared test helper: pieces of Keras 2 model_config JSON built in code, for loader tests that
// need a config no fixture file has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nnd::test {

// A Keras 2 InputLayer named `name` taking per-sample `shape` (batch left free).
inline nlohmann::json k2_input(const std::string& name, std::vector<int64_t> shape) {
  nlohmann::json bs = nlohmann::json::array({nullptr});
  for (int64_t d : shape) bs.push_back(d);
  return {{"class_name", "InputLayer"},
          {"name", name},
          {"inbound_nodes", nlohmann::json::array()},
          {"config", {{"batch_input_shape", bs}, {"dtype", "float32"}, {"name", name}}}};
}

// A Keras 3 Functional model: input `shape` (batch left free) -> one layer (`cls`, `cfg`, named
// "l") -> output. Returns the model_config JSON text.
inline std::string k3_one_layer_model(const std::string& cls, nlohmann::json cfg, const std::vector<int64_t>& shape) {
  using json = nlohmann::json;
  json bs = json::array({nullptr});
  for (int64_t d : shape) bs.push_back(d);
  cfg["name"] = "l";
  const json input = {{"class_name", "InputLayer"}, {"name", "input"}, {"inbound_nodes", json::array()},
                      {"config", {{"batch_shape", bs}, {"dtype", "float32"}, {"name", "input"}}}};
  const json arg = {{"class_name", "__keras_tensor__"},
                    {"config", {{"shape", bs}, {"dtype", "float32"}, {"keras_history", {"input", 0, 0}}}}};
  const json layer = {{"module", "keras.layers"}, {"class_name", cls}, {"name", "l"}, {"config", cfg},
                      {"inbound_nodes", json::array({{{"args", json::array({arg})}, {"kwargs", json::object()}}})}};
  const json m = {{"class_name", "Functional"},
                  {"config",
                   {{"name", "m"},
                    {"layers", json::array({input, layer})},
                    {"input_layers", json::array({json::array({"input", 0, 0})})},
                    {"output_layers", json::array({json::array({"l", 0, 0})})}}}};
  return m.dump();
}

}  // namespace nnd::test
