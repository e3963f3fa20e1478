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

}  // namespace nnd::test
