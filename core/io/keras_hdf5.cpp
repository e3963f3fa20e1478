// Keras HDF5 files (.h5): the model_config root attribute and the weights under
// /model_weights/<layer>, matched to their roles by name. The model structure is built by
// keras_model.cpp; HDF5 access is wrapped in hdf5_file.cpp.
#include "core/io/keras_hdf5.h"

#include <algorithm>
#include <map>
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

// The weight names in a nested model's group that belong to the layer at `scope`. The group is
// the top-level model's entry (scope[0]) and holds the variables of every layer inside, trainable
// ones first, named "[<scope>/...]<layer>/<weight>[:0]": the layer's name, with the names of the
// models it was built in when it was built lazily inside them (a Sequential model without an input
// shape: "sequential/dense/kernel"). A name belongs to the layer when the component before the
// weight is the layer's name; should two layers of different nested models share a name, the
// model names in front decide (those matching the innermost models of the scope win). Names of
// layers that own sub-layers carry them between the layer's name and the weight's
// ("lstm/lstm_cell/kernel", "bidirectional/forward_gru/gru_cell/bias").
std::vector<std::string> nested_weight_names(const std::vector<std::string>& names,
                                             const std::vector<keras::ScopeStep>& scope, const std::string& gpath,
                                             const MappedLayer& m, const LayerCtx& ctx) {
  struct Candidate {
    const std::string* name;
    std::string role;
    int score;  // how many model names in front match the scope; -1: they do not
  };
  std::vector<Candidate> found;
  for (const std::string& wn : names) {
    std::string base = wn;
    const size_t colon = base.rfind(':');
    if (colon != std::string::npos && base.find('/', colon) == std::string::npos) base.resize(colon);
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t slash = base.find('/', start);
      parts.push_back(base.substr(start, slash - start));
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    size_t front = parts.size();  // model names in front of the layer's: the last match
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      if (parts[k] == scope.back().name) front = k;
    }
    if (front == parts.size()) continue;
    int score = -1;
    if (front < scope.size()) {
      score = static_cast<int>(front);
      for (size_t k = 0; k < front; ++k) {
        if (parts[k] != scope[scope.size() - 1 - front + k].name) score = -1;
      }
    }
    found.push_back(Candidate{&wn, keras::weight_role(wn, m), score});
  }
  std::map<std::string, int> best;
  for (const Candidate& c : found) {
    auto [it, fresh] = best.emplace(c.role, c.score);
    if (!fresh) it->second = std::max(it->second, c.score);
  }
  std::vector<std::string> out;
  std::map<std::string, const std::string*> taken;
  for (const Candidate& c : found) {
    if (c.score != best[c.role]) continue;
    auto [it, fresh] = taken.emplace(c.role, c.name);
    if (!fresh) {
      ctx.fail(c.role, "weights '" + *it->second + "' and '" + *c.name + "' in " + gpath +
                           " both fit this layer; cannot tell which is its own");
    }
    out.push_back(*c.name);
  }
  if (out.empty()) {
    std::string listed;
    for (size_t i = 0; i < names.size() && i < 8; ++i) listed += (i ? ", " : "") + names[i];
    if (names.size() > 8) listed += ", ...";
    ctx.fail("weights", "group '" + gpath + "' of nested model '" + scope[0].name + "' holds no weights of its layer '" +
                            scope.back().name + "' (weight_names: " + (listed.empty() ? "none" : listed) + ")");
  }
  return out;
}

// The body of load_keras_h5 and load_keras_h5_image: `path` is the name messages start with.
Graph load_keras_file(const h5::File& file, const std::string& path) {
  const hid_t root = file.root();
  if (!file.has_attr(root, "model_config")) {
    throw Error(ErrorCode::kFormat, path + ": missing root attribute 'model_config' (not a Keras model file, or a "
                       "weights-only file)");
  }
  const std::string config = file.read_string_attr(root, "model_config", "root");
  std::string keras_version, backend;
  if (file.has_attr(root, "keras_version")) keras_version = file.read_string_attr(root, "keras_version", "root");
  if (file.has_attr(root, "backend")) backend = file.read_string_attr(root, "backend", "root");
  if (backend == "theano") {
    throw Error(ErrorCode::kUnsupported, path + ": backend: 'theano' files store flipped convolution kernels and are not supported");
  }
  std::optional<h5::Handle> mw = file.open_group(root, "model_weights");
  std::set<std::string> layer_names;
  if (mw) {
    if (auto names = file.read_string_list_attr(mw->get(), "layer_names", "/model_weights")) {
      layer_names.insert(names->begin(), names->end());
    }
  }
  keras::WeightReader reader = [&](const ModelSpec& spec, size_t layer, const MappedLayer& expected,
                                   const LayerCtx& ctx) {
    const LayerEntry& l = spec.layers[layer];
    std::vector<std::pair<std::string, Weights>> out;
    if (!mw) ctx.fail("weights", "the file has no /model_weights group");
    // A layer of a nested model has its weights in the group of the top-level entry holding it.
    const std::string& group = l.scope.empty() ? l.name : l.scope[0].name;
    const std::string gpath = "/model_weights/" + group;
    std::optional<h5::Handle> grp = file.open_group(mw->get(), group);
    if (!grp) {
      ctx.fail("weights", "no weight group '" + gpath + "' in the file" +
                              (layer_names.empty() || layer_names.count(group) ? "" : " (not listed in layer_names)"));
    }
    auto names = file.read_string_list_attr(grp->get(), "weight_names", gpath);
    if (!names) ctx.fail("weights", "group '" + gpath + "' has no weight_names attribute");
    if (l.scope.size() > 1) names = nested_weight_names(*names, l.scope, gpath, expected, ctx);
    const std::string what = "layer '" + l.name + "' (" + l.cls + ")";
    for (const std::string& wn : *names) {
      std::string role = keras::weight_role(wn, expected);
      const auto spec = std::find_if(expected.weights.begin(), expected.weights.end(),
                                     [&](const keras::WeightSpec& s) { return s.role == role || s.alias == role; });
      const bool unused = spec != expected.weights.end() && spec->unused;
      std::optional<Weights> w = file.read_float_dataset(grp->get(), wn, what + ": " + role, unused);
      if (!w) ctx.fail(role, "weight dataset '" + wn + "' not found in " + gpath);
      out.emplace_back(std::move(role), std::move(*w));
    }
    return out;
  };
  Graph g = keras::build_graph(config, keras_version, path, reader);
  g.producer = backend;
  return g;
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
