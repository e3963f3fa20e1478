// Shared test helpers: the .npy files a fixture manifest lists ({"<name_key>": tensor name,
// "file": path below `dir`, for ONNX fixtures also "onnx_shape" with "N" for the batch), read as
// nnd exchanges tensors: batch first. A tensor whose batch is not axis 0 in the ONNX file (an RNN
// state [directions, N, units]) is stored in that layout by the generator and moved batch-first
// here, which is how nnd serves it (docs/onnx.md).
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/model_inputs.h"
#include "core/io/npy.h"

namespace nnd::test {

// The axis holding the batch ("N") in a manifest entry's "onnx_shape"; 0 when it has none.
inline size_t listed_batch_axis(const nlohmann::json& entry) {
  if (!entry.contains("onnx_shape")) return 0;
  const auto& s = entry.at("onnx_shape");
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k].is_string()) return k;
  }
  return 0;
}

// `a` with axis `axis` moved to the front (other axes keep their order).
inline NpyArray batch_to_front(const NpyArray& a, size_t axis) {
  if (axis == 0) return a;
  const size_t elem = a.dtype == DType::kUInt8 ? 1 : 4;
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= a.shape[k];
  for (size_t k = axis + 1; k < a.shape.size(); ++k) inner *= a.shape[k];
  const int64_t n = a.shape[axis];
  NpyArray out = a;
  out.shape.erase(out.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  out.shape.insert(out.shape.begin(), n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t b = 0; b < n; ++b) {
      const auto src = static_cast<size_t>(((o * n + b) * inner)) * elem;
      const auto dst = static_cast<size_t>(((b * outer + o) * inner)) * elem;
      std::copy_n(a.bytes.begin() + static_cast<std::ptrdiff_t>(src), static_cast<size_t>(inner) * elem,
                  out.bytes.begin() + static_cast<std::ptrdiff_t>(dst));
    }
  }
  return out;
}

inline NpyArray read_listed_npy(const std::filesystem::path& dir, const nlohmann::json& entry) {
  return batch_to_front(read_npy((dir / entry.at("file").get<std::string>()).string()), listed_batch_axis(entry));
}

// The model's inputs from the listed files, batch first. The batch axis of a file is its "N"
// axis, or, when the file fixes every axis (batch 1), the first axis of length 1 whose removal
// leaves the model's per-sample shape (a time-major [T, 1, F] input): moving an axis of length 1
// keeps the bytes. A file whose whole shape is the model's per-sample shape (a model that fixes
// its batch above 1 and uses axis 0 as data, read as whole samples) is one sample.
inline ModelInputs prepare_listed_inputs(const Graph& g, const nlohmann::json& listed,
                                         const std::filesystem::path& dir, const char* name_key = "name") {
  std::map<std::string, NpyArray> arrays;
  std::map<std::string, std::string> sources;
  int64_t batch = 0;
  for (const auto& in : listed) {
    const std::string name = in.at(name_key).get<std::string>();
    NpyArray a = read_npy((dir / in.at("file").get<std::string>()).string());
    size_t axis = listed_batch_axis(in);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (g.input_names[i] != name || axis != 0) continue;
      const Dims& sample = g.values[static_cast<size_t>(g.inputs[i])].shape;
      if (a.shape == sample) {
        a.shape.insert(a.shape.begin(), 1);
        break;
      }
      for (size_t k = 0; k < a.shape.size(); ++k) {
        std::vector<int64_t> rest = a.shape;
        rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(k));
        if (rest == sample && (k == 0 || a.shape[k] == 1)) {
          axis = k;
          break;
        }
      }
    }
    a = batch_to_front(a, axis);
    batch = a.shape.empty() ? 0 : a.shape[0];
    sources[name] = in.at("file").get<std::string>();
    arrays[name] = std::move(a);
  }
  ModelInputs inputs = prepare_inputs(g, {}, batch);  // patterns of the right shapes, replaced below
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const auto it = arrays.find(g.input_names[i]);
    if (it == arrays.end()) continue;
    NpyArray& slot = inputs.arrays[i];
    if (it->second.shape != slot.shape) {
      throw std::runtime_error("listed input " + g.input_names[i] + " does not have the shape the model takes");
    }
    slot = std::move(it->second);
    inputs.sources[i] = sources[g.input_names[i]];
  }
  return inputs;
}

}  // namespace nnd::test
