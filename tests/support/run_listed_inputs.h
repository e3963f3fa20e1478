// Shared test helper: runs a model with the reference engine on the .npy inputs a fixture
// manifest lists for it ({"<name_key>": input name, "file": path below `dir`}, as in
// tests/data/fixtures, tests/data/onnx and tests/data/real).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/io/model_inputs.h"

namespace nnd::test {

struct ListedRun {
  ModelInputs inputs;
  ModelOutputs outputs;
};

inline ListedRun run_listed_inputs(const Graph& g, const nlohmann::json& listed_inputs,
                                   const std::filesystem::path& dir, const char* name_key = "name") {
  std::map<std::string, std::string> files;
  for (const auto& in : listed_inputs) {
    files[in.at(name_key).get<std::string>()] = (dir / in.at("file").get<std::string>()).string();
  }
  ListedRun r{prepare_inputs(g, files, 0), {}};
  r.outputs = allocate_outputs(g, r.inputs.batch);
  auto engine = make_engine(g, EngineOptions{});
  const auto views = r.inputs.views();
  const auto ptrs = r.outputs.pointers();
  engine->run(r.inputs.batch, views, ptrs);
  return r;
}

}  // namespace nnd::test
