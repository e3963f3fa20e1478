#include "core/io/keras_archive.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/io/hdf5_file.h"
#include "core/io/keras_model.h"
#include "core/io/zip_archive.h"
#include "core/util/error.h"

namespace nnd {
namespace {

using keras::json;
using keras::LayerCtx;
using keras::MappedLayer;
using keras::ModelSpec;

constexpr uint64_t kMaxJsonBytes = 64ull << 20;
constexpr uint64_t kMaxWeightsBytes = 4ull << 30;

constexpr const char* kConfig = "config.json";
constexpr const char* kMetadata = "metadata.json";
constexpr const char* kWeights = "model.weights.h5";

// Keras' naming.to_snake_case, which saving_lib applies to a layer's Python class name:
// drop non-word characters, then "_" before each capitalised word and between a lower-case
// letter and a capital ("Conv2D" -> "conv2d", "BatchNormalization" -> "batch_normalization",
// "PReLU" -> "p_re_lu", "Conv2DTranspose" -> "conv2d_transpose").
std::string snake_case(const std::string& cls) {
  auto upper = [](char ch) { return ch >= 'A' && ch <= 'Z'; };
  auto lower = [](char ch) { return ch >= 'a' && ch <= 'z'; };
  std::string s;
  for (char ch : cls) {
    if (upper(ch) || lower(ch) || (ch >= '0' && ch <= '9') || ch == '_') s += ch;  // drop \W
  }
  // re.sub("(.)([A-Z][a-z]+)", r"\1_\2"): matches scanned left to right, never overlapping.
  std::string t;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && upper(s[i + 1]) && lower(s[i + 2])) {
      size_t j = i + 2;
      while (j < s.size() && lower(s[j])) ++j;
      t += s[i];
      t += '_';
      t.append(s, i + 1, j - i - 1);
      i = j;
    } else {
      t += s[i++];
    }
  }
  // re.sub("([a-z])([A-Z])", r"\1_\2"), then lower-case.
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (i + 1 < t.size() && lower(t[i]) && upper(t[i + 1])) {
      out += t[i];
      out += '_';
      out += t[i + 1];
      i += 2;
    } else {
      out += t[i++];
    }
  }
  for (char& ch : out) {
    if (upper(ch)) ch = static_cast<char>(ch - 'A' + 'a');
  }
  return out;
}

std::string joined(const std::vector<std::string>& names, size_t max_names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max_names; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max_names) out += ", ...";
  return out.empty() ? "none" : out;
}

// keras_version from metadata.json ("" when the archive has none: the dialect is then guessed).
std::string read_keras_version(const ZipArchive& zip) {
  std::optional<std::string> text = zip.read(kMetadata, kMaxJsonBytes);
  if (!text) return "";
  json meta;
  try {
    meta = json::parse(*text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kFormat, zip.name() + ": " + kMetadata + ": invalid JSON: " + e.what());
  }
  auto v = meta.is_object() ? meta.find("keras_version") : meta.end();
  if (meta.is_object() && v != meta.end() && v->is_string()) return v->get<std::string>();
  return "";
}

// Where a layer's group lives in model.weights.h5: one "<root>/<snake class>[_k]" step per
// model level ("layers/functional/layers/dense_1/" for the second Dense of a nested Functional
// model; its variables are in "vars" below, or in a sub-layer's, see WeightSpec::archive_group), k counting earlier layers of the same snake-case class in that model's list.
// Input layers own no variables and are not part of a Sequential model's list; their class name
// is their own, so counting them changes no other layer's path.
class VariablePaths {
 public:
  VariablePaths(const ModelSpec& spec, std::string root) : spec_(spec), root_(std::move(root)) {}

  std::string of(const std::vector<keras::ScopeStep>& scope) {
    std::string path;
    for (const keras::ScopeStep& s : scope) path += root_ + "/" + slots(s.level).at(s.index) + "/";
    return path;
  }

 private:
  // The path component of every layer in ModelSpec::levels[level], computed once per level.
  const std::vector<std::string>& slots(size_t level) {
    auto it = slots_.find(level);
    if (it != slots_.end()) return it->second;
    std::vector<std::string> names;
    std::map<std::string, int> used;
    for (const std::string& cls : spec_.levels.at(level)) {
      const std::string base = snake_case(cls);
      auto [u, first] = used.emplace(base, 0);
      names.push_back(first ? base : base + "_" + std::to_string(++u->second));
    }
    return slots_[level] = std::move(names);
  }

  const ModelSpec& spec_;
  std::string root_;
  std::map<size_t, std::vector<std::string>> slots_;
};

Graph load_archive(const ZipArchive& zip) {
  const std::string& src = zip.name();
  std::optional<std::string> config = zip.read(kConfig, kMaxJsonBytes);
  if (!config) {
    throw Error(ErrorCode::kFormat, src + ": a zip archive without " + kConfig + ", so not a Keras .keras file (entries: " +
                joined(zip.entry_names(), 8) + ")");
  }
  const std::string keras_version = read_keras_version(zip);
  std::optional<std::string> weights = zip.read(kWeights, kMaxWeightsBytes);
  if (!weights) {
    if (zip.has("model.weights.npz")) {
      throw Error(ErrorCode::kUnsupported, src + ": the weights are stored as model.weights.npz; nnd reads the default "
                        "model.weights.h5 (save with model.save(path) without weights_format)");
    }
    throw Error(ErrorCode::kFormat, src + ": the archive has no " + kWeights + " (entries: " + joined(zip.entry_names(), 8) + ")");
  }
  // A path below the archive file cannot name an existing file (HDF5's core driver refuses those).
  h5::File file(weights->data(), weights->size(), src + "/" + kWeights);
  weights.reset();  // the core driver holds its own copy

  // tf.keras 2.13 to 2.15 wrote the layer list as "_layer_checkpoint_dependencies".
  std::string root = "layers";
  if (!file.open_group(file.root(), root) && file.open_group(file.root(), "_layer_checkpoint_dependencies")) {
    root = "_layer_checkpoint_dependencies";
  }
  std::optional<VariablePaths> paths;
  keras::WeightReader reader = [&](const ModelSpec& spec, size_t layer, const MappedLayer& expected,
                                   const LayerCtx& ctx) {
    if (!paths) paths.emplace(spec, root);
    const std::string layer_path = paths->of(spec.layers[layer].scope);
    const std::string what = "layer '" + spec.layers[layer].name + "' (" + spec.layers[layer].cls + ")";
    // The expected weights, grouped by the group holding them, in order within each group.
    std::vector<std::pair<std::string, std::vector<const keras::WeightSpec*>>> groups;
    for (const keras::WeightSpec& w : expected.weights) {
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == w.archive_group; });
      if (g == groups.end()) g = groups.insert(groups.end(), {w.archive_group, {}});
      g->second.push_back(&w);
    }
    std::vector<std::pair<std::string, Weights>> out;
    for (const auto& [sub, specs] : groups) {
      const std::string path = layer_path + sub;
      std::string roles;
      for (const keras::WeightSpec* w : specs) roles += (roles.empty() ? "" : ", ") + w->role;
      std::optional<h5::Handle> group = file.open_group(file.root(), path);
      if (!group) {
        ctx.fail("weights", std::string(kWeights) + " has no group '" + path + "' (Keras stores the " +
                                "variables of the k-th " + spec.layers[layer].cls + " of the " +
                                (spec.layers[layer].scope.size() > 1 ? "nested model" : "model") + " there)");
      }
      for (size_t i = 0; i < specs.size(); ++i) {
        const std::string& role = specs[i]->role;
        std::optional<Weights> w =
            file.read_float_dataset(group->get(), std::to_string(i), what + ": " + role, specs[i]->unused);
        if (!w) {
          ctx.fail("weights", path + " has " + std::to_string(i) + " variable(s); the layer's config implies " +
                                  std::to_string(specs.size()) + " (" + roles + ")");
        }
        out.emplace_back(role, std::move(*w));
      }
      if (file.read_float_dataset(group->get(), std::to_string(specs.size()), what)) {
        ctx.fail("weights", path + " has more variables than the " + std::to_string(specs.size()) +
                                " the layer's config implies (" + roles + "); a quantized or LoRA layer?");
      }
    }
    return out;
  };
  return keras::build_graph(*config, keras_version, src, reader);
}

}  // namespace

Graph load_keras_archive(const std::string& path) { return load_archive(ZipArchive::open_file(path)); }

Graph load_keras_archive_bytes(const void* data, size_t size, const std::string& name) {
  return load_archive(ZipArchive::open_bytes(data, size, name));
}

}  // namespace nnd
