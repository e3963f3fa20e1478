// Shared test helper: runs a model with the reference engine on the .npy inputs a fixture
// manifest lists for it ({"<name_key>": input name, "file": path below `dir`}, as in
// tests/data/fixtures, tests/data/onnx and tests/data/real; see listed_arrays.h).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_inputs.h"
#include "tests/support/listed_arrays.h"

namespace nnd::test {

struct ListedRun {
  ModelInputs inputs;
  ModelOutputs outputs;
};

inline ListedRun run_listed_inputs(const Graph& g, const nlohmann::json& listed_inputs,
                                   const std::filesystem::path& dir, const char* name_key = "name") {
  ListedRun r{prepare_listed_inputs(g, listed_inputs, dir, name_key), {}};
  r.outputs = allocate_outputs(g, r.inputs.batch);
  auto engine = make_engine(g, EngineOptions{});
  const auto views = r.inputs.views();
  const auto outs = r.outputs.views();
  engine->run(r.inputs.batch, views, outs);
  return r;
}

}  // namespace nnd::test
