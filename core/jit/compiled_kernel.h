// One generated kernel as the rest of nnd sees it: its name, its bytes and its entry point. Plain
// data, no AsmJit: this is the view of generated code that daemon, tools, bench and tests use
// (JitEngine::kernels()); the code generator itself (KernelModule, core/jit/x86) stays private to
// core/jit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/jit/kernel_args.h"
#include "core/jit/loop_record.h"

namespace nnd::jit {

struct CompiledKernel {
  std::string name;            // "conv2d: f32-conv-bias+relu-4x3v-avx2-direct" (kernel_name.h)
  KernelFn fn = nullptr;
  std::vector<uint8_t> bytes;  // the code as generated (position-independent)
  size_t code_size = 0;        // bytes[0, code_size) are instructions; the constant pool follows
  std::string listing;         // AsmJit logger output (only when logging is on)
  std::vector<LoopRecord> loops;  // its loops and how often they run (only when recording, JitConfig)
};

}  // namespace nnd::jit
