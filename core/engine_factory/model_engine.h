// A model's engine as a config entry asks for it (core/engine/model_options.h): the input element
// types applied to the graph, `engine: auto` resolved (the JIT, or the reference engine where the
// JIT is unavailable), the precision checked, one warm-up run. What the daemon serves and what
// libnnd runs in-process are made here, so both get the same engine from the same options.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/model_options.h"

namespace nnd {

using EngineMaker = std::function<std::unique_ptr<Engine>(const Graph& g, const EngineOptions& options)>;

// Sets the dtype of the graph inputs `options.input_dtypes` names and returns every input's dtype
// in Graph::inputs order. Throws Error(kInvalidArgument) "inputs: FILE has no input named 'x'
// (its inputs: a, b)" for a name the model does not have.
std::vector<DType> apply_input_dtypes(Graph& g, const ModelOptions& options);

struct ModelEngine {
  std::unique_ptr<Engine> engine;
  // Why `engine: auto` serves the reference engine ("" when it serves the JIT, or when the engine
  // was named): the JIT's error, for a warning.
  std::string fallback_reason;
};

// Makes the engine for `g` (input dtypes already applied). `engine: auto` asks for the JIT and
// falls back to the reference engine only when the JIT is unavailable for this CPU or model
// (ErrorCode::kIsaUnavailable or kUnsupported); any other error is thrown. precision int8 throws
// Error(kUnsupported) until the build has int8 kernels. `make` defaults to make_engine().
ModelEngine make_model_engine(const Graph& g, const ModelOptions& options, const EngineMaker& make = {});

// One run of one sample of zeros, so that the first real call does not pay for first-touch page
// faults and lazily made state.
void warm_up_engine(Engine& e, const Graph& g);

}  // namespace nnd
