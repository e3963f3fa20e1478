// The JIT engine: compiles every node of a graph to x86 machine code (AsmJit) for one ISA at
// construction; run() then only calls the generated kernels on a per-call arena.
//
// Dump switch: environment variable NND_JIT_DUMP=DIR (or JitConfig::dump_dir) writes, per engine,
// the listing of every kernel (<DIR>/<n>-<kernel>.asm, AsmJit's logger with machine code) and the
// memory plan (<DIR>/plan.txt, which also carries the code hash), and the graph passes write the IR
// before and after each pass (<DIR>/ir-<nn>-<pass>.txt, core/passes/pass.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/engine_options.h"
#include "core/jit/compiled_kernel.h"
#include "core/jit/cpu_features.h"
#include "core/jit/isa_calibration.h"
#include "core/util/error.h"

namespace nnd::jit {

struct JitConfig {
  std::optional<CpuFeatures> features;  // default: detect_cpu_features() (tests may force)
  std::optional<std::string> dump_dir;  // default: $NND_JIT_DUMP (empty/unset = no dump)
  bool keep_listing = false;            // keep each kernel's AsmJit listing in memory
  bool run_passes = true;               // graph passes before code generation (core/passes);
                                        // env NND_JIT_PASSES=0 also turns them off
  // A call's batch runs in chunks whose activations, inputs and outputs fit this many bytes (a
  // typical per-core L2; the NAO's Atom shares 1 MiB between two cores), see plan_chunks().
  int64_t chunk_bytes = int64_t{1} << 20;
  // Value a new arena is filled with. Tests use NaN, so a kernel that reads arena memory no kernel
  // wrote in this call (a missing border or padding store) shows up as a wrong output.
  float arena_fill = 0.0f;
  // > 0: record every kernel's loops (CompiledKernel::loops, loop_record.h) for the cost model,
  // with counts that depend on the call's batch planned at this many samples. 0 (the daemon's
  // default): no recording. The code is the same either way.
  int64_t record_loops_batch = 0;
  // EngineOptions::threads > 1: a kernel splits into bands across the threads only from this many
  // FLOPs per sample (kernel_parts.h), and a batch splits into groups of samples (one per thread)
  // only when a group has this many FLOPs. Tests lower it to split every splittable kernel.
  int64_t min_split_flops = 200000;
  // isa auto with several candidate ISAs: rounds, time budget and tie margin of the measurement.
  IsaCalibrationPolicy isa_calibration;
  // Test hook for isa auto: times `runs` runs of the candidate `isa` instead of running it, in
  // microseconds (tests hand in made-up durations). Empty: the candidates' engines run on a
  // synthetic input, timed in the calling thread's CPU time.
  std::function<double(Isa isa, int runs)> isa_time_runs;
};

class JitEngine : public Engine {
 public:
  virtual Isa isa() const = 0;
  // How isa() was chosen: requested, the CPU's only ISA, measured now or read from the cache,
  // with the candidates' times and any cache warning.
  virtual const IsaSelection& isa_selection() const = 0;
  // The generated code, in compilation order (kernel_module.h compiles it).
  virtual const std::vector<CompiledKernel>& kernels() const = 0;
  virtual size_t code_bytes() const = 0;   // all kernels' bytes, constant pools included
  virtual uint64_t code_hash() const = 0;  // FNV-1a over all kernels' bytes in order
  virtual int64_t arena_floats_per_sample() const = 0;
  virtual int64_t chunk_samples() const = 0;  // samples per chunk of a call (JitConfig::chunk_bytes)
  // Threads one call may run on (EngineOptions::threads resolved; 1 when neither a kernel's bands
  // nor one sample per thread pays for a split).
  virtual int threads() const = 0;
  // The names (kernel_name.h) of the kernels graph().nodes[node] runs, in run order; empty for
  // layers that only alias their input (Flatten, Reshape, Identity).
  virtual std::vector<std::string> node_kernels(size_t node) const = 0;
};

// Throws nnd::Error naming the first layer the JIT cannot compile ("file: layer 'x' (Class): not
// compiled by the JIT yet: <why>"), or when the requested ISA is unavailable.
//
// options.isa auto: when the CPU offers one ISA, that one. Otherwise the choice stored for this
// CPU, network, batch and math mode in options.isa_cache if there is one, else the one made
// earlier in this process for the same file and key; else the network (a large one: its
// stand-in, isa_calibration_standin.h) is compiled for every ISA the CPU has, each runs
// interleaved rounds on a synthetic input (config.isa_calibration: about 20 ms of running), and
// the narrowest ISA within the tie margin of the fastest is kept (and stored in the cache and
// remembered). isa_selection() says which happened; a cache that cannot be read or written is a
// warning there, never an error.
std::unique_ptr<JitEngine> make_jit_engine(const Graph& g, const EngineOptions& options,
                                           const JitConfig& config = {});

// A node of the graph the JIT cannot compile, and why.
struct UnsupportedLayer {
  size_t node = 0;                          // index into Graph::nodes
  ErrorCode code = ErrorCode::kUnsupported;  // the code make_jit_engine would throw
  std::string message;                      // "file: layer 'x' (Class): not compiled by the JIT yet (<why>)"
};

// Every node the JIT cannot compile (empty: the whole graph compiles), in node order.
std::vector<UnsupportedLayer> jit_unsupported_layers(const Graph& g);

}  // namespace nnd::jit
