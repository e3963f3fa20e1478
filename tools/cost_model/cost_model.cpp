#include "tools/cost_model/cost_model.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/ir/cost.h"
#include "core/jit/kernel_module.h"
#include "core/jit/x86/emit_kernel.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/util/error.h"

namespace nnd::cost {

namespace {

// LLVM IR whose code for a CPU shows which of the table's x86 ISAs that CPU has: floor() is one
// roundps only with SSE4.1; an 8 x i32 add is one ymm vpaddd only with AVX2 and fma() one
// vfmadd only with FMA; 16 x i32 and 8 x i64 multiplies stay in zmm registers only with AVX-512
// F and DQ, and a 64 x i8 add only with BW.
constexpr const char* kX86IsaProbe = R"(
define <4 x float> @sse41(<4 x float> %a) {
  %r = call <4 x float> @llvm.floor.v4f32(<4 x float> %a)
  ret <4 x float> %r
}
define <8 x i32> @avx2(<8 x i32> %a, <8 x i32> %b) {
  %r = add <8 x i32> %a, %b
  ret <8 x i32> %r
}
define <4 x float> @fma(<4 x float> %a, <4 x float> %b, <4 x float> %c) {
  %r = call <4 x float> @llvm.fma.v4f32(<4 x float> %a, <4 x float> %b, <4 x float> %c)
  ret <4 x float> %r
}
define <8 x i64> @avx512(<8 x i64> %a, <8 x i64> %b, <64 x i8> %c, <64 x i8> %d, <64 x i8>* %p) #0 {
  %s = add <64 x i8> %c, %d
  store <64 x i8> %s, <64 x i8>* %p
  %r = mul <8 x i64> %a, %b
  ret <8 x i64> %r
}
attributes #0 = { "min-legal-vector-width"="512" "prefer-vector-width"="512" }
declare <4 x float> @llvm.floor.v4f32(<4 x float>)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
)";

// The assembly llc made of function `fn` (from its label to the next function's end marker).
std::string function_asm(const std::string& out, const std::string& fn) {
  const size_t b = out.find("\n" + fn + ":");
  if (b == std::string::npos) return "";
  const size_t e = out.find(".Lfunc_end", b);
  return out.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

int iterations_for(int64_t runs) { return runs >= 100 ? 100 : runs >= 10 ? 10 : 1; }

}  // namespace

CpuModel probe_cpu_model(const LlvmTools& tools, const std::string& cpu) {
  if (jit::kBuildArch != jit::Arch::kX86_64) {
    throw Error(ErrorCode::kUnsupported, "cost model: CPU models of this architecture are not probed yet");
  }
  const ToolRun r = run_tool(tools.llc, {"-mtriple=x86_64", "-mcpu=" + cpu, "-O2", "-o", "-"}, kX86IsaProbe);
  if (has(r.err, "not a recognized processor")) {
    std::string m = "cost model: LLVM does not know the CPU '";
    m += cpu;
    m += "' (the names it knows: llvm-mca -mcpu=help)";
    throw Error(ErrorCode::kInvalidArgument, m);
  }
  if (r.exit_code != 0) throw Error(ErrorCode::kFormat, "cost model: llc failed on the ISA probe: " + r.err.substr(0, 300));
  CpuModel m;
  m.cpu = cpu;
  m.arch = jit::Arch::kX86_64;
  m.isas.brand = cpu + " (LLVM scheduling model)";
  const std::string avx512 = function_asm(r.out, "avx512");
  if (has(function_asm(r.out, "sse41"), "roundps")) m.isas.add(jit::Isa::kSse41);
  if (m.isas.has(jit::Isa::kSse41) && has(function_asm(r.out, "avx2"), "vpaddd\t%ymm") &&
      has(function_asm(r.out, "fma"), "vfmadd")) {
    m.isas.add(jit::Isa::kAvx2);
  }
  if (m.isas.has(jit::Isa::kAvx2) && has(avx512, "vpmullq\t%zmm") && has(avx512, "vpaddb\t%zmm")) {
    m.isas.add(jit::Isa::kAvx512);
  }
  return m;
}

std::string CostModel::triple() const { return cpu_.arch == jit::Arch::kX86_64 ? "x86_64" : "aarch64"; }

std::vector<double> CostModel::price(const std::vector<std::vector<std::string>>& blocks, const std::vector<int64_t>& runs,
                                     std::vector<McaRegion>* regions) const {
  std::vector<double> cycles(blocks.size(), 0.0);
  if (regions) regions->assign(blocks.size(), McaRegion{});
  std::map<int, std::vector<size_t>> by_iterations;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (runs[i] > 0 && !blocks[i].empty()) by_iterations[iterations_for(runs[i])].push_back(i);
  }
  for (const auto& [iterations, members] : by_iterations) {
    std::string input;
    for (size_t i : members) {
      input += "# LLVM-MCA-BEGIN b" + std::to_string(i) + "\n";
      for (const std::string& line : blocks[i]) {
        input += line;
        input += '\n';
      }
      input += "# LLVM-MCA-END\n";
    }
    const ToolRun r = run_tool(tools_.mca, {"-mtriple=" + triple(), "-mcpu=" + cpu_.cpu,
                                            "-iterations=" + std::to_string(iterations), "-bottleneck-analysis",
                                            "-instruction-info=0"},
                               input);
    if (r.exit_code != 0 || has(r.err, "error")) {
      throw Error(ErrorCode::kFormat, "llvm-mca -mcpu=" + cpu_.cpu + " failed: " + r.err.substr(0, 400));
    }
    const std::vector<McaRegion> report = parse_mca_report(r.out);
    if (report.size() != members.size()) {
      throw Error(ErrorCode::kFormat, "llvm-mca reported " + std::to_string(report.size()) + " regions for " +
                                          std::to_string(members.size()) + " blocks");
    }
    for (size_t j = 0; j < members.size(); ++j) {
      cycles[members[j]] = report[j].cycles_per_iteration();
      if (regions) (*regions)[members[j]] = report[j];
    }
  }
  return cycles;
}

std::vector<KernelCost> CostModel::kernel_costs(const std::vector<jit::CompiledKernel>& kernels) const {
  std::vector<std::span<const uint8_t>> code;
  for (const jit::CompiledKernel& k : kernels) code.emplace_back(k.bytes.data(), k.code_size);
  const std::vector<std::vector<AsmInstruction>> asm_of = disassemble(tools_.mc, triple(), code);
  // Every block of every kernel, priced together (one llvm-mca run per iteration count).
  std::vector<std::vector<std::string>> texts;
  std::vector<int64_t> runs;
  std::vector<std::pair<size_t, size_t>> owner;  // (kernel, block)
  std::vector<std::vector<CodeBlock>> blocks_of;
  for (size_t k = 0; k < kernels.size(); ++k) {
    blocks_of.push_back(code_blocks(kernels[k].loops, kernels[k].code_size));
    for (size_t b = 0; b < blocks_of[k].size(); ++b) {
      const CodeBlock& blk = blocks_of[k][b];
      std::vector<std::string> text;
      for (const AsmInstruction& in : asm_of[k]) {
        for (const auto& [lo, hi] : blk.ranges) {
          if (in.offset >= lo && in.offset < hi) text.push_back(in.text);
        }
      }
      texts.push_back(std::move(text));
      runs.push_back(blk.runs);
      owner.emplace_back(k, b);
    }
  }
  std::vector<McaRegion> regions;
  const std::vector<double> cycles = price(texts, runs, &regions);
  std::vector<KernelCost> out(kernels.size());
  std::vector<double> hot(kernels.size(), -1.0);
  for (size_t i = 0; i < owner.size(); ++i) {
    KernelCost& kc = out[owner[i].first];
    const double c = cycles[i] * static_cast<double>(runs[i]);
    kc.cycles += c;
    if (c > hot[owner[i].first]) {
      hot[owner[i].first] = c;
      kc.hot_cycles_per_run = cycles[i];
      kc.hot_bound = regions[i].block_rthroughput;
      kc.hot_runs = runs[i];
      kc.bottleneck = regions[i].iterations > 0 ? regions[i].bottleneck() : "-";
    }
  }
  for (size_t k = 0; k < kernels.size(); ++k) out[k].name = kernels[k].name;
  return out;
}

NetworkCost CostModel::estimate(const jit::JitEngine& engine, int64_t batch) const {
  std::vector<jit::CompiledKernel> run;
  for (const jit::CompiledKernel& k : engine.kernels()) {
    // The uint8 input conversions run only for uint8 inputs; the estimate is of float32 calls.
    if (k.name.find(": u8-to-f32") != std::string::npos) continue;
    run.push_back(k);
  }
  // A kernel may be straight-line code without loops; an engine without any loop was not recorded.
  bool any_loops = false;
  for (const jit::CompiledKernel& k : run) any_loops = any_loops || !k.loops.empty();
  if (!any_loops && !run.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "cost model: the engine was compiled without loop records (JitConfig::record_loops_batch)");
  }
  NetworkCost net;
  net.kernels = kernel_costs(run);
  const Graph& g = engine.graph();
  std::map<std::string, size_t> costliest;  // node name -> its kernel with the most cycles
  for (size_t i = 0; i < net.kernels.size(); ++i) {
    const std::string node = net.kernels[i].name.substr(0, net.kernels[i].name.find(": "));
    auto it = costliest.find(node);
    if (it == costliest.end() || net.kernels[i].cycles > net.kernels[it->second].cycles) costliest[node] = i;
    net.cycles += net.kernels[i].cycles;
  }
  for (const Node& n : g.nodes) {
    const int64_t f = flops_per_sample(g, n) * batch;
    net.flops += f;
    auto it = costliest.find(n.name);
    if (it != costliest.end()) net.kernels[it->second].flops += f;
  }
  return net;
}

CostModel::Peak CostModel::peak_flop_per_cycle(jit::Isa isa) const {
  using namespace jit;
  constexpr int kAcc = 12;
  constexpr int64_t kTrips = 1000;
  KernelModule m(isa, false, "");
  m.record_loops(1);
  compile_body(m, "peak-mul-add", [](VecEmitter& ve) {
    for (int i = 0; i < kAcc; ++i) ve.zero(i);
    ve.load_const(kAcc, 1.0000001f);
    ve.load_const(kAcc + 1, 0.9999999f);
    regs::counted_loop(ve, x86::Gp(x86::r9), kTrips, [&] {
      for (int i = 0; i < kAcc; ++i) ve.fmadd(i, kAcc, kAcc + 1);
    });
  });
  const std::vector<KernelCost> c = kernel_costs(m.kernels());
  const double flops_per_trip = static_cast<double>(kAcc) * isa_traits(isa).f32_lanes * 2;
  return {flops_per_trip / c.front().hot_bound, flops_per_trip * kTrips / c.front().cycles};
}

}  // namespace nnd::cost
