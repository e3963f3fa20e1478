// nnbench: per model and ISA, what the JIT costs and how fast it runs (a program that prints
// figures, not a test): load + compile ms, code bytes, arena bytes, single-sample latency
// min/median/p99, batch-16 us per sample, achieved GFLOP/s (direct-convolution FLOPs, so
// Winograd layers can lift it past the peak) and the share of this machine's peak for the ISA
// (measured in the same run with a tiny JIT'ed FMA loop, mul+add for SSE), the
// reference engine beside it, and ONNX Runtime (onnxruntime-node, one thread, one sample per call)
// on the ONNX twins when tools/onnx_reference/node_modules exists.
//
//   nnbench [MODEL...] [--isa all|sse4.1|avx2|avx512[,...]] [--repeat N]
//   nnbench [MODEL...] --load-time [--runs N]    load + compile only, cold and warm (load_time.h)
// Without models: the four real networks in ../shared/models (skipped with a message if absent).
#include <asmjit/x86.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/load_time.h"
#include "core/engine/engine_options.h"
#include "core/ir/cost.h"
#include "core/io/model_file.h"
#include "core/jit/jit_engine.h"
#include "core/jit/kernel_module.h"
#include "core/ref/reference_engine.h"
#include "core/util/error.h"
#include "nnd_version.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The ISAs of `arg` ("all" or a comma-separated list of ids); false with *bad naming an unknown one.
bool parse_isa_list(const std::string& arg, std::vector<nnd::jit::Isa>* isas, std::string* bad) {
  if (arg == "all") {
    *isas = nnd::jit::all_isas();
    return true;
  }
  std::istringstream in(arg);
  for (std::string id; std::getline(in, id, ',');) {
    const std::optional<nnd::jit::Isa> isa = nnd::jit::isa_from_id(id);
    if (!isa) {
      *bad = id;
      return false;
    }
    if (std::find(isas->begin(), isas->end(), *isa) == isas->end()) isas->push_back(*isa);
  }
  std::sort(isas->begin(), isas->end());  // table order, as with "all"
  return true;
}

std::string isa_usage() {
  std::string s = "all";
  for (const std::string& id : nnd::jit::isa_ids()) s += "|" + id;
  return s + "[,...]";
}

// Peak GFLOP/s of one core for the ISA: 12 independent accumulators, acc += a * b in a loop
// (one FMA where the ISA has it, else a multiply and an add: 2 flops per lane either way).
double measure_peak(nnd::jit::Isa isa) {
  using namespace nnd::jit;
  KernelModule m(isa, false, "");
  constexpr int kAcc = 12;
  KernelFn fn = m.compile("peak-fma", [](VecEmitter& ve) {
    x86::Assembler& a = ve.as();
    for (int i = 0; i < kAcc; ++i) ve.zero(i);
    ve.load_const(kAcc, 1.0000001f);
    ve.load_const(kAcc + 1, 0.9999999f);
    a.mov(x86::r9, x86::qword_ptr(x86::rdi, 24));
    asmjit::Label l = a.newLabel();
    a.bind(l);
    for (int i = 0; i < kAcc; ++i) ve.fmadd(i, kAcc, kAcc + 1);
    a.dec(x86::r9);
    a.jnz(l);
  });
  const int64_t iters = 500'000;
  KernelArgs args{nullptr, nullptr, nullptr, iters, nullptr};
  fn(&args);  // warm up (frequency, caches)
  double best = 1e30;
  for (int r = 0; r < 40; ++r) {  // best of many: the machine is shared
    const auto t0 = Clock::now();
    fn(&args);
    best = std::min(best, us_since(t0));
  }
  const double flops = static_cast<double>(iters) * kAcc * isa_traits(isa).f32_lanes * 2;
  return flops / (best * 1e3);
}

struct Stats {
  double min = 0, median = 0, p99 = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  s.min = v.front();
  s.median = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(static_cast<double>(v.size()) * 0.99))];
  return s;
}

struct Inputs {
  std::vector<std::vector<float>> data;
  std::vector<nnd::InputView> views;
  std::vector<std::vector<float>> out;
  std::vector<float*> out_ptrs;
};
Inputs make_io(const nnd::Graph& g, int64_t batch) {
  Inputs io;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (nnd::ValueId v : g.inputs) {
    int64_t n = batch;
    for (int64_t d : g.values[v].shape) n *= d;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& f : x) f = u(rng);
    io.data.push_back(std::move(x));
  }
  for (auto& d : io.data) io.views.push_back({nnd::DType::kFloat32, d.data()});
  for (nnd::ValueId v : g.outputs) {
    int64_t n = batch;
    for (int64_t d : g.values[v].shape) n *= d;
    io.out.emplace_back(static_cast<size_t>(n));
  }
  for (auto& o : io.out) io.out_ptrs.push_back(o.data());
  return io;
}

std::vector<double> time_runs(nnd::Engine& e, int64_t batch, int repeat) {
  Inputs io = make_io(e.graph(), batch);
  for (int i = 0; i < std::max(2, repeat / 20); ++i) e.run(batch, io.views, io.out_ptrs);  // warm up
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = Clock::now();
    e.run(batch, io.views, io.out_ptrs);
    t.push_back(us_since(t0));
  }
  return t;
}

std::string repo_dir() {
#ifdef NND_SOURCE_DIR
  return NND_SOURCE_DIR;
#else
  return ".";
#endif
}

// ONNX Runtime on the twin: "min median" in microseconds, or empty with a reason in `why`.
bool ort_bench(const fs::path& onnx, int repeat, double* min_us, double* median_us, std::string* why) {
  const fs::path tool = fs::path(repo_dir()) / "tools" / "onnx_reference";
  if (!fs::exists(tool / "node_modules" / "onnxruntime-node")) {
    *why = "ONNX Runtime not installed: cd tools/onnx_reference && npm ci --ignore-scripts";
    return false;
  }
  if (!fs::exists(onnx)) {
    *why = "no ONNX twin " + onnx.string();
    return false;
  }
  const std::string cmd = "NND_ORT_DIR='" + tool.string() + "' node '" +
                          (fs::path(repo_dir()) / "bench" / "ort_bench.mjs").string() + "' '" + onnx.string() + "' " +
                          std::to_string(repeat) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *why = "cannot start node";
    return false;
  }
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int rc = pclose(p);
  std::istringstream in(out);
  std::string tag;
  if (rc != 0 || !(in >> tag >> *min_us >> *median_us) || tag != "ort") {
    *why = "ort_bench.mjs failed: " + out.substr(0, 300);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models;
  std::string isa_arg = "all";
  int repeat = 200;
  bool load_time = false;
  int runs = 10;
  // A cold load-time run: this process exists only to load one model first thing.
  if (argc == 3 && std::string(argv[1]) == "--load-child") return nnbench::load_time_child(argv[2]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc) isa_arg = argv[++i];
    else if (a == "--load-time") load_time = true;
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--version") {
      std::printf("%s\n", NND_VERSION_TEXT("nnbench"));
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: nnbench [MODEL...] [--isa %s] [--repeat N]\n"
                  "       nnbench [MODEL...] --load-time [--runs N]   (load + compile only, cold and warm)\n"
                  "       nnbench --version\n",
                  isa_usage().c_str());
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "nnbench: unknown option %s\n", a.c_str());
      return 2;
    } else {
      models.push_back(a);
    }
  }
  if (models.empty()) {
    const fs::path dir = fs::path(repo_dir()) / ".." / "shared" / "models";
    for (const char* m : {"bop.h5", "ball-penalty-multihead.h5", "field-boundary.h5", "referee-gesture.h5"}) {
      if (fs::exists(dir / m)) models.push_back((dir / m).lexically_normal().string());
      else std::printf("skip %s: not found in %s\n", m, dir.lexically_normal().c_str());
    }
  }
  if (load_time) return nnbench::report_load_time(models, runs) == 0 ? 0 : 1;
  using nnd::jit::Isa;
  const nnd::jit::CpuFeatures host = nnd::jit::detect_cpu_features();
  std::vector<Isa> requested, isas;
  if (std::string bad; !parse_isa_list(isa_arg, &requested, &bad)) {
    std::fprintf(stderr, "nnbench: unknown ISA '%s' in --isa (expected %s)\n", bad.c_str(), isa_usage().c_str());
    return 2;
  }
  for (Isa isa : requested) {
    if (!host.has(isa)) {
      std::printf("skip %s: this CPU lacks it\n", nnd::jit::isa_id(isa));
      continue;
    }
    isas.push_back(isa);
  }
  std::printf("nnbench: single thread, repeat %d (reference engine: %d)\n", repeat, std::max(1, repeat / 20));
  std::vector<double> peak;
  for (Isa isa : isas) {
    peak.push_back(measure_peak(isa));
    std::printf("peak %-7s %7.1f GFLOP/s (%s loop, 12 accumulators)\n", nnd::jit::isa_id(isa), peak.back(),
                nnd::jit::isa_traits(isa).fma ? "FMA" : "mul+add");
  }
  std::printf("GFLOP/s = the model's FLOPs counted as direct convolution (nninfo) / min time; layers run as\n"
              "Winograd F(2x2,3x3) execute fewer multiplications, so a network with them can show more than 100%%\n");
  int failures = 0;
  for (const std::string& path : models) {
    try {
      auto t0 = Clock::now();
      const nnd::Graph g = nnd::load_model(path);
      const double load_ms = us_since(t0) / 1e3;
      const double flops = static_cast<double>(nnd::flops_per_sample(g));
      std::printf("\n%s: %.2f MFLOP per sample, load %.2f ms\n", fs::path(path).filename().c_str(), flops / 1e6,
                  load_ms);
      std::printf("  %-9s %9s %10s %10s %9s %9s %9s %11s %11s %8s %7s\n", "engine", "compile", "code B", "arena B",
                  "min us", "med us", "p99 us", "b16 min/smp", "b16 med/smp", "GFLOP/s", "% peak");
      std::vector<double> jit_min;
      for (size_t k = 0; k < isas.size(); ++k) {
        nnd::EngineOptions o;
        o.engine = nnd::EngineKind::kJit;
        o.isa = isas[k];
        t0 = Clock::now();
        auto jit = nnd::jit::make_jit_engine(g, o);
        const double compile_ms = us_since(t0) / 1e3;
        const Stats s1 = stats(time_runs(*jit, 1, repeat));
        const Stats s16 = stats(time_runs(*jit, 16, std::max(1, repeat / 4)));
        const double gflops = flops / (s1.min * 1e3);
        jit_min.push_back(s1.min);
        std::printf("  %-9s %7.2fms %10zu %10lld %9.1f %9.1f %9.1f %11.2f %11.2f %8.1f %6.0f%%\n",
                    jit->name().c_str(), compile_ms, jit->code_bytes(),
                    static_cast<long long>(jit->arena_floats_per_sample() * 4), s1.min, s1.median, s1.p99,
                    s16.min / 16, s16.median / 16, gflops, 100 * gflops / peak[k]);
      }
      {
        t0 = Clock::now();
        auto ref = nnd::make_reference_engine(g);
        const double setup_ms = us_since(t0) / 1e3;
        const Stats s = stats(time_runs(*ref, 1, std::max(1, repeat / 20)));
        std::printf("  %-9s %7.2fms %10s %10s %9.1f %9.1f %9.1f %11s %11s %8.2f %7s\n", "reference", setup_ms, "-",
                    "-", s.min, s.median, s.p99, "-", "-", flops / (s.min * 1e3), "-");
      }
      fs::path onnx = path;
      onnx.replace_extension(".onnx");
      double omin = 0, omed = 0;
      std::string why;
      if (ort_bench(onnx, repeat, &omin, &omed, &why)) {
        std::printf("  %-9s %9s %10s %10s %9.1f %9.1f %9s %11s %11s %8.1f %7s  (onnxruntime-node, 1 thread, batch 1; "
                    "includes ~10 us of JS binding per call)\n",
                    "ort", "-", "-", "-", omin, omed, "-", "-", "-", flops / (omin * 1e3), "-");
        std::printf("  ort min / jit min:");
        for (size_t k = 0; k < isas.size(); ++k) std::printf(" %s %.2fx", nnd::jit::isa_id(isas[k]), omin / jit_min[k]);
        std::printf("\n");
      } else {
        std::printf("  ort: %s\n", why.c_str());
      }
    } catch (const nnd::Error& e) {
      std::printf("  error: %s\n", e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
