// libFuzzer target: the Keras model_config JSON -> graph IR builder (load_keras_json: parsing,
// layer mapping, graph wiring, shape inference; weights zero-filled in the implied shapes).
// Input: the JSON text, optionally preceded by one line "#keras=<version>" that selects the
// version-dependent meanings (as a file's keras_version attribute would); without it the
// version is guessed from the JSON, as for a file without that attribute.
// Expected outcome: a graph, or nnd::Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/io/keras_hdf5.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_report.h"
#include "tests/fuzz/fuzz_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string version;
  constexpr std::string_view kPrefix = "#keras=";
  if (text.substr(0, kPrefix.size()) == kPrefix) {
    size_t eol = text.find('\n');
    if (eol == std::string_view::npos) return 0;
    version = std::string(text.substr(kPrefix.size(), eol - kPrefix.size()));
    text.remove_prefix(eol + 1);
  }
  try {
    nnd::Graph g = nnd::load_keras_json(std::string(text), version, "fuzz.json");
    nnd::fuzz::exercise_loaded_graph(g);
    nnd::fuzz::report("accepted");
  } catch (const nnd::Error& e) {
    nnd::fuzz::report(e.what());
    // A clear error (bad JSON, unknown layer, bad parameter, bad version string, ...).
  }
  return 0;
}
