// Keras model_config -> graph IR (see keras_model.h). Layer configs are mapped in keras_layers.cpp.
#include "core/io/keras_model.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/ir/shape_inference.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::keras {
namespace {

constexpr int kMaxJsonDepth = 200;
constexpr size_t kMaxLayers = 100000;
constexpr size_t kMaxCallsPerLayer = 10000;
constexpr int kMaxNesting = 8;             // models nested in models, below the top-level one
constexpr size_t kMaxFlatCalls = 1 << 20;  // calls of one layer once nested models are inlined
constexpr int kMaxResolveDepth = 1000;     // references followed through nested models' inputs/outputs

std::string short_json(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}


// Deepest nesting of objects and arrays in `text`, counting brackets outside string literals.
// Stops counting once past `limit`. Malformed text gets some number; the parser then rejects it.
int json_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // skip the escaped character (an escaped quote does not end the string)
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

json parse_json(const std::string& text, const std::string& what) {
  // The depth limit protects the recursive walks over the parsed value. Checking it in a scan
  // before parsing, rather than in a parser callback, keeps nlohmann's plain DOM parser, which
  // takes a fifth fewer instructions than the callback parser on the real networks' configs.
  if (json_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    throw Error(ErrorCode::kLimit, what + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kFormat, what + ": invalid JSON: " + e.what());
  }
}

bool is_model_class(const std::string& cls) {
  return cls == "Functional" || cls == "Model" || cls == "Sequential";
}

// The layer list of a Sequential model's config (Keras <= 2.2 writes the list itself), or null.
const json* sequential_layer_list(const json& cfg) {
  if (cfg.is_array()) return &cfg;
  if (!cfg.is_object()) return nullptr;
  auto it = cfg.find("layers");
  return it != cfg.end() && it->is_array() ? &*it : nullptr;
}

// Batch shape as written for a Sequential model's first layer.
const json* find_batch_shape(const json& layer_cfg) {
  for (const char* k : {"batch_input_shape", "batch_shape"}) {
    auto it = layer_cfg.find(k);
    if (it != layer_cfg.end() && it->is_array()) return &*it;
  }
  return nullptr;
}

// The node index a model's config gives the first call of layer `l`: 0, except for a nested
// model. A Functional model's construction is its node 0, which the config leaves out but keeps
// counting; so does Keras 2 for a Sequential model built from an input shape (an InputLayer entry
// or a first layer's batch_input_shape). A Keras 3 Sequential model is no Functional subclass and
// has no such node.
int64_t first_node_index(const LayerEntry& l, Version version) {
  if (!is_model_class(l.cls)) return 0;
  if (l.cls != "Sequential") return 1;
  if (version == Version::kKeras3) return 0;
  const json* layers = sequential_layer_list(*l.config);
  if (layers == nullptr || layers->empty() || !(*layers)[0].is_object()) return 0;
  const json& first = (*layers)[0];
  auto cls = first.find("class_name");
  if (cls != first.end() && cls->is_string() && cls->get<std::string>() == "InputLayer") return 1;
  auto cfg = first.find("config");
  return cfg != first.end() && cfg->is_object() && find_batch_shape(*cfg) != nullptr ? 1 : 0;
}

// Parses the config of one model (the top-level one or a nested one) into ModelSpec. Nested
// models stay single entries here; Flattener inlines them.
class SpecParser {
 public:
  // `where` starts messages about the model's own fields (the file name, or the file name and
  // the nested model's layer); `name_prefix` ("outer/") is put in front of layer names in them.
  SpecParser(std::string source, Version version, std::string where = "", std::string name_prefix = "")
      : src_(std::move(source)),
        where_(where.empty() ? src_ : std::move(where)),
        name_prefix_(std::move(name_prefix)),
        version_(version) {}

  ModelSpec parse(const json& root) {
    if (!root.is_object()) fail("model_config", "expected a JSON object, got " + short_json(root));
    std::string cls = str_field(root, "class_name", "model_config");
    auto cfg = root.find("config");
    if (cfg == root.end()) fail("model_config", "missing 'config'");
    if (!is_model_class(cls)) {
      fail("model_config", "class_name '" + cls + "' is not a supported model class (Sequential, "
                           "Functional, Model)");
    }
    return parse_model(cls, *cfg, false);
  }

  // `nested`: the model is a layer of another model, which supplies its inputs, so a Sequential
  // model needs no input shape (one it declares is ignored).
  ModelSpec parse_model(const std::string& cls, const json& cfg, bool nested) {
    return cls == "Sequential" ? parse_sequential(cfg, nested) : parse_functional(cfg);
  }

 private:
  // Without a code: a malformed model config (kFormat).
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    fail(ErrorCode::kFormat, field, msg);
  }
  [[noreturn]] void fail(ErrorCode code, const std::string& field, const std::string& msg) const {
    throw Error(code, where_ + ": " + field + ": " + msg);
  }
  [[noreturn]] void fail_layer(const LayerEntry& l, const std::string& field,
                               const std::string& msg) const {
    fail_layer(ErrorCode::kFormat, l, field, msg);
  }
  [[noreturn]] void fail_layer(ErrorCode code, const LayerEntry& l, const std::string& field,
                               const std::string& msg) const {
    throw Error(code, src_ + ": layer '" + name_prefix_ + l.name + "' (" + l.cls + "): " + field + ": " + msg);
  }

  std::string str_field(const json& o, const std::string& key, const std::string& where) const {
    auto it = o.find(key);
    if (it == o.end() || !it->is_string()) {
      fail(where, "missing or non-string '" + key + "'");
    }
    return it->get<std::string>();
  }

  // A [layer, node_index, tensor_index] triple (extra entries ignored).
  TensorRef ref_from(const json& v, const std::string& where) const {
    if (!v.is_array() || v.size() < 3 || !v[0].is_string() || !v[1].is_number_integer() ||
        !v[2].is_number_integer()) {
      fail(where, "expected [layer_name, node_index, tensor_index], got " + short_json(v));
    }
    return TensorRef{v[0].get<std::string>(), v[1].get<int64_t>(), v[2].get<int64_t>()};
  }

  // input_layers / output_layers: a list of triples, a single triple, or (Keras 3) a dict or
  // nested structure of triples.
  void collect_io_refs(const json& v, const std::string& where, std::vector<TensorRef>& out) const {
    if (v.is_array() && !v.empty() && v[0].is_string()) {
      out.push_back(ref_from(v, where));
    } else if (v.is_array()) {
      for (const json& e : v) collect_io_refs(e, where, out);
    } else if (v.is_object()) {
      for (const json& e : v) collect_io_refs(e, where, out);
    } else {
      fail(where, "expected [layer_name, node_index, tensor_index], got " + short_json(v));
    }
  }

  // Keras 2 node data: nested lists whose leaves are [layer, node, tensor, {kwargs}].
  void collect_k2(const LayerEntry& l, const json& v, Call& call) const {
    if (v.is_array() && v.size() >= 3 && v[0].is_string()) {
      if (v[0].get<std::string>() == "_CONSTANT_VALUE") {
        fail_layer(ErrorCode::kUnsupported, l, "inbound_nodes", "constant call arguments are not supported");
      }
      call.inputs.push_back(ref_from(v, "layer '" + l.name + "' (" + l.cls + "): inbound_nodes"));
      if (v.size() >= 4 && v[3].is_object() && call.kwargs->empty()) call.kwargs = &v[3];
      return;
    }
    if (!v.is_array()) {
      fail_layer(l, "inbound_nodes", "unexpected entry " + short_json(v));
    }
    for (const json& e : v) collect_k2(l, e, call);
  }

  // Keras 3 call arguments: __keras_tensor__ objects, possibly nested in lists.
  void collect_k3(const LayerEntry& l, const json& v, Call& call) const {
    if (v.is_object()) {
      auto cn = v.find("class_name");
      if (cn != v.end() && cn->is_string() && cn->get<std::string>() == "__keras_tensor__") {
        auto cfg = v.find("config");
        if (cfg == v.end() || !cfg->is_object() || !cfg->contains("keras_history")) {
          fail_layer(l, "inbound_nodes", "__keras_tensor__ without keras_history");
        }
        call.inputs.push_back(ref_from((*cfg)["keras_history"],
                                       "layer '" + l.name + "' (" + l.cls + "): inbound_nodes"));
        return;
      }
      fail_layer(ErrorCode::kUnsupported, l, "inbound_nodes", "unsupported call argument " + short_json(v));
    }
    if (v.is_array()) {
      for (const json& e : v) collect_k3(l, e, call);
      return;
    }
    fail_layer(ErrorCode::kUnsupported, l, "inbound_nodes", "constant call argument " + short_json(v) + " is not supported");
  }

  static bool contains_keras_tensor(const json& v) {
    if (v.is_object()) {
      auto cn = v.find("class_name");
      if (cn != v.end() && cn->is_string() && cn->get<std::string>() == "__keras_tensor__") return true;
      for (const json& e : v) {
        if (contains_keras_tensor(e)) return true;
      }
    } else if (v.is_array()) {
      for (const json& e : v) {
        if (contains_keras_tensor(e)) return true;
      }
    }
    return false;
  }

  void parse_calls(LayerEntry& l, const json& nodes) const {
    if (nodes.is_null()) return;
    if (!nodes.is_array()) fail_layer(l, "inbound_nodes", "expected a list");
    if (nodes.size() > kMaxCallsPerLayer) fail_layer(ErrorCode::kLimit, l, "inbound_nodes", "too many calls");
    const bool tf_op = l.cls == "TFOpLambda" || l.cls == "SlicingOpLambda";
    for (const json& n : nodes) {
      Call call;
      if (n.is_object()) {
        // Keras 3: {"args": [...], "kwargs": {...}}
        auto args = n.find("args");
        if (args == n.end() || !args->is_array()) fail_layer(l, "inbound_nodes", "call without 'args' list");
        collect_k3(l, *args, call);
        auto kw = n.find("kwargs");
        if (kw != n.end() && !kw->is_null()) {
          if (!kw->is_object()) fail_layer(l, "inbound_nodes", "'kwargs' is not an object");
          for (auto it = kw->begin(); it != kw->end(); ++it) {
            if (contains_keras_tensor(it.value())) {
              fail_layer(ErrorCode::kUnsupported, l, "inbound_nodes", "tensor keyword argument '" + it.key() +
                                                 "' is not supported");
            }
          }
          call.kwargs = &*kw;
        }
      } else if (n.is_array()) {
        // Keras 2: [[layer, node, tensor, kwargs], ...]; TFOpLambda keeps its argument structure,
        // so a single input is written as [layer, node, tensor, kwargs] without the outer list.
        collect_k2(l, n, call);
        if (!tf_op) {
          for (auto it = call.kwargs->begin(); it != call.kwargs->end(); ++it) {
            const json& v = it.value();
            if (v.is_array() && v.size() >= 3 && v[0].is_string() && v[1].is_number_integer()) {
              fail_layer(ErrorCode::kUnsupported, l, "inbound_nodes", "tensor keyword argument '" + it.key() +
                                                 "' is not supported");
            }
          }
        }
      } else {
        fail_layer(l, "inbound_nodes", "unexpected entry " + short_json(n));
      }
      if (call.inputs.empty()) fail_layer(l, "inbound_nodes", "a call without input tensors");
      l.calls.push_back(std::move(call));
    }
  }

  LayerEntry entry_from(const json& e, size_t index) const {
    const std::string where = "layers[" + std::to_string(index) + "]";
    if (!e.is_object()) fail(where, "expected a layer object");
    LayerEntry l;
    l.cls = str_field(e, "class_name", where);
    auto cfg = e.find("config");
    if (cfg == e.end() || !cfg->is_object()) fail(where, "layer '" + l.cls + "' has no config object");
    l.config = &*cfg;
    auto nm = e.find("name");
    if (nm != e.end() && nm->is_string()) {
      l.name = nm->get<std::string>();
    } else {
      auto cn = cfg->find("name");
      if (cn == cfg->end() || !cn->is_string()) fail(where, "layer without a name");
      l.name = cn->get<std::string>();
    }
    if (l.name.empty()) fail(where, "layer with an empty name");
    return l;
  }

  void check_layer_count(size_t n) const {
    if (n == 0) fail("model_config", "the model has no layers");
    if (n > kMaxLayers) fail(ErrorCode::kLimit, "model_config", "too many layers (" + std::to_string(n) + ")");
  }

  ModelSpec parse_functional(const json& cfg) {
    if (!cfg.is_object()) fail("config", "expected an object");
    auto layers = cfg.find("layers");
    if (layers == cfg.end() || !layers->is_array()) fail("config", "missing 'layers' list");
    check_layer_count(layers->size());
    ModelSpec spec;
    for (size_t i = 0; i < layers->size(); ++i) {
      LayerEntry l = entry_from((*layers)[i], i);
      auto nodes = (*layers)[i].find("inbound_nodes");
      if (nodes != (*layers)[i].end()) parse_calls(l, *nodes);
      spec.layers.push_back(std::move(l));
    }
    for (const char* key : {"input_layers", "output_layers"}) {
      auto it = cfg.find(key);
      if (it == cfg.end() || it->is_null()) fail(key, "missing");
      collect_io_refs(*it, key, std::string(key) == "input_layers" ? spec.inputs : spec.outputs);
    }
    if (spec.inputs.empty()) fail("input_layers", "the model has no inputs");
    if (spec.outputs.empty()) fail("output_layers", "the model has no outputs");
    return spec;
  }

  ModelSpec parse_sequential(const json& cfg, bool nested) {
    const json* layers = nullptr;
    if (cfg.is_array()) {
      layers = &cfg;  // Keras <= 2.2: the config is the layer list itself
    } else if (cfg.is_object()) {
      auto it = cfg.find("layers");
      if (it == cfg.end() || !it->is_array()) fail("config", "missing 'layers' list");
      layers = &*it;
    } else {
      fail("config", "expected a layer list or an object");
    }
    check_layer_count(layers->size());
    ModelSpec spec;
    for (size_t i = 0; i < layers->size(); ++i) spec.layers.push_back(entry_from((*layers)[i], i));
    if (spec.layers[0].cls != "InputLayer" && nested) {
      // The outer model binds this input to the call's argument, so its shape is never read.
      LayerEntry in;
      in.cls = "InputLayer";
      in.name = version_ == Version::kKeras3 ? "input_layer" : spec.layers[0].name + "_input";
      in.owned_config = std::make_unique<json>(json{{"name", in.name}});
      in.config = in.owned_config.get();
      spec.layers.insert(spec.layers.begin(), std::move(in));
    } else if (spec.layers[0].cls != "InputLayer") {
      // Keras builds an InputLayer from the first layer's batch_input_shape.
      const LayerEntry& first = spec.layers[0];
      json shape;
      if (const json* bs = find_batch_shape(*first.config)) {
        shape = *bs;
      } else if (cfg.is_object() && cfg.contains("build_input_shape") && cfg["build_input_shape"].is_array()) {
        shape = cfg["build_input_shape"];
      } else {
        const json* bc = nullptr;
        for (const json& e : *layers) {
          if (e.is_object() && e.contains("build_config")) {
            bc = &e["build_config"];
            break;
          }
        }
        if (bc != nullptr && bc->is_object() && bc->contains("input_shape") && (*bc)["input_shape"].is_array()) {
          shape = (*bc)["input_shape"];
        } else {
          fail_layer(first, "batch_input_shape",
                     "the Sequential model has no InputLayer and its first layer declares no input shape");
        }
      }
      LayerEntry in;
      in.cls = "InputLayer";
      in.name = version_ == Version::kKeras3 ? "input_layer" : first.name + "_input";
      in.owned_config = std::make_unique<json>(json{{"batch_input_shape", shape}, {"name", in.name}});
      in.config = in.owned_config.get();
      spec.layers.insert(spec.layers.begin(), std::move(in));
    }
    for (size_t i = 1; i < spec.layers.size(); ++i) {
      if (spec.layers[i].cls == "InputLayer") {
        fail_layer(ErrorCode::kUnsupported, spec.layers[i], "class_name", "an InputLayer inside a Sequential model is not supported");
      }
      Call call;
      const LayerEntry& prev = spec.layers[i - 1];
      call.inputs.push_back(TensorRef{prev.name, first_node_index(prev, version_), 0});
      spec.layers[i].calls.push_back(std::move(call));
    }
    if (spec.layers.size() < 2) fail("model_config", "the Sequential model has no layers besides its input");
    spec.inputs.push_back(TensorRef{spec.layers.front().name, 0, 0});
    spec.outputs.push_back(TensorRef{spec.layers.back().name, first_node_index(spec.layers.back(), version_), 0});
    return spec;
  }

  std::string src_, where_, name_prefix_;
  Version version_;
};

// Guess the dialect when keras_version is missing: Keras 3 writes `module` keys and dict nodes.
Version guess_version(const json& root) {
  const json* layers = nullptr;
  if (root.is_object() && root.contains("config")) {
    const json& c = root["config"];
    if (c.is_array()) layers = &c;
    else if (c.is_object() && c.contains("layers")) layers = &c["layers"];
  }
  if (layers == nullptr || !layers->is_array()) return Version::kKeras2;
  for (const json& l : *layers) {
    if (!l.is_object()) continue;
    if (l.contains("module") || l.contains("registered_name")) return Version::kKeras3;
    auto n = l.find("inbound_nodes");
    if (n != l.end() && n->is_array() && !n->empty() && (*n)[0].is_object()) return Version::kKeras3;
    auto cfg = l.find("config");
    if (cfg != l.end() && cfg->is_object() && cfg->contains("batch_shape")) return Version::kKeras3;
  }
  return Version::kKeras2;
}

// Inlines nested models (a Functional or Sequential model used as a layer) into one flat
// ModelSpec (see keras_model.h). Each model of the tree is inlined once per call of the nested
// layer that holds it, times the instances of its parent: instance i of a model and call c of a
// layer inside it become call i * calls + c of the flattened layer. References are rewritten
// while copying: to an inner InputLayer -> the argument of the outer call it is bound to; to a
// nested model's output -> the inner layer that computes it.
class Flattener {
 public:
  Flattener(std::string source, Version version) : src_(std::move(source)), version_(version) {}

  ModelSpec run(ModelSpec top) {
    ModelSpec out;
    for (const TensorRef& r : top.outputs) out.output_names.push_back(r.layer);
    out.levels.push_back(classes(top));
    const bool nested = std::any_of(top.layers.begin(), top.layers.end(),
                                    [](const LayerEntry& l) { return is_model_class(l.cls); });
    if (!nested) {  // the common case: nothing to rewrite
      for (size_t i = 0; i < top.layers.size(); ++i) {
        LayerEntry& l = top.layers[i];
        l.scope = {ScopeStep{l.name, l.cls, 0, i}};
      }
      out.layers = std::move(top.layers);
      out.inputs = std::move(top.inputs);
      out.outputs = std::move(top.outputs);
      return out;
    }
    root_.spec = std::move(top);
    out_ = &out;
    build_tree(root_, 0);
    emit(root_);
    out.inputs = root_.spec.inputs;
    for (const TensorRef& r : root_.spec.outputs) out.outputs.push_back(resolve(root_, 0, r, src_ + ": output_layers", 0));
    return out;
  }

 private:
  // One model of the tree.
  struct Model {
    ModelSpec spec;                // its layers as its config lists them (nested models as single entries)
    Model* parent = nullptr;
    size_t parent_layer = 0;       // its entry in parent->spec.layers
    std::string prefix;            // "" at the top, "outer/" for the layers of nested model "outer"
    std::vector<ScopeStep> scope;  // the steps from the top-level model to this one
    size_t level = 0;              // its index in ModelSpec::levels
    size_t instances = 1;          // how often it is inlined
    int64_t node_offset = 0;       // the node index its parent's config gives its first call
    std::map<std::string, size_t> by_name;
    std::vector<std::unique_ptr<Model>> children;       // per layer: its nested model, or null
    std::vector<std::vector<TensorRef>> bindings;       // per instance: its inputs, flattened
    std::vector<char> binding_state;                    // 0 not yet, 1 being resolved, 2 done
  };

  static std::vector<std::string> classes(const ModelSpec& spec) {
    std::vector<std::string> out;
    for (const LayerEntry& l : spec.layers) out.push_back(l.cls);
    return out;
  }

  std::string layer_prefix(const Model& m, const LayerEntry& l) const {
    return src_ + ": layer '" + m.prefix + l.name + "' (" + l.cls + ")";
  }

  void build_tree(Model& m, int depth) {
    for (size_t i = 0; i < m.spec.layers.size(); ++i) m.by_name.emplace(m.spec.layers[i].name, i);
    m.children.resize(m.spec.layers.size());
    for (size_t i = 0; i < m.spec.layers.size(); ++i) {
      const LayerEntry& l = m.spec.layers[i];
      if (!is_model_class(l.cls)) continue;
      const std::string where = layer_prefix(m, l);
      if (depth + 1 > kMaxNesting) {
        throw Error(ErrorCode::kLimit, where + ": class_name: nested models deeper than " + std::to_string(kMaxNesting) +
                    " levels are not supported");
      }
      auto c = std::make_unique<Model>();
      c->prefix = m.prefix + l.name + "/";
      c->spec = SpecParser(src_, version_, where, c->prefix).parse_model(l.cls, *l.config, true);
      c->parent = &m;
      c->parent_layer = i;
      c->scope = m.scope;
      c->scope.push_back(ScopeStep{l.name, l.cls, m.level, i});
      c->level = out_->levels.size();
      out_->levels.push_back(classes(c->spec));
      c->node_offset = first_node_index(l, version_);
      c->instances = m.instances * l.calls.size();
      if (c->instances > kMaxFlatCalls) {
        throw Error(ErrorCode::kLimit, where + ": inbound_nodes: inlining the nested model would make more than " +
                    std::to_string(kMaxFlatCalls) + " calls");
      }
      build_tree(*c, depth + 1);
      m.children[i] = std::move(c);
    }
  }

  // The flattened form of reference `r` made in instance `inst` of model `m`.
  TensorRef resolve(Model& m, size_t inst, const TensorRef& r, const std::string& where, int depth) {
    if (depth > kMaxResolveDepth) {
      throw Error(ErrorCode::kLimit, where + ": nested models are chained deeper than " + std::to_string(kMaxResolveDepth) +
                  " references (or through a cycle)");
    }
    auto it = m.by_name.find(r.layer);
    if (it == m.by_name.end()) {
      if (m.parent == nullptr) return r;  // the graph builder names the missing layer
      throw Error(ErrorCode::kFormat, where + ": inbound layer '" + r.layer + "' does not exist in nested model '" +
                  m.prefix.substr(0, m.prefix.size() - 1) + "'");
    }
    const LayerEntry& l = m.spec.layers[it->second];
    if (m.children[it->second]) {
      Model& c = *m.children[it->second];
      const int64_t calls = static_cast<int64_t>(l.calls.size());
      const int64_t call = r.node - c.node_offset;
      if (call < 0 || call >= calls) {
        throw Error(ErrorCode::kFormat, where + ": nested model '" + m.prefix + l.name + "' has no call (node) " +
                    std::to_string(r.node) + " (its " + std::to_string(calls) + " call(s) are nodes " +
                    std::to_string(c.node_offset) + " and up)");
      }
      if (r.tensor < 0 || r.tensor >= static_cast<int64_t>(c.spec.outputs.size())) {
        throw Error(ErrorCode::kFormat, where + ": output " + std::to_string(r.tensor) + " of nested model '" + m.prefix +
                    l.name + "' does not exist (it has " + std::to_string(c.spec.outputs.size()) + ")");
      }
      const size_t ci = inst * l.calls.size() + static_cast<size_t>(call);
      return resolve(c, ci, c.spec.outputs[static_cast<size_t>(r.tensor)],
                     layer_prefix(m, l) + ": output_layers", depth + 1);
    }
    if (m.parent == nullptr) return r;  // a layer of the top-level model: unchanged
    const std::string name = m.prefix + r.layer;
    if (l.cls == "InputLayer") {
      for (size_t k = 0; k < m.spec.inputs.size(); ++k) {
        if (m.spec.inputs[k].layer != r.layer) continue;
        if (r.node != 0 || r.tensor != 0) {
          throw Error(ErrorCode::kFormat, where + ": input layer '" + name + "' has no node " + std::to_string(r.node) +
                      " / tensor " + std::to_string(r.tensor));
        }
        return binding(m, inst, depth + 1)[k];
      }
      throw Error(ErrorCode::kFormat, where + ": input layer '" + name + "' is not listed in its model's input_layers");
    }
    if (r.node < 0 || r.node >= static_cast<int64_t>(l.calls.size())) {
      throw Error(ErrorCode::kFormat, where + ": layer '" + name + "' has no call (node) " + std::to_string(r.node) + " (it has " +
                  std::to_string(l.calls.size()) + ")");
    }
    if (r.tensor != 0) {
      throw Error(ErrorCode::kFormat, where + ": output " + std::to_string(r.tensor) + " of layer '" + name +
                  "' does not exist (layers have one output)");
    }
    return TensorRef{name, static_cast<int64_t>(inst * l.calls.size()) + r.node, 0};
  }

  // The flattened arguments instance `inst` of nested model `m` is called with.
  const std::vector<TensorRef>& binding(Model& m, size_t inst, int depth) {
    if (m.bindings.empty()) {
      m.bindings.resize(m.instances);
      m.binding_state.assign(m.instances, 0);
    }
    Model& p = *m.parent;
    const LayerEntry& l = p.spec.layers[m.parent_layer];
    const std::string where = layer_prefix(p, l) + ": inbound_nodes";
    if (m.binding_state[inst] == 2) return m.bindings[inst];
    if (m.binding_state[inst] == 1) throw Error(ErrorCode::kFormat, where + ": the model graph has a cycle through this nested model");
    m.binding_state[inst] = 1;
    const size_t calls = l.calls.size();
    const Call& call = l.calls[inst % calls];
    if (call.inputs.size() != m.spec.inputs.size()) {
      throw Error(ErrorCode::kFormat, where + ": called on " + std::to_string(call.inputs.size()) + " input(s); the nested model has " +
                  std::to_string(m.spec.inputs.size()) + " (input_layers)");
    }
    std::vector<TensorRef> refs;
    for (const TensorRef& r : call.inputs) refs.push_back(resolve(p, inst / calls, r, where, depth + 1));
    m.bindings[inst] = std::move(refs);
    m.binding_state[inst] = 2;
    return m.bindings[inst];
  }

  // Appends the flattened layers of `m` (and of the models nested in it, where they stand).
  void emit(Model& m) {
    for (size_t i = 0; i < m.spec.layers.size(); ++i) {
      LayerEntry& l = m.spec.layers[i];
      if (m.children[i]) {
        emit(*m.children[i]);
        continue;
      }
      const bool input = l.cls == "InputLayer";
      if (input && m.parent != nullptr) continue;  // bound to the outer call's arguments
      LayerEntry e;
      e.name = m.prefix + l.name;
      e.cls = l.cls;
      e.config = l.config;
      e.scope = m.scope;
      e.scope.push_back(ScopeStep{l.name, l.cls, m.level, i});
      if (input) {
        e.owned_config = std::move(l.owned_config);  // the config pointer stays valid
        e.calls = l.calls;
      } else {
        const std::string where = src_ + ": layer '" + e.name + "' (" + e.cls + "): inbound_nodes";
        if (m.instances * l.calls.size() > kMaxFlatCalls) {
          throw Error(ErrorCode::kLimit, where + ": inlining the nested model would make more than " +
                      std::to_string(kMaxFlatCalls) + " calls");
        }
        for (size_t inst = 0; inst < m.instances; ++inst) {
          for (const Call& c : l.calls) {
            Call fc;
            fc.kwargs = c.kwargs;
            for (const TensorRef& r : c.inputs) fc.inputs.push_back(resolve(m, inst, r, where, 0));
            e.calls.push_back(std::move(fc));
          }
        }
      }
      out_->layers.push_back(std::move(e));
      if (out_->layers.size() > kMaxLayers) {
        throw Error(ErrorCode::kLimit, src_ + ": model_config: too many layers once nested models are inlined");
      }
    }
  }

  std::string src_;
  Version version_;
  Model root_;
  ModelSpec* out_ = nullptr;
};

Dims input_dims(const LayerEntry& l, const LayerCtx& ctx) {
  const json* bs = nullptr;
  for (const char* k : {"batch_shape", "batch_input_shape"}) {
    auto it = l.config->find(k);
    if (it != l.config->end() && !it->is_null()) {
      bs = &*it;
      break;
    }
  }
  if (bs == nullptr) ctx.fail("batch_input_shape", "the input layer declares no shape");
  if (!bs->is_array() || bs->empty()) ctx.fail("batch_input_shape", "expected [batch, dims...], got " + short_json(*bs));
  Dims d;
  for (size_t i = 1; i < bs->size(); ++i) {
    const json& e = (*bs)[i];
    if (e.is_null()) {
      ctx.fail("batch_input_shape", "dimension " + std::to_string(i) + " of " + short_json(*bs) +
                                        " is dynamic (None); nnd needs fixed input shapes");
    }
    if (!e.is_number_integer() || e.get<int64_t>() < 1) {
      ctx.fail("batch_input_shape", "dimension " + std::to_string(i) + " of " + short_json(*bs) +
                                        " is not a positive integer");
    }
    if (e.get<int64_t>() > kMaxElements) {
      ctx.fail(ErrorCode::kLimit, "batch_input_shape", "dimension " + e.dump() + " exceeds the limit of " +
                                        std::to_string(kMaxElements));
    }
    d.push_back(e.get<int64_t>());
  }
  if (d.size() > 8) ctx.fail(ErrorCode::kUnsupported, "batch_input_shape", "rank " + std::to_string(d.size()) + " is not supported");
  element_count(d, ctx.prefix + ": batch_input_shape " + short_json(*bs));
  return d;
}

// The element type an InputLayer declares: float32, or uint8 (camera bytes, usually followed by a
// Rescaling layer, which casts to float32 in Keras; nnd converts the bytes to float32 on entry, the
// way the config's `inputs: {NAME: uint8}` does for a float32 input).
DType check_input_layer(const LayerEntry& l, const LayerCtx& ctx) {
  for (const char* k : {"sparse", "ragged"}) {
    auto it = l.config->find(k);
    if (it != l.config->end() && it->is_boolean() && it->get<bool>()) {
      ctx.fail(ErrorCode::kUnsupported, k, std::string(k) + " inputs are not supported");
    }
  }
  auto dt = l.config->find("dtype");
  if (dt != l.config->end() && !dt->is_null()) {
    std::string name;
    if (dt->is_string()) name = dt->get<std::string>();
    else if (dt->is_object() && dt->contains("config") && (*dt)["config"].is_object() &&
             (*dt)["config"].contains("name") && (*dt)["config"]["name"].is_string()) {
      name = (*dt)["config"]["name"].get<std::string>();
    }
    if (name == "uint8") return DType::kUInt8;
    if (name != "float32") {
      ctx.fail(ErrorCode::kUnsupported, "dtype", "input dtype '" + (name.empty() ? short_json(*dt) : name) +
                                                     "' is not supported (float32 and uint8 are)");
    }
  }
  return DType::kFloat32;
}

class GraphBuilder {
 public:
  GraphBuilder(ModelSpec& spec, std::string source, Version version, const WeightReader& reader)
      : spec_(spec), src_(std::move(source)), version_(version), reader_(reader) {}

  Graph build(const std::string& keras_version) {
    g_.source = src_;
    g_.format = ModelFormat::kKeras;
    g_.format_version = keras_version;
    index_layers();
    make_instances();
    std::vector<int> order = topo_order();
    create_inputs();
    for (int inst : order) emit(inst);
    create_outputs();
    verify_structure(g_);
    infer_shapes(g_);
    return std::move(g_);
  }

 private:
  struct Inst {
    size_t layer;
    size_t call;
    std::vector<int> inputs;
    ValueId value = -1;
  };

  std::string layer_prefix(const LayerEntry& l) const {
    return src_ + ": layer '" + l.name + "' (" + l.cls + ")";
  }
  LayerCtx ctx_of(const LayerEntry& l) const { return LayerCtx{layer_prefix(l), version_}; }

  void index_layers() {
    for (size_t i = 0; i < spec_.layers.size(); ++i) {
      const LayerEntry& l = spec_.layers[i];
      if (!by_name_.emplace(l.name, i).second) {
        ctx_of(l).fail("name", "two layers are named '" + l.name + "'");
      }
    }
  }

  bool is_input(const LayerEntry& l) const { return l.cls == "InputLayer"; }

  void make_instances() {
    first_inst_.resize(spec_.layers.size());
    for (size_t i = 0; i < spec_.layers.size(); ++i) {
      const LayerEntry& l = spec_.layers[i];
      first_inst_[i] = static_cast<int>(insts_.size());
      size_t n = is_input(l) ? 1 : l.calls.size();
      for (size_t k = 0; k < n; ++k) insts_.push_back(Inst{i, k, {}, -1});
    }
    for (Inst& inst : insts_) {
      const LayerEntry& l = spec_.layers[inst.layer];
      if (is_input(l)) continue;
      for (const TensorRef& r : l.calls[inst.call].inputs) {
        inst.inputs.push_back(resolve(r, layer_prefix(l) + ": inbound_nodes"));
      }
    }
  }

  int resolve(const TensorRef& r, const std::string& where) const {
    auto it = by_name_.find(r.layer);
    if (it == by_name_.end()) {
      throw Error(ErrorCode::kFormat, where + ": inbound layer '" + r.layer + "' does not exist");
    }
    const LayerEntry& l = spec_.layers[it->second];
    const int64_t calls = is_input(l) ? 1 : static_cast<int64_t>(l.calls.size());
    if (r.node < 0 || r.node >= calls) {
      throw Error(ErrorCode::kFormat, where + ": layer '" + r.layer + "' has no call (node) " + std::to_string(r.node) +
                  " (it has " + std::to_string(calls) + ")");
    }
    if (r.tensor != 0) {
      throw Error(ErrorCode::kFormat, where + ": output " + std::to_string(r.tensor) + " of layer '" + r.layer +
                  "' does not exist (layers have one output)");
    }
    return first_inst_[it->second] + static_cast<int>(r.node);
  }

  std::vector<int> topo_order() {
    for (const TensorRef& r : spec_.outputs) out_insts_.push_back(resolve(r, src_ + ": output_layers"));
    for (const TensorRef& r : spec_.inputs) {
      int i = resolve(r, src_ + ": input_layers");
      const LayerEntry& l = spec_.layers[insts_[i].layer];
      if (!is_input(l)) {
        throw Error(ErrorCode::kFormat, src_ + ": input_layers: '" + l.name + "' is a " + l.cls + ", not an InputLayer");
      }
      in_insts_.push_back(i);
    }
    // Reachable from the outputs (iterative DFS).
    std::vector<char> reach(insts_.size(), 0);
    std::vector<int> stack(out_insts_.begin(), out_insts_.end());
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      if (reach[i]) continue;
      reach[i] = 1;
      for (int j : insts_[i].inputs) stack.push_back(j);
    }
    // Kahn's algorithm in config order (layer index, call index == instance index).
    std::vector<int> indeg(insts_.size(), 0);
    std::vector<std::vector<int>> users(insts_.size());
    for (size_t i = 0; i < insts_.size(); ++i) {
      if (!reach[i]) continue;
      for (int j : insts_[i].inputs) {
        ++indeg[i];
        users[j].push_back(static_cast<int>(i));
      }
    }
    std::set<int> ready;
    size_t total = 0;
    for (size_t i = 0; i < insts_.size(); ++i) {
      if (!reach[i]) continue;
      ++total;
      if (indeg[i] == 0) ready.insert(static_cast<int>(i));
    }
    std::vector<int> order;
    while (!ready.empty()) {
      int i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (int u : users[i]) {
        if (--indeg[u] == 0) ready.insert(u);
      }
    }
    if (order.size() != total) {
      for (size_t i = 0; i < insts_.size(); ++i) {
        if (reach[i] && indeg[i] > 0) {
          const LayerEntry& l = spec_.layers[insts_[i].layer];
          throw Error(ErrorCode::kFormat, layer_prefix(l) + ": inbound_nodes: the model graph has a cycle through this layer");
        }
      }
    }
    return order;
  }

  std::string value_name(const Inst& inst) const {
    const std::string& n = spec_.layers[inst.layer].name;
    return inst.call == 0 ? n : n + ":" + std::to_string(inst.call);
  }

  void create_inputs() {
    for (int i : in_insts_) {
      Inst& inst = insts_[i];
      if (inst.value >= 0) {
        throw Error(ErrorCode::kFormat, src_ + ": input_layers: '" + spec_.layers[inst.layer].name + "' is listed twice");
      }
      const LayerEntry& l = spec_.layers[inst.layer];
      LayerCtx ctx = ctx_of(l);
      Value v;
      v.dtype = check_input_layer(l, ctx);
      v.name = l.name;
      v.shape = input_dims(l, ctx);
      inst.value = static_cast<ValueId>(g_.values.size());
      g_.values.push_back(std::move(v));
      g_.inputs.push_back(inst.value);
      g_.input_names.push_back(l.name);
    }
  }

  // A shared layer's weights are read once, at its first call.
  const std::vector<std::pair<std::string, Weights>>& layer_weights(size_t layer, const MappedLayer& m,
                                                                    const LayerCtx& ctx) {
    auto it = weight_cache_.find(layer);
    if (it != weight_cache_.end()) return it->second;
    return weight_cache_[layer] = reader_(spec_, layer, m, ctx);
  }

  void emit(int index) {
    Inst& inst = insts_[index];
    const LayerEntry& l = spec_.layers[inst.layer];
    LayerCtx ctx = ctx_of(l);
    if (is_input(l)) {
      if (inst.value < 0) {
        ctx.fail("input_layers", "the model uses this input layer but does not list it in input_layers");
      }
      return;
    }
    const Call& call = l.calls[inst.call];
    MappedLayer m = map_layer(l.cls, *l.config, call.kwargs, ctx);
    const int n_in = static_cast<int>(inst.inputs.size());
    if (n_in < m.min_inputs || n_in > m.max_inputs) {
      ctx.fail("inbound_nodes", "called on " + std::to_string(n_in) + " input(s); " + l.cls + " takes " +
                                    (m.min_inputs == m.max_inputs ? std::to_string(m.min_inputs)
                                                                  : "at least " + std::to_string(m.min_inputs)));
    }
    Node node;
    node.name = l.name;
    node.source_op = l.cls;
    for (int j : inst.inputs) node.inputs.push_back(insts_[j].value);
    if (!m.weights.empty()) {
      if (reader_) {
        attach_weights(m, layer_weights(inst.layer, m, ctx), ctx);
      } else {
        zero_weights(m, current_shapes(node.inputs), ctx);
      }
    }
    if (m.complete_from_shapes) m.complete_from_shapes(m, current_shapes(node.inputs));
    node.params = std::move(m.params);
    Value v;
    v.name = value_name(inst);
    v.producer = static_cast<NodeId>(g_.nodes.size());
    inst.value = static_cast<ValueId>(g_.values.size());
    node.output = inst.value;
    g_.values.push_back(std::move(v));
    g_.nodes.push_back(std::move(node));
  }

  // Shapes of `ids` in the graph built so far (JSON-only mode needs them to size zero weights):
  // runs shape inference on the partial graph with those values as temporary outputs.
  std::vector<Dims> current_shapes(const std::vector<ValueId>& ids) {
    std::vector<ValueId> saved_out = std::move(g_.outputs);
    std::vector<std::string> saved_names = std::move(g_.output_names);
    g_.outputs = ids;
    g_.output_names.assign(ids.size(), "");
    try {
      infer_shapes(g_);
    } catch (...) {
      g_.outputs = std::move(saved_out);
      g_.output_names = std::move(saved_names);
      throw;
    }
    g_.outputs = std::move(saved_out);
    g_.output_names = std::move(saved_names);
    std::vector<Dims> out;
    for (ValueId v : ids) out.push_back(g_.values[v].shape);
    return out;
  }

  void create_outputs() {
    std::set<std::string> used;
    for (size_t o = 0; o < out_insts_.size(); ++o) {
      const Inst& inst = insts_[out_insts_[o]];
      // The name the top-level model gives the output: a nested model's outputs carry its name.
      const std::string& base = spec_.output_names[o];
      std::string name = base;
      if (used.count(name) && base == spec_.layers[inst.layer].name) name = value_name(inst);
      for (int k = 1; used.count(name); ++k) name = base + ":" + std::to_string(k);
      used.insert(name);
      g_.outputs.push_back(inst.value);
      g_.output_names.push_back(name);
    }
  }

  ModelSpec& spec_;
  std::string src_;
  Version version_;
  const WeightReader& reader_;
  Graph g_;
  std::map<std::string, size_t> by_name_;
  std::vector<Inst> insts_;
  std::vector<int> first_inst_;
  std::vector<int> in_insts_, out_insts_;
  std::map<size_t, std::vector<std::pair<std::string, Weights>>> weight_cache_;
};

}  // namespace

Graph build_graph(const std::string& config_text, const std::string& keras_version,
                  const std::string& source, const WeightReader& reader) {
  json root = parse_json(config_text, source + ": model_config");
  Version version = keras_version.empty() ? guess_version(root) : version_from_string(keras_version);
  try {
    ModelSpec spec = Flattener(source, version).run(SpecParser(source, version).parse(root));
    return GraphBuilder(spec, source, version, reader).build(keras_version);
  } catch (const json::exception& e) {
    // Every access is type-checked; this is a safety net that keeps the file name in the message.
    throw Error(ErrorCode::kFormat, source + ": model_config: unexpected JSON structure: " + e.what());
  }
}

}  // namespace nnd::keras
