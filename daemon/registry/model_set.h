// The set of models the daemon serves, as one immutable snapshot per configuration generation.
//
// The IPC server and the workers read `ModelRegistry::current()` for each new request and keep the
// shared_ptr of the ServedModel a request started on until it completes, so a reload (which
// publishes a new snapshot) never disturbs requests in flight: they finish on their version.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/engine_options.h"
#include "core/ir/graph.h"
#include "daemon/config/model_settings.h"

namespace nnd::daemon {

// One loaded and compiled model. Immutable after construction; its one engine serves every
// worker thread at once (Engine::run is safe to call concurrently, core/engine/engine.h).
struct ServedModel {
  ModelSettings settings;
  // The model's interface: its input and output values and names, no layers and no weights
  // (interface_graph(); the engine holds what it runs).
  Graph graph;
  uint32_t version = 1;          // increments each time a reload recompiles this model
  uint64_t signature = 0;        // hash of what a client must re-read when it changes: input and
                                 // output names, dtypes and shapes, and max_batch
                                 // (model_signature)
  std::vector<DType> input_dtypes;         // per graph input, after overrides
  std::vector<size_t> input_sample_bytes;  // per graph input
  std::vector<DType> output_dtypes;        // per graph output: float32, or int64 (ArgMax indices)
  std::vector<size_t> output_sample_bytes; // per graph output
  // Shared by all workers, and by the next generation's ServedModel of this model when a reload
  // changes only how it is scheduled (batch_delay_us, priority, max_batch).
  std::shared_ptr<Engine> engine;
  int run_threads = 1;           // cores one run uses (JitEngine::threads()); > 1: the dispatcher
                                 // schedules it as a split model (daemon/ipc/dispatcher.h)
  double compile_ms = 0;
  uint64_t code_bytes = 0;       // 0 for the reference engine
  uint64_t file_hash = 0;        // of the file's bytes (model_file_hash), read before loading:
                                 // a reload recompiles when it differs
  std::string engine_name;       // engine->name(): "reference", "jit-avx2", ...
  int64_t parameters = 0;        // core/ir/cost.h figures, for `nnd --check` and logs
  int64_t flops_per_sample = 0;
};

// One configuration generation: all models by name.
struct ModelSet {
  uint64_t generation = 0;
  std::vector<std::shared_ptr<ServedModel>> models;

  std::shared_ptr<ServedModel> find(const std::string& name) const {
    for (const auto& m : models) {
      if (m->settings.name == name) return m;
    }
    return nullptr;
  }
};

// Holds the current snapshot; publish() swaps it atomically.
class ModelRegistry {
 public:
  std::shared_ptr<const ModelSet> current() const { return std::atomic_load(&current_); }
  void publish(std::shared_ptr<const ModelSet> set) { std::atomic_store(&current_, std::move(set)); }

 private:
  std::shared_ptr<const ModelSet> current_ = std::make_shared<ModelSet>();
};

}  // namespace nnd::daemon
