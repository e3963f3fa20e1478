// Keras HDF5 files (.h5): the model_config root attribute and the weights under
// /model_weights/<layer>, matched to their roles by name. The model structure is built by
// keras_model.cpp; HDF5 access is wrapped in hdf5_file.cpp.
#include "core/io/keras_hdf5.h"

#include <optional>
#include <set>
#include <utility>

#include "core/io/hdf5_file.h"
#include "core/io/keras_model.h"
#include "core/util/error.h"

namespace nnd {

using keras::LayerCtx;
using keras::LayerEntry;
using keras::MappedLayer;
using keras::ModelSpec;

namespace {

// The body of load_keras_h5 and load_keras_h5_image: `path` is the name messages start with.
Graph load_keras_file(const h5::File& file, const std::string& path) {
  const hid_t root = file.root();
  if (!file.has_attr(root, "model_config")) {
    throw Error(path + ": missing root attribute 'model_config' (not a Keras model file, or a "
                       "weights-only file)");
  }
  const std::string config = file.read_string_attr(root, "model_config", "root");
  std::string keras_version, backend;
  if (file.has_attr(root, "keras_version")) keras_version = file.read_string_attr(root, "keras_version", "root");
  if (file.has_attr(root, "backend")) backend = file.read_string_attr(root, "backend", "root");
  if (backend == "theano") {
    throw Error(path + ": backend: 'theano' files store flipped convolution kernels and are not supported");
  }
  std::optional<h5::Handle> mw = file.open_group(root, "model_weights");
  std::set<std::string> layer_names;
  if (mw) {
    if (auto names = file.read_string_list_attr(mw->get(), "layer_names", "/model_weights")) {
      layer_names.insert(names->begin(), names->end());
    }
  }
  keras::WeightReader reader = [&](const ModelSpec& spec, size_t layer, const MappedLayer&,
                                   const LayerCtx& ctx) {
    const LayerEntry& l = spec.layers[layer];
    std::vector<std::pair<std::string, Weights>> out;
    if (!mw) ctx.fail("weights", "the file has no /model_weights group");
    const std::string gpath = "/model_weights/" + l.name;
    std::optional<h5::Handle> grp = file.open_group(mw->get(), l.name);
    if (!grp) {
      ctx.fail("weights", "no weight group '" + gpath + "' in the file" +
                              (layer_names.empty() || layer_names.count(l.name) ? "" : " (not listed in layer_names)"));
    }
    auto names = file.read_string_list_attr(grp->get(), "weight_names", gpath);
    if (!names) ctx.fail("weights", "group '" + gpath + "' has no weight_names attribute");
    const std::string what = "layer '" + l.name + "' (" + l.cls + ")";
    for (const std::string& wn : *names) {
      std::string role = keras::weight_role(wn);
      std::optional<Weights> w = file.read_float_dataset(grp->get(), wn, what + ": " + role);
      if (!w) ctx.fail(role, "weight dataset '" + wn + "' not found in " + gpath);
      out.emplace_back(std::move(role), std::move(*w));
    }
    return out;
  };
  return keras::build_graph(config, keras_version, path, reader);
}

}  // namespace

Graph load_keras_h5(const std::string& path) {
  h5::File file(path, path);
  return load_keras_file(file, path);
}

Graph load_keras_h5_image(const void* data, size_t size, const std::string& name) {
  h5::File file(data, size, name);
  return load_keras_file(file, name);
}

Graph load_keras_json(const std::string& model_config_json, const std::string& keras_version,
                      const std::string& source_name) {
  return keras::build_graph(model_config_json, keras_version, source_name, keras::WeightReader{});
}

}  // namespace nnd
