// Loader for Keras 3 `.keras` archives (`model.save("model.keras")`, also tf.keras 2.13+).
//
// The archive is a zip holding config.json (the same model_config JSON a Keras 3 .h5 carries,
// built into the graph by keras_model.cpp), metadata.json (keras_version) and model.weights.h5.
// The weights file names no layer: Keras' saving_lib stores a model's layers as a list, each
// under layers/<snake_case of its class>[_<k>]/vars/<i> (the k-th layer of that class in the
// model's layer order; "dense", "dense_1", "batch_normalization"), with its variables numbered in
// creation order (kernel, bias; gamma, beta, moving_mean, moving_variance); a nested model's layers
// under its own path in the same way (layers/functional/layers/dense/vars). nnd recomputes those
// paths from config.json and checks every count and shape against what each layer's config implies.
#pragma once

#include <cstddef>
#include <string>

#include "core/ir/graph.h"

namespace nnd {

// Reads the archive at `path`; throws nnd::Error naming the file (and the layer, class and
// field where one is at fault) for: a zip that is damaged or not a Keras archive, a missing
// config.json or model.weights.h5, weights saved as .npz, a layer whose variables are missing,
// too many, or mis-shaped, and everything load_keras_h5 rejects in the model itself.
Graph load_keras_archive(const std::string& path);

// Same for an archive already in memory (the fuzz target); `name` starts messages.
Graph load_keras_archive_bytes(const void* data, size_t size, const std::string& name);

}  // namespace nnd
