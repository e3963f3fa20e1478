// nnd_bbv_harness: compiles a model with nnd's JIT, writes its kernels' code regions
// (bbv_blocks.h) and runs it, for valgrind's exp-bbv to count the blocks one inference executes
// (compare_compilednn.sh runs it under valgrind; nnd_bbv_price prices the counts).
//
//   nnd_bbv_harness MODEL REGIONS [--isa sse4.1] [--runs 1] [--uint8]
//
// Inputs follow nnrun's pattern (element j of input k is ((37*j + 101*k) mod 256) / 255); with
// --uint8 input 0 is typed uint8 (as the daemon's `inputs: uint8`) and fed the bytes 37*j mod 256.
// After the runs the harness spins a loop of about 60 M instructions outside the regions, so that
// exp-bbv closes the interval holding the last run (it drops a last partial interval).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/io/model_file.h"
#include "core/jit/jit_engine.h"
#include "core/util/error.h"
#include "tools/cost_model/bbv_blocks.h"

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string isa = "sse4.1";
  int runs = 1;
  bool u8 = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc) isa = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--uint8") u8 = true;
    else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "usage: nnd_bbv_harness MODEL REGIONS [--isa sse4.1] [--runs 1] [--uint8]\n");
      return 2;
    } else {
      files.push_back(a);
    }
  }
  const std::optional<nnd::IsaChoice> choice = nnd::parse_isa(isa);
  if (files.size() != 2 || !choice) {
    std::fprintf(stderr, "usage: nnd_bbv_harness MODEL REGIONS [--isa sse4.1] [--runs 1] [--uint8]\n");
    return 2;
  }
  try {
    nnd::Graph g = nnd::load_model(files[0]);
    if (u8 && !g.inputs.empty()) g.values[static_cast<size_t>(g.inputs[0])].dtype = nnd::DType::kUInt8;
    nnd::EngineOptions o;
    o.engine = nnd::EngineKind::kJit;
    o.isa = *choice;
    const auto engine = nnd::jit::make_jit_engine(g, o);
    std::vector<nnd::cost::CodeRegion> regions;
    for (const nnd::jit::CompiledKernel& k : engine->kernels()) {
      nnd::cost::CodeRegion r;
      r.address = reinterpret_cast<uint64_t>(k.fn);
      r.bytes.assign(k.bytes.begin(), k.bytes.begin() + static_cast<std::ptrdiff_t>(k.code_size));
      r.name = k.name;
      for (char& c : r.name) c = c == '\n' ? ' ' : c;
      regions.push_back(std::move(r));
    }
    nnd::cost::write_code_regions(files[1], regions);
    const nnd::Graph& cg = engine->graph();
    std::vector<std::vector<float>> f32(cg.inputs.size());
    std::vector<uint8_t> bytes;
    std::vector<nnd::InputView> views;
    for (size_t k = 0; k < cg.inputs.size(); ++k) {
      int64_t n = 1;
      for (int64_t d : cg.values[static_cast<size_t>(cg.inputs[k])].shape) n *= d;
      if (u8 && k == 0) {
        for (int64_t j = 0; j < n; ++j) bytes.push_back(static_cast<uint8_t>((37 * j) % 256));
        views.push_back({nnd::DType::kUInt8, bytes.data()});
      } else {
        for (int64_t j = 0; j < n; ++j) f32[k].push_back(static_cast<float>((37 * j + 101 * static_cast<int64_t>(k)) % 256) / 255.0f);
        views.push_back({nnd::DType::kFloat32, f32[k].data()});
      }
    }
    std::vector<std::vector<float>> out;
    std::vector<float*> ptrs;
    for (nnd::ValueId v : cg.outputs) {
      int64_t n = 1;
      for (int64_t d : cg.values[static_cast<size_t>(v)].shape) n *= d;
      out.emplace_back(static_cast<size_t>(n));
      ptrs.push_back(out.back().data());
    }
    for (int r = 0; r < runs; ++r) engine->run(1, views, ptrs);
    volatile uint64_t spin = 0;
    for (int i = 0; i < 20'000'000; ++i) spin = spin + static_cast<uint64_t>(i);
    std::printf("%s: %zu kernels, %d run(s) on %s; output 0[0] = %g\n", files[0].c_str(), regions.size(), runs,
                engine->name().c_str(), static_cast<double>(out.empty() || out[0].empty() ? 0.0f : out[0][0]));
  } catch (const nnd::Error& e) {
    std::fprintf(stderr, "nnd_bbv_harness: %s\n", e.what());
    return 1;
  }
  return 0;
}
