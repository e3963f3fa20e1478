// Loader for Keras HDF5 model files (.h5) written by Keras 2.2 to 2.15 and Keras 3.x.
// This is the only code in nnd that includes HDF5 or parses the Keras JSON.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/graph.h"

namespace nnd {

// Reads `path` and returns a graph with shapes inferred (infer_shapes() has run) and every layer
// mapped to typed parameters. Throws nnd::Error with a message naming the file, and where it
// applies the layer, its class and the offending field, for: a file that is not HDF5 or is
// truncated, a missing or invalid `model_config`, an unknown layer class or unsupported parameter
// value, a missing or mis-shaped weight dataset, a cycle or dangling reference in the graph,
// nested models it cannot flatten, and absurd shapes.
Graph load_keras_h5(const std::string& path);

// Builds a graph from a `model_config` JSON text alone, every weight zero-filled in the shape its
// layer's config implies (nothing is read from HDF5). `keras_version` selects version-dependent
// meanings ("2.6.0", "3.4.1"); `source_name` prefixes messages. For the fuzz target and for tests
// of the JSON mapping. Throws nnd::Error like load_keras_h5.
Graph load_keras_json(const std::string& model_config_json, const std::string& keras_version,
                      const std::string& source_name);

}  // namespace nnd
