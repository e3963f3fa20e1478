// One entry of the config's `models:` list, validated (config/SCHEMA.md documents each key).
// The registry builds a served model from it; a new per-model key is a field here, its parsing
// in models_section.cpp, its documentation in config/SCHEMA.md, and -- when it changes what is
// compiled -- a line in compile_settings_equal() (daemon/registry/registry_builder.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/tensor.h"

namespace nnd::daemon {

struct ModelSettings {
  std::string name;           // unique name clients use
  std::string path;           // absolute path of the model file (.h5, .keras, .onnx)
  std::vector<std::pair<std::string, DType>> input_dtypes;  // overrides by input name
  uint32_t max_batch = 16;    // largest batch one engine run may carry (and one request)
  uint32_t batch_delay_us = 0;  // how long a lone request may wait for others to batch with
  int32_t priority = 0;       // higher is served first when several models have work
  EngineOptions engine;       // engine, ISA, math mode, threads
  bool engine_auto = false;   // config `engine: auto`: the JIT where it exists, else the
                              // reference engine (the registry falls back and logs it)
  bool required = false;      // a failure to load/compile it fails the start-up even when the
                              // daemon skips failed models (daemon.on_model_error: skip)
};

}  // namespace nnd::daemon
