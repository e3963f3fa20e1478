// What the soak clients ask for and what the answers must be: the example models, the two
// configs A and B the daemon alternates between, a small deterministic input pool per model and
// the expected outputs of every pool sample computed in-process with nnd's own engine (the same
// engine kinds, ISA choice and math modes the daemon is configured with).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "soak_state.h"

namespace nnd::soak {

// One model file with its input pool and expected outputs.
struct ModelData {
  std::string path;
  std::string input_name;        // Keras input layer name (a client tells `flip`'s layout by it)
  bool uint8_input = false;      // the config declares the input uint8 (camera bytes)
  size_t n = 0;                  // samples in the pool
  size_t in_bytes = 0;           // bytes of one input sample
  std::vector<size_t> out_floats;          // floats of one sample, per output
  std::vector<uint8_t> inputs;             // n * in_bytes
  std::vector<std::vector<float>> exact;   // [output][n * out_floats]: JIT, exact math
  std::vector<std::vector<float>> reference;  // same from the reference engine (only where a config uses it)
  std::string engine;                      // the in-process engine of `exact`, e.g. "jit-avx2"
};

// Which expectation an answer matched.
enum class Match { kExact, kReference, kBoth, kNeither };

// Served models (names clients use):
//   ball  A: ball_patch.h5, JIT exact math, max_batch 32, batch_delay 300 us
//         B: the same file, reference engine, max_batch 16, batch_delay 0 (same layout, other
//            numbers: an answer shows which config's engine computed it)
//   fb    A: field_boundary.h5, max_batch 4;  B: absent (UNKNOWN_MODEL), back in the next A
//   flip  A: ball_patch.h5;  B: field_boundary.h5 (layout change: MODEL_CHANGED, re-query)
//   det   A and B: detector.h5 with a uint8 input, max_batch 2 (unchanged: keeps its engines)
struct Workload {
  ModelData ball, fb, det;
  // The ISA calibration cache file shared by the in-process engines and every daemon config:
  // with `isa: auto` measuring, the two would otherwise choose separately, and a near-tie (AVX2
  // and AVX-512 on ball_patch) could go to different ISAs, whose answers differ in the last bits.
  std::string isa_cache;

  // Loads the models from `models_dir` and computes the pools with `isa_cache` (an absolute path);
  // throws nnd::Error on failure or if a batched run is not bit-exact with single runs (the daemon
  // batches requests of several clients together and every answer is compared bit for bit).
  static Workload build(const std::string& models_dir, const std::string& isa_cache);

  // The config file text for `which` (endpoint by name; the daemon gets NND_RUNTIME_DIR).
  std::string config_yaml(Config which, const std::string& endpoint, int workers) const;

  // Largest batch a client may send to each model: the smaller of the two configs' max_batch,
  // so a request built under one config stays valid under the other.
  static constexpr uint32_t kBallBatch = 16, kFbBatch = 4, kFlipBatch = 8, kDetBatch = 2;
};

// Copies pool samples (first + b) % n, b < batch, into `dst` (batch * in_bytes bytes).
void fill_input(const ModelData& m, size_t first, uint32_t batch, void* dst);

// Compares outputs (out[k] holds batch samples of output k) with the pool's expectations.
Match match_output(const ModelData& m, size_t first, uint32_t batch,
                   const std::vector<const float*>& out);

}  // namespace nnd::soak
