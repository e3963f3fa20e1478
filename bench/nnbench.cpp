// nnbench: per model and ISA, what the JIT costs and how fast it runs (a program that prints
// figures, not a test): load + compile ms, code bytes, arena bytes, single-sample latency
// min/median/p99, batch-16 us per sample, achieved GFLOP/s (direct-convolution FLOPs, so
// Winograd layers can lift it past the peak) and the share of this machine's peak for the ISA
// (measured in the same run with a tiny JIT'ed FMA loop, mul+add for SSE), the
// reference engine beside it, and ONNX Runtime (onnxruntime-node, one thread, one sample per call)
// on the ONNX twins when tools/onnx_reference/node_modules exists.
//
//   nnbench [MODEL...] [--isa all|auto|sse4.1|avx2|avx512[,...]] [--repeat N] [--chunk-kib N]
//           [--batch N] [--cpu-time] [--math exact|fast]
//           --chunk-kib: JitConfig::chunk_bytes of the engines (samples per chunk of a batched call);
//           --batch: the batched column's batch (default 16); --cpu-time: thread CPU time, not wall;
//           --math: the engines' math mode in every form of the command (default exact)
//   nnbench [MODEL...] [--isa ...] --threads N[,M...] [--batch N] [--math ...]   a row per thread count
//           (EngineOptions::threads; "auto" allowed), timed in interleaved rounds at batch 1 (or
//           --batch: us per sample), with each count's speed-up
//   nnbench [MODEL...] --load-time [--isa auto|sse4.1|...] [--runs N]
//                                  load + compile only, cold and warm (load_time.h)
//   nnbench [MODEL...] --cpu-model CPU [--isa ...] [--math exact|fast] [--clock GHz] [--kernels|-v]
//           [--measure] [--batch N]   the robot cost model (tools/cost_model): cycles per call on
//           LLVM's model of CPU (llvm-mca), per network and with --kernels per kernel; --measure also times
//           the same code here and converts at this core's measured clock (validation); --batch N
//           plans the loops for calls of N samples and reports per sample
// `auto` is the row of the ISA the JIT's isa auto chooses on this machine, with the times it
// measured: by default read from the calibration cache nnrun, nninfo and nnd share
// (default_isa_cache_path(); --isa-cache off measures anew, its compile time then includes it);
// "all" (the default) is every ISA of the CPU and auto.
// Without models: the four real networks in ../shared/models (skipped with a message if absent).
#include <asmjit/x86.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
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
#include "core/jit/x86/emit_kernel.h"
#include "core/ref/reference_engine.h"
#include "core/util/error.h"
#include "nnd_version.h"
#include "tools/cost_model/cost_model.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The ISAs of `arg` ("all" or a comma-separated list of ids and "auto"); false with *bad naming an
// unknown one. *with_auto: whether "auto" was asked for ("all" includes it).
bool parse_isa_list(const std::string& arg, std::vector<nnd::jit::Isa>* isas, bool* with_auto, std::string* bad) {
  if (arg == "all") {
    *isas = nnd::jit::all_isas();
    *with_auto = true;
    return true;
  }
  std::istringstream in(arg);
  for (std::string id; std::getline(in, id, ',');) {
    if (id == "auto") {
      *with_auto = true;
      continue;
    }
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
  for (const std::string& id : nnd::isa_choice_ids()) s += "|" + id;
  return s + "[,...]";
}

// Peak GFLOP/s of one core for the ISA: 12 independent accumulators, acc += a * b in a loop
// (one FMA where the ISA has it, else a multiply and an add: 2 flops per lane either way).
double measure_peak(nnd::jit::Isa isa) {
  using namespace nnd::jit;
  KernelModule m(isa, false, "");
  constexpr int kAcc = 12;
  KernelFn fn = compile_body(m, "peak-fma", [](VecEmitter& ve) {
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

// This core's clock in GHz while it runs JIT code: a chain of dependent 64-bit adds retires one
// add per cycle on every x86 core, so adds per nanosecond is the clock (turbo included, which a
// VM's /proc/cpuinfo does not show).
double measure_clock_ghz() {
  using namespace nnd::jit;
  KernelModule m(Isa::kSse41, false, "");
  constexpr int kChain = 100;
  KernelFn fn = compile_body(m, "clock-add-chain", [](VecEmitter& ve) {
    x86::Assembler& a = ve.as();
    a.mov(x86::r9, x86::qword_ptr(x86::rdi, 24));
    asmjit::Label l = a.newLabel();
    a.bind(l);
    for (int i = 0; i < kChain; ++i) a.add(x86::rax, 1);
    a.dec(x86::r9);
    a.jnz(l);
  });
  // Short runs, many of them: on this shared VM a run of milliseconds is often preempted.
  const int64_t iters = 20'000;
  KernelArgs args{nullptr, nullptr, nullptr, iters, nullptr};
  fn(&args);
  double best = 1e30;
  for (int r = 0; r < 400; ++r) {
    const auto t0 = Clock::now();
    fn(&args);
    best = std::min(best, us_since(t0));
  }
  return static_cast<double>(iters) * kChain / (best * 1e3);
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

// --cpu-time: calls are timed in the calling thread's CPU time instead of wall time. On a core
// other processes share, a call longer than the scheduler's time slice (bop at batch 16: over
// 10 ms) is nearly always preempted, so even its wall-time minimum counts the other process's
// slice, while short calls find an undisturbed run; CPU time leaves the slices out.
bool g_cpu_time = false;
// The auto row's calibration cache (--isa-cache): by default the file nnrun, nninfo and nnd share,
// so that the row times the ISA they serve.
std::string g_isa_cache;

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::vector<double> time_runs(nnd::Engine& e, int64_t batch, int repeat) {
  Inputs io = make_io(e.graph(), batch);
  for (int i = 0; i < std::max(2, repeat / 20); ++i) e.run(batch, io.views, io.out_ptrs);  // warm up
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    if (g_cpu_time) {
      const double c0 = thread_cpu_us();
      e.run(batch, io.views, io.out_ptrs);
      t.push_back(thread_cpu_us() - c0);
    } else {
      const auto t0 = Clock::now();
      e.run(batch, io.views, io.out_ptrs);
      t.push_back(us_since(t0));
    }
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

struct CostOptions {
  std::string cpu;
  nnd::MathMode math = nnd::MathMode::kExact;
  double clock_ghz = 1.91;  // the robot's Atom E3845
  bool clock_given = false;
  bool per_kernel = false;
  bool measure = false;
  int repeat = 200;
  int64_t batch = 1;  // the call's batch the loops are planned at; figures are per sample
};

// The cost model's report: per model and ISA the estimated cycles per sample of a call of
// opt.batch samples (1 by default) on the CPU model, the time at the clock, FLOP/cycle against
// the model's peak, and per kernel with --kernels. --measure times the same engine here and converts the estimate at the clock the
// measured peak loop implies (measured GFLOP/s / the model's FLOP/cycle for that loop).
int run_cost_model(const std::vector<std::string>& models, const std::vector<nnd::jit::Isa>& requested,
                   bool isas_given, const CostOptions& opt) {
  using namespace nnd;
  using jit::Isa;
  const cost::LlvmTools tools = cost::LlvmTools::find();
  const cost::CostModel model(tools, cost::probe_cpu_model(tools, opt.cpu));
  std::vector<Isa> isas;
  for (Isa isa : requested) {
    if (model.cpu().isas.has(isa)) {
      isas.push_back(isa);
    } else if (isas_given) {
      std::fprintf(stderr, "nnbench: the CPU model %s cannot run %s (it has: %s)\n", opt.cpu.c_str(), jit::isa_id(isa),
                   model.cpu().isas.to_string().c_str());
      return 2;
    }
  }
  if (isas.empty()) {
    std::fprintf(stderr, "nnbench: the CPU model %s has none of the JIT's ISAs\n", opt.cpu.c_str());
    return 2;
  }
  const jit::CpuFeatures host = jit::detect_cpu_features();
  std::printf("cost model: llvm-mca -mcpu=%s (%s), ISAs %s, %s math, batch %lld%s\n", opt.cpu.c_str(),
              tools.mca.c_str(), model.cpu().isas.to_string().c_str(), math_mode_name(opt.math),
              static_cast<long long>(opt.batch), opt.batch > 1 ? " (cycles and MFLOP per sample)" : "");
  double ghz = opt.clock_ghz;
  std::string how = opt.clock_given ? "given" : "the E3845's";
  if (opt.measure && !opt.clock_given) {
    ghz = measure_clock_ghz();
    how = "this core's, measured with a chain of dependent adds";
  }
  std::printf("clock %.2f GHz (%s)\n", ghz, how.c_str());
  std::vector<double> peak_fpc;
  for (Isa isa : isas) {
    const cost::CostModel::Peak peak = model.peak_flop_per_cycle(isa);
    peak_fpc.push_back(peak.bound);
    std::printf("peak %-7s %6.2f FLOP/cycle at the model's port bound, %.2f as it schedules the JIT's %s loop "
                "(12 accumulators)",
                jit::isa_id(isa), peak.bound, peak.scheduled, jit::isa_traits(isa).fma ? "FMA" : "mul+add");
    if (opt.measure && host.has(isa)) std::printf("; measured here %.2f", measure_peak(isa) / ghz);
    std::printf("\n");
  }
  int failures = 0;
  for (const std::string& path : models) {
    try {
      const Graph g = load_model(path);
      for (size_t k = 0; k < isas.size(); ++k) {
        EngineOptions o;
        o.engine = EngineKind::kJit;
        o.isa = isas[k];
        o.math = opt.math;
        jit::JitConfig cfg;
        cfg.features = model.cpu().isas;  // compiled for the model's CPU, not necessarily this one
        cfg.record_loops_batch = opt.batch;
        const auto t0 = Clock::now();
        auto e = jit::make_jit_engine(g, o, cfg);
        cost::NetworkCost c = model.estimate(*e, opt.batch);
        // Per sample, so batches compare with batch 1 directly (FLOP/cycle is unchanged).
        const auto per_sample = static_cast<double>(opt.batch);
        c.cycles /= per_sample;
        c.flops /= opt.batch;
        for (cost::KernelCost& kc : c.kernels) {
          kc.cycles /= per_sample;
          kc.flops /= opt.batch;
        }
        const double est_s = us_since(t0) / 1e6;
        const double fpc = static_cast<double>(c.flops) / c.cycles;
        const double us = c.cycles / (ghz * 1e3);
        std::printf("%-28s %-7s %8.3f Mcycles %9.1f us at %.2f GHz  %7.2f MFLOP  %5.2f FLOP/cycle (%3.0f%% of peak)",
                    fs::path(path).filename().c_str(), jit::isa_id(isas[k]), c.cycles / 1e6, us, ghz,
                    static_cast<double>(c.flops) / 1e6, fpc, 100 * fpc / peak_fpc[k]);
        if (opt.measure && host.has(isas[k])) {
          auto run = jit::make_jit_engine(g, o);
          const Stats s = stats(time_runs(*run, opt.batch, opt.repeat));
          const double measured_us = s.min / per_sample;
          std::printf("  measured %9.1f us, model/measured %.2f", measured_us, us / measured_us);
        }
        std::printf("  [%.1f s]\n", est_s);
        if (!opt.per_kernel) continue;
        std::vector<size_t> order(c.kernels.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return c.kernels[a].cycles > c.kernels[b].cycles; });
        std::printf("  %10s %6s %8s %7s %6s  %-30s %s\n", "cycles", "share", "MFLOP", "FLOP/c", "%peak",
                    "hot block: cyc/run (bound) x runs", "bottleneck / kernel");
        for (size_t i : order) {
          const cost::KernelCost& kc = c.kernels[i];
          char hot[64];
          std::snprintf(hot, sizeof hot, "%.1f (%.1f) x %lld", kc.hot_cycles_per_run, kc.hot_bound,
                        static_cast<long long>(kc.hot_runs));
          const double kfpc = kc.cycles > 0 ? static_cast<double>(kc.flops) / kc.cycles : 0.0;
          if (kc.flops > 0) {
            std::printf("  %10.0f %5.1f%% %8.3f %7.2f %5.0f%%  %-30s %s / %s\n", kc.cycles, 100 * kc.cycles / c.cycles,
                        static_cast<double>(kc.flops) / 1e6, kfpc, 100 * kfpc / peak_fpc[k], hot, kc.bottleneck.c_str(),
                        kc.name.c_str());
          } else {
            std::printf("  %10.0f %5.1f%% %8s %7s %6s  %-30s %s / %s\n", kc.cycles, 100 * kc.cycles / c.cycles, "-", "-",
                        "-", hot, kc.bottleneck.c_str(), kc.name.c_str());
          }
        }
      }
    } catch (const Error& e) {
      std::printf("  error: %s\n", e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

// --threads: per model and ISA, an engine per thread count, timed at `batch` (us per sample) in 5
// interleaved rounds of repeat/5 runs (the counts see the same machine load), min and median per
// count and the speed-up of each min and median over the first count's.
int report_threads(const std::vector<std::string>& models, const std::vector<nnd::jit::Isa>& isas,
                   const std::vector<int>& counts, int repeat, int64_t batch, nnd::MathMode math) {
  constexpr int kRounds = 5;
  std::printf("nnbench: threads per call %s, %d interleaved rounds of %d runs, batch %lld (us per sample), %s math\n",
              [&] {
                std::string c;
                for (int n : counts) {
                  if (!c.empty()) c += ",";
                  c += n == nnd::kAutoThreads ? std::string("auto") : std::to_string(n);
                }
                return c;
              }().c_str(),
              kRounds, std::max(1, repeat / kRounds), static_cast<long long>(batch), nnd::math_mode_name(math));
  int failures = 0;
  for (const std::string& path : models) {
    try {
      const nnd::Graph g = nnd::load_model(path);
      std::printf("\n%s: %.2f MFLOP per sample\n", fs::path(path).filename().c_str(),
                  static_cast<double>(nnd::flops_per_sample(g)) / 1e6);
      std::printf("  %-11s %7s %9s %9s %9s %9s\n", "engine", "threads", "min us", "med us", "x min", "x med");
      for (nnd::jit::Isa isa : isas) {
        std::vector<std::unique_ptr<nnd::jit::JitEngine>> engines;
        std::vector<std::vector<double>> times(counts.size());
        for (int n : counts) {
          nnd::EngineOptions o;
          o.engine = nnd::EngineKind::kJit;
          o.isa = isa;
          o.threads = n;
          o.math = math;
          engines.push_back(nnd::jit::make_jit_engine(g, o));
        }
        for (int r = 0; r < kRounds; ++r) {
          for (size_t k = 0; k < engines.size(); ++k) {
            std::vector<double> t = time_runs(*engines[k], batch, std::max(1, repeat / kRounds));
            for (double& x : t) x /= static_cast<double>(batch);
            times[k].insert(times[k].end(), t.begin(), t.end());
          }
        }
        const Stats base = stats(times[0]);
        for (size_t k = 0; k < engines.size(); ++k) {
          const Stats s = stats(times[k]);
          std::printf("  %-11s %7d %9.1f %9.1f %8.2fx %8.2fx\n", engines[k]->name().c_str(), engines[k]->threads(), s.min,
                      s.median, base.min / s.min, base.median / s.median);
        }
      }
    } catch (const nnd::Error& e) {
      std::printf("  error: %s\n", e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models;
  std::string isa_arg = "all";
  g_isa_cache = nnd::default_isa_cache_path();
  int repeat = 200;
  bool load_time = false;
  int runs = 10;
  bool isas_given = false;
  std::vector<int> thread_counts;  // --threads: a table of rows per count instead
  CostOptions cost_opt;
  nnd::MathMode math = nnd::MathMode::kExact;  // --math: every mode's engines
  int64_t batch = 16;           // the batched column's batch (the cost model's: 1 unless given)
  bool batch_given = false;     // --threads times batch 1 unless given
  nnd::jit::JitConfig jit_cfg;  // --chunk-kib changes the samples per chunk of a batched call
  // A cold load-time run: this process exists only to load one model first thing.
  if (argc == 4 && std::string(argv[1]) == "--load-child") return nnbench::load_time_child(argv[2], argv[3]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa" && i + 1 < argc) {
      isa_arg = argv[++i];
      isas_given = true;
    } else if (a == "--cpu-model" && i + 1 < argc) cost_opt.cpu = argv[++i];
    else if (a == "--kernels" || a == "-v") cost_opt.per_kernel = true;
    else if (a == "--measure") cost_opt.measure = true;
    else if (a == "--batch" && i + 1 < argc) {
      cost_opt.batch = batch = std::atoll(argv[++i]);
      batch_given = true;
      if (cost_opt.batch < 1) {
        std::fprintf(stderr, "nnbench: --batch needs a positive number of samples, got %s\n", argv[i]);
        return 2;
      }
    }
    else if (a == "--clock" && i + 1 < argc) {
      cost_opt.clock_ghz = std::atof(argv[++i]);
      cost_opt.clock_given = true;
      if (!(cost_opt.clock_ghz > 0)) {
        std::fprintf(stderr, "nnbench: --clock needs a frequency in GHz, got %s\n", argv[i]);
        return 2;
      }
    } else if (a == "--math" && i + 1 < argc) {
      const std::optional<nnd::MathMode> m = nnd::parse_math_mode(argv[++i]);
      if (!m) {
        std::fprintf(stderr, "nnbench: unknown --math '%s' (expected exact or fast)\n", argv[i]);
        return 2;
      }
      math = cost_opt.math = *m;
    }
    else if (a == "--chunk-kib" && i + 1 < argc) {
      jit_cfg.chunk_bytes = std::atoll(argv[++i]) * 1024;
      if (jit_cfg.chunk_bytes < 1) {
        std::fprintf(stderr, "nnbench: --chunk-kib needs a positive size in KiB, got %s\n", argv[i]);
        return 2;
      }
    }
    else if (a == "--cpu-time") g_cpu_time = true;
    else if (a == "--isa-cache" && i + 1 < argc) {
      const std::string v = argv[++i];
      g_isa_cache = v == "auto" ? nnd::default_isa_cache_path() : v == "off" ? "" : v;
    }
    else if (a == "--load-time") load_time = true;
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc) {
      std::istringstream in(argv[++i]);
      for (std::string t; std::getline(in, t, ',');) {
        const std::optional<int> n = nnd::parse_threads(t);
        if (!n) {
          std::fprintf(stderr, "nnbench: --threads takes counts 1..%d or auto, got '%s'\n", nnd::kMaxThreads, t.c_str());
          return 2;
        }
        thread_counts.push_back(*n);
      }
    }
    else if (a == "--version") {
      std::printf("%s\n", NND_VERSION_TEXT("nnbench"));
      return 0;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: nnbench [MODEL...] [--isa %s] [--repeat N] [--chunk-kib N] [--batch N]\n"
                  "               [--cpu-time] [--threads N[,M...]] [--math exact|fast] [--isa-cache auto|off|PATH]\n"
                  "       nnbench [MODEL...] --load-time [--isa ISA] [--runs N]   (load + compile only, cold and warm)\n"
                  "       nnbench [MODEL...] --cpu-model CPU [--isa ...] [--math exact|fast] [--clock GHz]\n"
                  "               [--kernels|-v] [--measure] [--batch N]   (estimated cycles on LLVM's model of CPU:\n"
                  "               llvm-mca; with --batch per sample of a call of N samples; CPU is an llvm-mca\n"
                  "               -mcpu name: silvermont for the NAO's Atom, znver3, ...)\n"
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
  if (load_time) {
    // One ISA option for the load time: auto (the default, as the daemon) or the one named.
    const std::string isa = isa_arg == "all" ? "auto" : isa_arg;
    if (!nnd::parse_isa(isa)) {
      std::fprintf(stderr, "nnbench: --load-time takes one ISA (%s), got '%s'\n", nnd::isa_choice_list().c_str(), isa.c_str());
      return 2;
    }
    return nnbench::report_load_time(models, runs, isa) == 0 ? 0 : 1;
  }
  using nnd::jit::Isa;
  const nnd::jit::CpuFeatures host = nnd::jit::detect_cpu_features();
  std::vector<Isa> requested, isas;
  bool with_auto = false;
  if (std::string bad; !parse_isa_list(isa_arg, &requested, &with_auto, &bad)) {
    std::fprintf(stderr, "nnbench: unknown ISA '%s' in --isa (expected %s)\n", bad.c_str(), isa_usage().c_str());
    return 2;
  }
  if (!cost_opt.cpu.empty()) {
    cost_opt.repeat = repeat;
    try {
      return run_cost_model(models, requested, isas_given, cost_opt);
    } catch (const nnd::Error& e) {
      std::fprintf(stderr, "nnbench: %s\n", e.what());
      return 2;
    }
  }
  for (Isa isa : requested) {
    if (!host.has(isa)) {
      std::printf("skip %s: this CPU lacks it\n", nnd::jit::isa_id(isa));
      continue;
    }
    isas.push_back(isa);
  }
  if (!thread_counts.empty()) return report_threads(models, isas, thread_counts, repeat, batch_given ? batch : 1, math);
  std::printf("nnbench: single thread, repeat %d (reference engine: %d), %s math\n", repeat, std::max(1, repeat / 20),
              nnd::math_mode_name(math));
  std::map<Isa, double> peak;
  for (Isa isa : isas) {
    peak[isa] = measure_peak(isa);
    std::printf("peak %-7s %7.1f GFLOP/s (%s loop, 12 accumulators)\n", nnd::jit::isa_id(isa), peak[isa],
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
      std::string bmin = "b", bmed = "b";
      bmin += std::to_string(batch);
      bmin += " min/smp";
      bmed += std::to_string(batch);
      bmed += " med/smp";
      std::printf("  %-11s %9s %10s %10s %9s %9s %9s %11s %11s %8s %7s\n", "engine", "compile", "code B", "arena B",
                  "min us", "med us", "p99 us", bmin.c_str(), bmed.c_str(), "GFLOP/s", "% peak");
      std::vector<double> jit_min;
      std::vector<std::string> jit_label;
      // The fixed ISAs, then auto (its compile time includes measuring the candidates unless the
      // calibration cache has the choice).
      const size_t rows = isas.size() + (with_auto ? 1 : 0);
      std::string auto_summary;
      for (size_t k = 0; k < rows; ++k) {
        const bool is_auto = k == isas.size();
        nnd::EngineOptions o;
        o.engine = nnd::EngineKind::kJit;
        o.isa = is_auto ? nnd::IsaChoice::kAuto : nnd::IsaChoice(isas[k]);
        o.math = math;
        o.isa_cache = g_isa_cache;
        t0 = Clock::now();
        auto jit = nnd::jit::make_jit_engine(g, o, jit_cfg);
        const double compile_ms = us_since(t0) / 1e3;
        const Stats s1 = stats(time_runs(*jit, 1, repeat));
        // About four batch-1 calls' worth of samples per batched call: repeat / 4 calls at batch 16.
        const auto batch_runs = static_cast<int>(std::clamp<int64_t>(int64_t{4} * repeat / batch, 1, repeat));
        const Stats sb = stats(time_runs(*jit, batch, batch_runs));
        const double gflops = flops / (s1.min * 1e3);
        const std::string label = is_auto ? std::string("auto:") + nnd::jit::isa_id(jit->isa()) : jit->name();
        if (is_auto) auto_summary = jit->isa_selection().summary();
        if (!peak.count(jit->isa())) peak[jit->isa()] = measure_peak(jit->isa());
        const double isa_peak = peak.at(jit->isa());
        jit_min.push_back(s1.min);
        jit_label.push_back(is_auto ? label : nnd::jit::isa_id(jit->isa()));
        std::printf("  %-11s %7.2fms %10zu %10lld %9.1f %9.1f %9.1f %11.2f %11.2f %8.1f %6.0f%%\n",
                    label.c_str(), compile_ms, jit->code_bytes(),
                    static_cast<long long>(jit->arena_floats_per_sample() * 4), s1.min, s1.median, s1.p99,
                    sb.min / static_cast<double>(batch), sb.median / static_cast<double>(batch), gflops, 100 * gflops / isa_peak);
      }
      if (with_auto) std::printf("  auto chose %s\n", auto_summary.c_str());
      {
        t0 = Clock::now();
        auto ref = nnd::make_reference_engine(g);
        const double setup_ms = us_since(t0) / 1e3;
        const Stats s = stats(time_runs(*ref, 1, std::max(1, repeat / 20)));
        std::printf("  %-11s %7.2fms %10s %10s %9.1f %9.1f %9.1f %11s %11s %8.2f %7s\n", "reference", setup_ms, "-",
                    "-", s.min, s.median, s.p99, "-", "-", flops / (s.min * 1e3), "-");
      }
      fs::path onnx = path;
      onnx.replace_extension(".onnx");
      double omin = 0, omed = 0;
      std::string why;
      if (ort_bench(onnx, repeat, &omin, &omed, &why)) {
        std::printf("  %-11s %9s %10s %10s %9.1f %9.1f %9s %11s %11s %8.1f %7s  (onnxruntime-node, 1 thread, batch 1; "
                    "includes ~10 us of JS binding per call)\n",
                    "ort", "-", "-", "-", omin, omed, "-", "-", "-", flops / (omin * 1e3), "-");
        std::printf("  ort min / jit min:");
        for (size_t k = 0; k < jit_min.size(); ++k) std::printf(" %s %.2fx", jit_label[k].c_str(), omin / jit_min[k]);
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
