// nnrun: load a model (Keras .h5/.keras or ONNX), run it on .npy inputs (or a deterministic pattern) with one of
// nnd's engines, print what it did and write the outputs as .npy files.
//
// Exit codes: 0 success, 1 model/input error (message on stderr), 2 usage error.
#include <CLI/CLI.hpp>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "core/jit/jit_engine.h"
#include "core/util/error.h"
#include "nnd_version.h"

namespace {

using Clock = std::chrono::steady_clock;

// "(batch, d0, d1, ...)" for printing a whole batch's shape.
std::string batch_shape(int64_t batch, const nnd::Dims& sample) {
  nnd::Dims d{batch};
  d.insert(d.end(), sample.begin(), sample.end());
  return nnd::dims_to_string(d);
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void print_output_summary(const nnd::Graph& g, const nnd::ModelOutputs& out, size_t i) {
  const size_t n = out.size(i);
  double mn = out.value(i, 0), mx = mn;
  for (size_t k = 1; k < n; ++k) {
    mn = std::min(mn, out.value(i, k));
    mx = std::max(mx, out.value(i, k));
  }
  const size_t per_sample = n / static_cast<size_t>(out.batch);
  std::printf("  %s: sample 0 = [", g.output_names[i].c_str());
  const size_t shown = std::min<size_t>(per_sample, 8);
  for (size_t k = 0; k < shown; ++k) std::printf("%s%.6g", k ? ", " : "", out.value(i, k));
  std::printf("%s]  min %.6g max %.6g\n", shown < per_sample ? ", ..." : "", mn, mx);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "nnrun: run a model (Keras .h5/.keras or ONNX) with one of nnd's engines.\n\n"
      "The default engine is the JIT (what nnd serves with); it refuses a model with a layer it\n"
      "does not compile, naming each one, rather than fall back silently: --engine reference\n"
      "runs any model on the exact float64 reference engine (slow; for comparison).\n\n"
      "Reads each input from a .npy file (float32 or uint8, first axis is the batch; uint8 is\n"
      "converted to float32, as for camera bytes). An input given no file gets a deterministic\n"
      "pattern: element j of input k (flat over the batch) is ((j*37 + k*101) mod 256) / 255.\n"
      "Writes each output to DIR/<Keras output layer name>.npy (float32, or int64 for ArgMax\n"
      "indices; batch first) when --output-dir is given, and prints input/output names, shapes\n"
      "and timings."};
  std::string model_path, engine_name = "jit", isa_name = "auto", math_name = "exact", threads_name = "1";
  std::string isa_cache = "auto";
  std::vector<std::string> input_specs;
  std::string output_dir;
  int64_t batch = 0;
  int repeat = 1;
  bool cpu_time = false;
  app.add_option("model", model_path, "model file: Keras HDF5 (.h5), Keras 3 archive (.keras) or ONNX (.onnx), recognised by content")->required();
  // jit by default: the reference engine is some 50x slower on a real network and is what
  // nobody deploys; timings and outputs should be the daemon's unless asked otherwise.
  app.add_option("--engine", engine_name,
                 "jit (default: machine code for this CPU, as nnd runs it) or reference (exact, "
                 "float64, slow)")
      ->check(CLI::IsMember({"reference", "jit"}));
  app.add_option("--isa", isa_name, "JIT instruction set: " + nnd::isa_choice_list())
      ->check(CLI::IsMember(nnd::isa_choice_ids()));
  app.add_option("--isa-cache", isa_cache,
                 "isa auto: the calibration cache file shared with nnbench, nninfo and nnd (default auto: "
                 "$NND_ISA_CACHE, else $CACHE_DIRECTORY/isa-calibration, else ~/.cache/nnd/isa-calibration), "
                 "a path, or off (measure every run)");
  app.add_option("--math", math_name, "JIT math mode: exact or fast")
      ->check(CLI::IsMember({"exact", "fast"}));
  app.add_option("--threads", threads_name,
                 "JIT: threads one run uses (default 1; auto: by the model's FLOPs and the cores); "
                 "outputs are bit-identical for every count")
      ->check([](const std::string& t) {
        return nnd::parse_threads(t) ? std::string() : "expected auto or a count 1.." + std::to_string(nnd::kMaxThreads);
      });
  app.add_option("--input", input_specs, "NAME=FILE.npy for the Keras input layer NAME (repeatable)");
  app.add_option("--output-dir", output_dir, "write DIR/<output name>.npy for every output");
  app.add_option("--batch", batch,
                 "samples per run when inputs come from the pattern (default 1); must match the "
                 "files' first axis when files are given")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "run this many times and report min/median time (default 1)")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--cpu-time", cpu_time,
               "time the runs in this thread's CPU time instead of wall time (on a core other processes "
               "share; with --threads > 1 the helpers' time is not counted)");
  app.set_version_flag("--version", NND_VERSION_TEXT("nnrun"));
  CLI11_PARSE(app, argc, argv);

  std::map<std::string, std::string> files;
  for (const std::string& spec : input_specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      std::fprintf(stderr, "nnrun: --input expects NAME=FILE.npy, got '%s'\n", spec.c_str());
      return 2;
    }
    if (!files.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second) {
      std::fprintf(stderr, "nnrun: input '%s' given twice\n", spec.substr(0, eq).c_str());
      return 2;
    }
  }

  nnd::EngineOptions options;
  options.engine = *nnd::parse_engine_kind(engine_name);
  options.isa = *nnd::parse_isa(isa_name);
  options.math = *nnd::parse_math_mode(math_name);
  options.threads = *nnd::parse_threads(threads_name);
  options.isa_cache = isa_cache == "auto" ? nnd::default_isa_cache_path() : isa_cache == "off" ? "" : isa_cache;

  try {
    auto t0 = Clock::now();
    nnd::Graph g = nnd::load_model(model_path);
    const double load_ms = ms_since(t0);
    if (options.engine == nnd::EngineKind::kJit) {
      // Name every layer the JIT does not compile at once, not just the first.
      const std::vector<nnd::jit::UnsupportedLayer> missing = nnd::jit::jit_unsupported_layers(g);
      if (!missing.empty()) {
        std::fprintf(stderr, "nnrun: %zu layer(s) not compiled by the JIT:\n", missing.size());
        for (const nnd::jit::UnsupportedLayer& u : missing) std::fprintf(stderr, "  %s\n", u.message.c_str());
        return 1;
      }
    }
    t0 = Clock::now();
    std::unique_ptr<nnd::Engine> engine = nnd::make_engine(g, options);
    const double prepare_ms = ms_since(t0);

    nnd::ModelInputs in = nnd::prepare_inputs(g, files, batch);
    nnd::ModelOutputs out = nnd::allocate_outputs(g, in.batch);
    const std::vector<nnd::InputView> views = in.views();
    const std::vector<nnd::OutputView> ptrs = out.views();

    std::printf("model %s (%s), engine %s\n", model_path.c_str(), g.format_description().c_str(),
                engine->name().c_str());
    if (const auto* jit = dynamic_cast<const nnd::jit::JitEngine*>(engine.get())) {
      const nnd::jit::IsaSelection& sel = jit->isa_selection();
      std::printf("isa %s\n", sel.summary().c_str());
      for (const std::string& w : sel.warnings) std::fprintf(stderr, "nnrun: warning: %s\n", w.c_str());
    }
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      std::printf("input  %s: %s %s from %s\n", g.input_names[i].c_str(),
                  batch_shape(in.batch, g.values[g.inputs[i]].shape).c_str(),
                  nnd::dtype_name(in.arrays[i].dtype), in.sources[i].c_str());
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      std::printf("output %s: %s %s\n", g.output_names[i].c_str(),
                  batch_shape(in.batch, g.values[g.outputs[i]].shape).c_str(), nnd::dtype_name(out.dtypes[i]));
    }

    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
      t0 = Clock::now();
      const double cpu0 = cpu_time ? thread_cpu_ms() : 0;
      engine->run(in.batch, views, ptrs);
      times.push_back(cpu_time ? thread_cpu_ms() - cpu0 : ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    std::printf("load %.2f ms, engine setup %.2f ms, run (batch %lld) min %.4f ms, median %.4f ms"
                " over %d run%s%s\n",
                load_ms, prepare_ms, static_cast<long long>(in.batch), times.front(),
                times[times.size() / 2], repeat, repeat == 1 ? "" : "s", cpu_time ? " (thread CPU time)" : "");
    for (size_t i = 0; i < g.outputs.size(); ++i) print_output_summary(g, out, i);
    if (!output_dir.empty()) {
      for (const std::string& p : nnd::write_outputs(g, out, output_dir)) {
        std::printf("wrote %s\n", p.c_str());
      }
    }
  } catch (const nnd::Error& e) {
    std::fprintf(stderr, "nnrun: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "nnrun: out of memory\n");
    return 1;
  }
  return 0;
}
