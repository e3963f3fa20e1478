// nnd_bbv_price: the cycles one inference of a JIT's code costs on an LLVM CPU model, from the
// blocks valgrind's exp-bbv counted (bbv_blocks.h; compare_compilednn.sh runs the whole chain).
//
//   nnd_bbv_price REGIONS BB PC [--runs N] [--cpu silvermont] [--max-insns 100] [--top K]
//
// REGIONS: the harness's code regions; BB, PC: exp-bbv's --bb-out-file and --pc-out-file; N: the
// inferences the harness ran under valgrind. Prints two ends of a range, per inference:
//   in-order FP queues of one entry  llvm-mca's total cycles of each block (min(runs, 100)
//                                    iterations), as LLVM's model schedules Silvermont: an
//                                    instruction waits at the head of its port's queue until its
//                                    operands are ready, and so does everything behind it;
//   deep queues (latency hidden)     each block's resource bound (llvm-mca's Block RThroughput):
//                                    queues deep enough that only the ports' throughput counts.
// The Atom's real queues lie between; which end is nearer depends on the code (SSE products
// scheduled for the one-entry queue, as nnd's ProductPipeline does, are near both ends).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tools/cost_model/bbv_blocks.h"
#include "tools/cost_model/cost_model.h"

int main(int argc, char** argv) {
  using namespace nnd::cost;
  std::vector<std::string> files;
  std::string cpu = "silvermont";
  int64_t runs = 1;
  int max_insns = 100, top = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::max<int64_t>(1, std::atoll(argv[++i]));
    else if (a == "--cpu" && i + 1 < argc) cpu = argv[++i];
    else if (a == "--max-insns" && i + 1 < argc) max_insns = std::max(1, std::atoi(argv[++i]));
    else if (a == "--top" && i + 1 < argc) top = std::max(0, std::atoi(argv[++i]));
    else if (a == "-h" || a == "--help") {
      std::printf("usage: nnd_bbv_price REGIONS BB PC [--runs N] [--cpu silvermont] [--max-insns 100] [--top K]\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "nnd_bbv_price: unknown option %s\n", a.c_str());
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.size() != 3) {
    std::fprintf(stderr, "nnd_bbv_price: expected REGIONS BB PC (see --help)\n");
    return 2;
  }
  try {
    const std::vector<CodeRegion> regions = read_code_regions(files[0]);
    const auto counts = read_bbv(files[1], files[2]);
    std::vector<std::string> warnings;
    const std::vector<ExecutedBlock> blocks = executed_blocks(regions, counts, max_insns, &warnings);
    std::vector<std::span<const uint8_t>> pieces;
    for (const ExecutedBlock& b : blocks) pieces.emplace_back(regions[b.region].bytes.data() + b.offset, b.size);
    const LlvmTools tools = LlvmTools::find();
    const CostModel model(tools, probe_cpu_model(tools, cpu));
    const auto asm_blocks = disassemble(tools.mc, "x86_64-unknown-linux-gnu", pieces);
    std::vector<std::vector<std::string>> text(asm_blocks.size());
    for (size_t i = 0; i < asm_blocks.size(); ++i) {
      for (const AsmInstruction& insn : asm_blocks[i]) text[i].push_back(insn.text);
    }
    std::vector<int64_t> block_runs;
    for (const ExecutedBlock& b : blocks) block_runs.push_back(b.runs);
    std::vector<McaRegion> mca;
    const std::vector<double> per_run = model.price(text, block_runs, &mca);
    double scheduled = 0, bound = 0, insns = 0;
    std::vector<std::pair<double, size_t>> hot;
    for (size_t i = 0; i < blocks.size(); ++i) {
      const double r = static_cast<double>(blocks[i].runs) / static_cast<double>(runs);
      scheduled += per_run[i] * r;
      bound += mca[i].block_rthroughput * r;
      insns += blocks[i].instructions * r;
      hot.emplace_back(per_run[i] * r, i);
    }
    std::printf("%zu blocks in %zu code regions, %.3f M instructions per inference, on LLVM's %s model:\n", blocks.size(),
                regions.size(), insns / 1e6, cpu.c_str());
    std::printf("  in-order FP queues of one entry (llvm-mca scheduled): %10.3f Mcycles per inference\n", scheduled / 1e6);
    std::printf("  deep queues, latency hidden (resource bound):        %10.3f Mcycles per inference\n", bound / 1e6);
    std::sort(hot.rbegin(), hot.rend());
    for (int k = 0; k < top && k < static_cast<int>(hot.size()); ++k) {
      const size_t i = hot[static_cast<size_t>(k)].second;
      const ExecutedBlock& b = blocks[i];
      std::printf("  %5.1f%%  %s+0x%zx: %d insns, %.1f cycles per run (bound %.1f), %.0f runs per inference\n",
                  100 * hot[static_cast<size_t>(k)].first / scheduled, regions[b.region].name.c_str(), b.offset,
                  b.instructions, per_run[i], mca[i].block_rthroughput,
                  static_cast<double>(b.runs) / static_cast<double>(runs));
    }
    for (size_t w = 0; w < warnings.size() && w < 10; ++w) std::fprintf(stderr, "nnd_bbv_price: warning: %s\n", warnings[w].c_str());
    if (warnings.size() > 10) std::fprintf(stderr, "nnd_bbv_price: ... and %zu more warnings\n", warnings.size() - 10);
  } catch (const nnd::Error& e) {
    std::fprintf(stderr, "nnd_bbv_price: %s\n", e.what());
    return 1;
  }
  return 0;
}
