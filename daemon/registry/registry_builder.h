// Building a ModelSet from the config's model list: load every Keras file, apply the input dtype
// overrides, compile one engine per model (shared by every worker thread: Engine::run is
// re-entrant), warm it up with one inference, and
// compute the figures the IPC layer needs (signature, per-sample byte counts). Models are compiled
// in parallel on up to `compile_threads` threads.
//
// On reload, pass the set being served as `previous`: a model whose file's bytes (model_file_hash)
// and compile settings (compile_settings_equal) are unchanged is not recompiled: it is reused as
// is (same ServedModel object) when its scheduling settings are unchanged too, else a new
// ServedModel shares its engine with the new settings (batch_delay_us, priority, max_batch;
// same version). A new or changed model is compiled and gets version previous+1 (1 when new).
// The signature covers the input/output names, dtypes and shapes and max_batch: what a client
// must re-read when it changes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/registry/model_set.h"
#include "daemon/base/daemon_error.h"
#include "daemon/base/logger.h"

namespace nnd::daemon {

// Turns a model's file into a graph for compile_model. Empty: load_model(settings.path) in this
// process. The daemon passes one that lets a child process parse the file first
// (daemon/registry/model_validator.h), so that bytes which crash a parser cannot crash it.
// Throws nnd::Error naming the file.
using GraphLoader = std::function<Graph(const ModelSettings& settings)>;

// Makes a model's engine. Empty: nnd::make_engine. Tests pass one that fails in a chosen way, to
// check which failures `engine: auto` survives.
using EngineFactory = std::function<std::unique_ptr<Engine>(const Graph& g, const EngineOptions& options)>;

struct BuildOptions {
  uint32_t compile_threads = 0;  // 0: one per online CPU, at most one per model
  bool low_priority = false;     // compile threads run at nice 10 (reload: stay off the data path)
  bool warm_up = true;           // run every engine once on zeros before publishing
  // A model that fails to load or compile is left out of the set (and listed in
  // BuildStats::skipped) instead of failing the build, unless it is `required`. Start-up uses
  // this (daemon.on_model_error: skip): one damaged file must not keep every other model off
  // the robot. A reload never does: it keeps the whole previous set instead.
  bool skip_failed = false;
  Logger log;                     // may be empty
  GraphLoader load_graph;        // called only for new or changed models; may be empty
  EngineFactory make_engine;     // may be empty
  // The most memory one model may need (daemon.max_model_memory_bytes; 0: no limit).
  uint64_t max_model_memory_bytes = 0;
  // The ISA calibration cache for models with `isa: auto` (EngineOptions::isa_cache; "" = none),
  // from daemon.isa_calibration_cache.
  std::string isa_cache;
};

struct BuildStats {
  size_t compiled = 0;
  size_t reused = 0;        // not recompiled (rescheduled ones included)
  size_t rescheduled = 0;   // of which with new scheduling settings
  std::vector<std::string> skipped;  // with skip_failed: why each left-out model failed
  double wall_ms = 0;
};

// Thrown when any model fails (with skip_failed: any required model); what() lists every failure, one per line, each naming the model.
class BuildError : public DaemonError {
 public:
  BuildError(const std::string& what, std::vector<std::string> failures)
      : DaemonError(DaemonErrorCode::kModel, what), failures_(std::move(failures)) {}
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  std::vector<std::string> failures_;
};

// Builds a new set (generation = previous generation + 1, or 1). Never modifies `previous`.
std::shared_ptr<ModelSet> build_model_set(const std::vector<ModelSettings>& models,
                                          const ModelSet* previous, const BuildOptions& options,
                                          BuildStats* stats = nullptr);

// Loads and compiles one model (the unit of work of build_model_set). Throws nnd::Error, with the
// code of the failure it reports.
//
// `engine: auto` asks for the JIT and serves the reference engine instead only when the JIT is not
// available here: the CPU lacks the ISA (kIsaUnavailable) or the JIT does not compile one of the
// model's layers (kUnsupported); it logs that at warning level. Any other JIT failure (an internal
// error, a limit) fails the model like any other engine's would.
//
// A JIT engine's ISA choice is logged at info level (with `isa: auto` on a CPU with several ISAs:
// each candidate's measured time, or that the calibration cache answered), and a calibration
// cache that cannot be read or written at warning level.
//
// Before the engine is made, the model's memory need (model_memory.h) is held to
// `max_memory_bytes` (0: no limit): over it, nnd::Error kLimit naming the model, the file and the
// need. An allocation that fails all the same is an nnd::Error kLimit naming them too.
std::shared_ptr<ServedModel> compile_model(const ModelSettings& settings, bool warm_up,
                                           const Logger& log, const GraphLoader& load_graph = {},
                                           const EngineFactory& make_engine = {},
                                           uint64_t max_memory_bytes = 0);

// FNV-1a hash of the input and output names, dtypes and per-sample shapes, and max_batch (a
// lowered max_batch must tell clients to re-read the model, NND_IPC_E_MODEL_CHANGED).
uint64_t model_signature(const Graph& g, const std::vector<DType>& input_dtypes, uint32_t max_batch);

// Whether two settings compile the same engine from the same file (path, input dtypes, engine,
// ISA, math, threads). A per-model key that changes what is compiled adds a line here.
bool compile_settings_equal(const ModelSettings& a, const ModelSettings& b);
// Whether they also schedule alike (max_batch, batch_delay_us, priority, required).
bool same_settings(const ModelSettings& a, const ModelSettings& b);

// The interface of a graph: its input and output values and names, without layers or weights
// (what a ServedModel keeps; the engine holds the network).
Graph interface_graph(const Graph& g);

// "reference", "jit" or "auto" as the config spells it.
std::string engine_setting_name(const ModelSettings& s);

}  // namespace nnd::daemon
