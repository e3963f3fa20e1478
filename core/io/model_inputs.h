// How tools turn .npy files (or nothing) into a model's input batch, and its outputs back into
// .npy files: one set of conventions shared by nnrun, nnctl and the tests, so results compare
// file by file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/io/npy.h"

namespace nnd {

// The deterministic input pattern used when no file is given for an input: for the input at
// position `input_index` in the model's input list and flat element index j over the whole batch
// (batch-major, C order),
//     value(j) = ((j * 37 + input_index * 101) mod 256) / 255      (float32, in [0, 1])
// The same bytes are produced on every machine and by every tool.
NpyArray deterministic_input(const Dims& sample_shape, int64_t batch, size_t input_index);

// A model's inputs for one run: one array per graph input, in Graph::inputs order, all with the
// same batch size (the first axis). `files` maps Keras input names to .npy paths; inputs without a
// file get the deterministic pattern with `batch` samples (`batch` <= 0 means: take the batch from
// the files, or 1 when there are none). Throws nnd::Error for an unknown input name, a file whose
// shape does not match the input's per-sample shape, a batch that disagrees with another input or
// with `batch`, or an unsupported dtype.
struct ModelInputs {
  int64_t batch = 1;
  std::vector<NpyArray> arrays;
  std::vector<std::string> sources;  // file path or "pattern", per input

  std::vector<InputView> views() const;
};
ModelInputs prepare_inputs(const Graph& g, const std::map<std::string, std::string>& files,
                           int64_t batch);

// Throws kInvalidArgument naming `path` unless `a` holds what an input takes: float32, or uint8
// (camera bytes). prepare_inputs and nnctl infer check their input files with it.
void check_input_file_dtype(const NpyArray& a, const std::string& path);

// Output buffers for a run of `batch` samples, one per graph output, in its dtype.
struct ModelOutputs {
  int64_t batch = 1;
  std::vector<DType> dtypes;                  // per output: float32, or int64 (ArgMax indices)
  std::vector<std::vector<float>> buffers;    // float32 outputs (empty for an int64 one)
  std::vector<std::vector<int64_t>> indices;  // int64 outputs (empty for a float32 one)
  std::vector<OutputView> views();            // for Engine::run
  double value(size_t output, size_t k) const;  // element k of an output, whatever its dtype
  size_t size(size_t output) const;             // elements of an output
};
ModelOutputs allocate_outputs(const Graph& g, int64_t batch);

// Writes each output to DIR/<Keras output layer name>.npy (in its dtype, batch first) and returns
// the paths written. Output names containing '/' are written with '_' instead.
std::vector<std::string> write_outputs(const Graph& g, const ModelOutputs& out,
                                       const std::string& dir);

}  // namespace nnd
