#include "core/io/model_inputs.h"

#include <filesystem>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd {

NpyArray deterministic_input(const Dims& sample_shape, int64_t batch, size_t input_index) {
  NpyArray a;
  a.dtype = DType::kFloat32;
  a.shape.push_back(batch);
  a.shape.insert(a.shape.end(), sample_shape.begin(), sample_shape.end());
  const int64_t n = a.element_count();
  a.bytes.resize(static_cast<size_t>(n) * sizeof(float));
  auto* f = reinterpret_cast<float*>(a.bytes.data());
  const uint64_t offset = static_cast<uint64_t>(input_index) * 101;
  for (int64_t j = 0; j < n; ++j) {
    f[j] = static_cast<float>((static_cast<uint64_t>(j) * 37 + offset) % 256) / 255.0f;
  }
  return a;
}

std::vector<InputView> ModelInputs::views() const {
  std::vector<InputView> v;
  for (const NpyArray& a : arrays) v.push_back({a.dtype, a.bytes.data()});
  return v;
}

void check_input_file_dtype(const NpyArray& a, const std::string& path) {
  if (a.dtype != DType::kFloat32 && a.dtype != DType::kUInt8) {
    throw Error(ErrorCode::kInvalidArgument, path + ": " + dtype_name(a.dtype) + " data; an input takes float32 or uint8 "
                                                   "(camera bytes)");
  }
}

ModelInputs prepare_inputs(const Graph& g, const std::map<std::string, std::string>& files,
                           int64_t batch) {
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const std::string& n : g.input_names) known |= (n == name);
    if (!known) {
      std::string list;
      for (const std::string& n : g.input_names) list += (list.empty() ? "" : ", ") + n;
      throw Error(ErrorCode::kInvalidArgument, "--input " + name + "=" + path + ": the model has no input named '" + name +
                  "' (its inputs: " + list + ")");
    }
  }
  ModelInputs in;
  in.arrays.resize(g.inputs.size());
  in.sources.resize(g.inputs.size());
  int64_t file_batch = -1;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto it = files.find(g.input_names[i]);
    if (it == files.end()) continue;
    NpyArray a = read_npy(it->second);
    check_input_file_dtype(a, it->second);
    const Dims& want = g.values[g.inputs[i]].shape;
    Dims got_sample(a.shape.size() > 0 ? a.shape.begin() + 1 : a.shape.end(), a.shape.end());
    if (a.shape.empty() || got_sample != want) {
      throw Error(ErrorCode::kInvalidArgument, it->second + ": shape " + dims_to_string(a.shape) + " does not fit input '" +
                  g.input_names[i] + "', which takes (batch, " +
                  dims_to_string(want).substr(1));
    }
    if (a.shape[0] < 1) throw Error(ErrorCode::kInvalidArgument, it->second + ": the batch (first axis) is empty");
    if (file_batch >= 0 && a.shape[0] != file_batch) {
      throw Error(ErrorCode::kInvalidArgument, it->second + ": batch " + std::to_string(a.shape[0]) +
                  " differs from the other inputs' batch " + std::to_string(file_batch));
    }
    file_batch = a.shape[0];
    in.arrays[i] = std::move(a);
    in.sources[i] = it->second;
  }
  if (file_batch >= 0 && batch > 0 && batch != file_batch) {
    throw Error(ErrorCode::kInvalidArgument, "--batch " + std::to_string(batch) + " disagrees with the input files' batch " +
                std::to_string(file_batch));
  }
  in.batch = file_batch >= 0 ? file_batch : (batch > 0 ? batch : 1);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!in.sources[i].empty()) continue;
    in.arrays[i] = deterministic_input(g.values[g.inputs[i]].shape, in.batch, i);
    in.sources[i] = "pattern";
  }
  return in;
}

std::vector<OutputView> ModelOutputs::views() {
  std::vector<OutputView> v;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    v.push_back({dtypes[i], dtypes[i] == DType::kInt64 ? static_cast<void*>(indices[i].data()) : buffers[i].data()});
  }
  return v;
}

double ModelOutputs::value(size_t output, size_t k) const {
  return dtypes[output] == DType::kInt64 ? static_cast<double>(indices[output][k]) : buffers[output][k];
}

size_t ModelOutputs::size(size_t output) const {
  return dtypes[output] == DType::kInt64 ? indices[output].size() : buffers[output].size();
}

ModelOutputs allocate_outputs(const Graph& g, int64_t batch) {
  ModelOutputs out;
  out.batch = batch;
  for (ValueId v : g.outputs) {
    const int64_t n = checked_mul(batch, element_count(g.values[v].shape, "output"), "output");
    const DType t = output_view_dtype(g.values[v].dtype);
    out.dtypes.push_back(t);
    out.buffers.emplace_back(t == DType::kInt64 ? 0 : static_cast<size_t>(n));
    out.indices.emplace_back(t == DType::kInt64 ? static_cast<size_t>(n) : 0);
  }
  return out;
}

std::vector<std::string> write_outputs(const Graph& g, const ModelOutputs& out,
                                       const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorCode::kIo, dir + ": cannot create the output directory: " + ec.message());
  std::vector<std::string> paths;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    std::string file = g.output_names[i];
    for (char& c : file) {
      if (c == '/') c = '_';
    }
    std::vector<int64_t> shape{out.batch};
    const Dims& s = g.values[g.outputs[i]].shape;
    shape.insert(shape.end(), s.begin(), s.end());
    const std::string path = (std::filesystem::path(dir) / (file + ".npy")).string();
    write_npy(path, shape, out.dtypes[i],
              out.dtypes[i] == DType::kInt64 ? static_cast<const void*>(out.indices[i].data()) : out.buffers[i].data());
    paths.push_back(path);
  }
  return paths;
}

}  // namespace nnd
