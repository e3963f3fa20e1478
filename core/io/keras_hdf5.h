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
// nested models it cannot flatten (broken references, nesting deeper than 8 levels), and absurd shapes.
//
// Names: graph inputs and outputs carry the Keras input/output layer names (an output that is a
// later call of a shared layer keeps the plain name unless it is already taken, then "<layer>:<k>").
// The k-th call (k >= 1) of a shared layer produces the value "<layer>:<k>". A Sequential model
// without an InputLayer gets the input Keras itself creates: "<first layer>_input" (Keras 2) or
// "input_layer" (Keras 3). Weights are matched to their roles by name (kernel, bias, gamma, ...),
// not by position. Nested models used as layers are flattened: their layers are named
// "<outer>/<inner>" and their weights are read from the outer entry's group (docs/keras.md).
Graph load_keras_h5(const std::string& path);

// Same for the bytes of an .h5 file already in memory (the fuzz target, the daemon's isolated
// validation; nothing is written to disk); `name` starts messages (it may be the file's path).
Graph load_keras_h5_image(const void* data, size_t size, const std::string& name);

// Builds a graph from a `model_config` JSON text alone, every weight zero-filled in the shape its
// layer's config implies (nothing is read from HDF5). `keras_version` selects version-dependent
// meanings ("2.6.0", "3.4.1"); `source_name` prefixes messages. For the fuzz target and for tests
// of the JSON mapping. Throws nnd::Error like load_keras_h5.
Graph load_keras_json(const std::string& model_config_json, const std::string& keras_version,
                      const std::string& source_name);

}  // namespace nnd
