// The robot cost model: estimates a JIT engine's cycles per call on a CPU we cannot run on, from
// LLVM's scheduling model of that CPU (llvm-mca -mcpu=<model>). Each kernel is cut into blocks by
// its loop records (core/jit/loop_record.h, code_blocks.h); every block that runs is disassembled
// (llvm-mc), priced by llvm-mca in cycles per run, and weighted by how often it runs:
//
//   kernel cycles = sum over blocks of (block cycles per run) x (its count x the counts around it)
//
// A block's cycles per run are llvm-mca's total cycles over min(runs, 100) iterations (1, 10 or
// 100) divided by them: steady state for loop bodies, start-up included for code that runs a few
// times. Tooling, not the daemon's run path: it starts llvm-mc, llvm-mca and llc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/jit/cpu_features.h"
#include "core/jit/jit_engine.h"
#include "tools/cost_model/code_blocks.h"
#include "tools/cost_model/disassembly.h"
#include "tools/cost_model/llvm_tool.h"
#include "tools/cost_model/mca_report.h"

namespace nnd::cost {

// A CPU model LLVM knows, and the ISAs of the table it has (asked of llc: code it generates for
// the model with each ISA's instructions available or not).
struct CpuModel {
  std::string cpu;  // llvm-mca's -mcpu spelling ("silvermont", "znver3")
  jit::Arch arch = jit::kBuildArch;
  jit::CpuFeatures isas;
};

// nnd::Error (kInvalidArgument) for a CPU LLVM does not know (listing where to find the names).
CpuModel probe_cpu_model(const LlvmTools& tools, const std::string& cpu);

struct KernelCost {
  std::string name;    // "conv2d: f32-conv-bias+relu-3x4v-sse41-direct"
  double cycles = 0;   // per call
  int64_t flops = 0;   // its layer's FLOPs, on the layer's costliest kernel (0 on the others)
  // The block with the most cycles: its cycles per run, llvm-mca's resource bound, its runs per
  // call and what bounds it (McaRegion::bottleneck()).
  double hot_cycles_per_run = 0, hot_bound = 0;
  int64_t hot_runs = 0;
  std::string bottleneck;
};

struct NetworkCost {
  std::vector<KernelCost> kernels;  // in run order
  double cycles = 0;
  int64_t flops = 0;
};

class CostModel {
 public:
  CostModel(LlvmTools tools, CpuModel cpu) : tools_(std::move(tools)), cpu_(std::move(cpu)) {}

  const CpuModel& cpu() const { return cpu_; }

  // Prices blocks of code (assembly text per block, runs per call): cycles per run of each, and
  // llvm-mca's region for each (blocks with 0 runs are not priced: 0 cycles, empty region).
  std::vector<double> price(const std::vector<std::vector<std::string>>& blocks, const std::vector<int64_t>& runs,
                            std::vector<McaRegion>* regions = nullptr) const;

  // Cycles per call of kernels compiled with loop records, each kernel's blocks priced together.
  std::vector<KernelCost> kernel_costs(const std::vector<jit::CompiledKernel>& kernels) const;

  // The whole engine (compiled with JitConfig::record_loops_batch > 0) at its planned batch:
  // the kernels a float32 call runs (not the uint8 input conversions), FLOPs from its graph.
  // `batch`: the batch its loop records were planned at (FLOPs are counted for as many samples).
  NetworkCost estimate(const jit::JitEngine& engine, int64_t batch) const;

  // The model's peak for the products a convolution is made of, from the JIT's own multiply-add
  // loop for `isa` (12 independent accumulators, as nnbench's measured peak): FLOP per cycle at
  // llvm-mca's resource bound of the loop (the ports alone: Silvermont's one mulps per 2 cycles
  // gives 4), and as llvm-mca schedules the loop as emitted (in-order queues and latencies).
  struct Peak {
    double bound = 0, scheduled = 0;
  };
  Peak peak_flop_per_cycle(jit::Isa isa) const;

 private:
  std::string triple() const;
  LlvmTools tools_;
  CpuModel cpu_;
};

}  // namespace nnd::cost
