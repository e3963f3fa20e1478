// One entry of the config's `models:` list, validated (config/SCHEMA.md documents each key).
// The registry builds a served model from it; a new per-model key is a field here, its parsing
// in models_section.cpp, its documentation in config/SCHEMA.md, and -- when it changes what is
// compiled -- a line in compile_settings_equal() (daemon/registry/registry_builder.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/model_options.h"

namespace nnd::daemon {

// ModelOptions that name the reference engine (not `engine: auto`).
inline ModelOptions named_reference_engine() {
  ModelOptions o;
  o.engine_auto = false;
  o.engine.engine = EngineKind::kReference;
  return o;
}

struct ModelSettings {
  std::string name;           // unique name clients use
  std::string path;           // absolute path of the model file (.h5, .keras, .onnx)
  uint32_t max_batch = 16;    // largest batch one engine run may carry (and one request)
  uint32_t batch_delay_us = 0;  // how long a lone request may wait for others to batch with
  int32_t priority = 0;       // higher is served first when several models have work
  // engine, isa, math, threads, precision and the input types: the options libnnd's
  // nnd_options_set takes too, set by the same code (core/engine/model_options.h), and made into
  // an engine by the same code (core/engine_factory/model_engine.h). The config's default is
  // `engine: auto` (models_section.cpp); a ModelSettings made in code names the reference engine.
  ModelOptions options = named_reference_engine();
  bool required = false;      // a failure to load/compile it fails the start-up even when the
                              // daemon skips failed models (daemon.on_model_error: skip)
};

}  // namespace nnd::daemon
