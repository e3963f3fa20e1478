// Owns the generated machine code of one engine: has the build architecture's code generator
// (code_generator.h) emit each kernel's function, places it in executable memory, keeps each
// kernel's bytes, name and listing, and hashes them. Deterministic: the same sequence of compile()
// calls gives the same bytes. Architecture-neutral: AsmJit's core only (CodeHolder, JitRuntime,
// Logger); the x86 ad-hoc bodies of nnbench and the x86 kernel tests go through compile_body()
// (x86/emit_kernel.h).
// Internal to core/jit (it exposes AsmJit); outside code sees the kernels through
// JitEngine::kernels() (compiled_kernel.h). Code that emits its own kernels (nnbench's peak
// measurement, kernel tests) links nnd_jit_internals (core/CMakeLists.txt).
#pragma once

#include <asmjit/core.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/jit/compiled_kernel.h"
#include "core/jit/cpu_features.h"
#include "core/jit/kernel_args.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/kernel_spec.h"

namespace nnd::jit {

class KernelModule {
 public:
  // dump_dir: when non-empty, each kernel's listing is written to <dump_dir>/<index>-<name>.asm.
  KernelModule(Isa isa, bool keep_listing, std::string dump_dir);
  ~KernelModule();
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;

  Isa isa() const { return isa_; }

  // From now on, record each kernel's loops (CompiledKernel::loops) with per-sample counts
  // planned at `batch` samples per call. The code generated is the same byte for byte.
  void record_loops(int64_t planned_batch) { loop_batch_ = planned_batch; }

  // Emits the kernel `spec` describes (the architecture's emit_kernel_function); returns it callable.
  KernelFn compile(const std::string& name, const KernelSpec& spec);

  // Emits a whole function with `emit` into a CodeHolder of the build architecture: `emit` returns
  // the size of its instructions (what follows is its constant pool) and records its loops into
  // the recorder when one is given. compile() and the x86 ad-hoc bodies (compile_body) end here.
  using FunctionEmitter = std::function<size_t(asmjit::CodeHolder&, LoopRecorder*)>;
  KernelFn compile_function(const std::string& name, const FunctionEmitter& emit);

  const std::vector<CompiledKernel>& kernels() const { return kernels_; }
  size_t code_bytes() const;
  uint64_t code_hash() const;  // FNV-1a over all kernels' bytes in order

 private:
  Isa isa_;
  bool keep_listing_;
  int64_t loop_batch_ = 0;  // > 0: record loops
  std::string dump_dir_;
  asmjit::JitRuntime rt_;
  std::vector<CompiledKernel> kernels_;
};

}  // namespace nnd::jit
