// Memcheck driver: loads every Keras fixture (or a real network) in ONE process and runs each
// through the JIT (every ISA this CPU offers, exact math, plus fast math on the best ISA) and,
// for the fixtures, the reference engine, checking the results. It exists so that valgrind pays its start-up cost
// (HDF5, libstdc++ under instrumentation: seconds per process) once instead of once per model and
// engine; ctest runs it under `valgrind --error-exitcode=1`, so any invalid access, use of an
// uninitialised value or leak in the loader, the passes, the engines or the JIT's generated code
// fails the test. Checking results matters too: it proves the JIT code really ran (under
// valgrind, on valgrind's synthetic CPU) instead of being skipped or run stale.
//
// Usage: nnd_memcheck_models [--fixtures] [--real NAME]...   (at least one of them)
// Exit status 0 when every result agrees, 1 otherwise (every disagreement is printed), 2 for a
// usage error.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/engine/engine_options.h"
#include "core/io/keras_hdf5.h"
#include "core/io/model_file.h"
#include "core/io/model_inputs.h"
#include "core/io/npy.h"
#include "core/util/error.h"
#include "core/jit/cpu_features.h"
#include "core/jit/jit_engine.h"
#include "core/ref/reference_engine.h"

namespace {

namespace fs = std::filesystem;
using nnd::jit::Isa;

// The fixture rule: max |got - want| <= 1e-5 * max(1, |want|) (docs/fixtures.md).
constexpr double kExactTol = 1e-5;
// Fast math approximates exp/tanh/... (core/jit/generators/fast_math.h); 1e-4 is the bound the JIT fast-math
// tests hold whole networks to. Fixtures with steep activations get the same bound scaled by 10:
// this driver looks for memory errors, the JIT tests own the accuracy claims.
constexpr double kFastTol = 1e-3;

int g_failures = 0;

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Largest |got - want| / max(1, |want|); a NaN/Inf mismatch counts as infinity.
double scaled_error(const float* got, const float* want, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double g = got[i], w = want[i];
    if (!std::isfinite(g) || !std::isfinite(w)) {
      if (!(std::isnan(g) && std::isnan(w)) && g != w) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(g - w) / std::max(1.0, std::fabs(w)));
  }
  return worst;
}

void check(const std::string& what, const float* got, const float* want, size_t n, double tol) {
  const double e = scaled_error(got, want, n);
  if (!(e <= tol)) {
    std::printf("FAIL %s: scaled error %.3g > %.3g\n", what.c_str(), e, tol);
    ++g_failures;
  }
}

nnd::ModelOutputs run(nnd::Engine& e, const nnd::Graph& g, const nnd::ModelInputs& in) {
  nnd::ModelOutputs out = nnd::allocate_outputs(g, in.batch);
  const auto views = in.views();
  const auto outs = out.views();
  e.run(in.batch, views, outs);
  return out;
}

// One model through every engine variant. With `with_reference` (fixtures: small, cheap) the
// reference engine runs too: it must match the expected files within `exact_tol`, and each exact
// JIT variant must match both it and the expected files. Without it (real networks, where the
// float64 reference costs minutes under valgrind and its code is the one the fixtures already
// cover), each exact JIT variant must match the expected files within 2 * `exact_tol`: the JIT
// tests bound JIT vs reference and the real-network tests reference vs ONNX Runtime by
// `exact_tol` each. Fast math is held to kFastTol against whichever baseline there is.
void check_model(const std::string& name, const fs::path& model, const fs::path& data_dir,
                 const nlohmann::json& spec, double exact_tol, bool with_reference) {
  const double t0 = now_ms();
  const nnd::Graph g = nnd::load_model(model.string());  // .h5 or .keras
  std::map<std::string, std::string> files;
  for (const auto& in : spec.at("inputs")) {
    files[in.at("name").get<std::string>()] = (data_dir / in.at("file").get<std::string>()).string();
  }
  const nnd::ModelInputs inputs = nnd::prepare_inputs(g, files, 0);
  std::vector<nnd::NpyArray> expected;
  for (const auto& out : spec.at("outputs")) {
    expected.push_back(nnd::read_npy((data_dir / out.at("file").get<std::string>()).string()));
  }
  const nnd::ModelOutputs sizes = nnd::allocate_outputs(g, inputs.batch);
  bool shapes_ok = expected.size() == g.outputs.size();
  for (size_t i = 0; shapes_ok && i < expected.size(); ++i) {
    shapes_ok = static_cast<size_t>(expected[i].element_count()) == sizes.buffers[i].size();
  }
  if (!shapes_ok) {
    std::printf("FAIL %s: the outputs do not match the manifest's expected files\n", name.c_str());
    ++g_failures;
    return;
  }
  std::string timing = "load " + std::to_string(static_cast<int>(now_ms() - t0)) + " ms";

  std::optional<nnd::ModelOutputs> ref;
  if (with_reference) {
    const double t = now_ms();
    auto engine = nnd::make_reference_engine(g);
    ref = run(*engine, g, inputs);
    for (size_t i = 0; i < expected.size(); ++i) {
      check(name + " reference", ref->buffers[i].data(), expected[i].f32(),
            ref->buffers[i].size(), exact_tol);
    }
    timing += ", reference " + std::to_string(static_cast<int>(now_ms() - t)) + " ms";
  }

  static const nnd::jit::CpuFeatures host = nnd::jit::detect_cpu_features();
  std::vector<std::pair<nnd::EngineOptions, std::string>> variants;
  auto jit = [](nnd::IsaChoice isa, nnd::MathMode math) {
    nnd::EngineOptions o;
    o.engine = nnd::EngineKind::kJit;
    o.isa = isa;
    o.math = math;
    return o;
  };
  for (Isa isa : nnd::jit::all_isas()) {
    if (host.has(isa)) variants.push_back({jit(isa, nnd::MathMode::kExact), nnd::jit::isa_id(isa)});
  }
  // The most capable ISA by name: isa auto would time every candidate under valgrind first.
  variants.push_back({jit(host.best(), nnd::MathMode::kFast), std::string("fast ") + nnd::jit::isa_id(host.best())});
  for (const auto& [opt, label] : variants) {
    const double t = now_ms();
    auto jit = nnd::jit::make_jit_engine(g, opt);
    const nnd::ModelOutputs got = run(*jit, g, inputs);
    const bool fast = opt.math == nnd::MathMode::kFast;
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string what = name + " jit " + label + " output " + g.output_names[i];
      const size_t n = got.buffers[i].size();
      if (ref) {
        check(what + " vs reference", got.buffers[i].data(), ref->buffers[i].data(), n,
              fast ? kFastTol : kExactTol);
      }
      if (!fast) {
        check(what + " vs expected", got.buffers[i].data(), expected[i].f32(), n,
              ref ? exact_tol : 2 * exact_tol);
      } else if (!ref) {
        check(what + " vs expected", got.buffers[i].data(), expected[i].f32(), n, kFastTol);
      }
    }
    timing += ", jit " + label + " " + std::to_string(static_cast<int>(now_ms() - t)) + " ms";
  }
  std::printf("ok %s: %s\n", name.c_str(), timing.c_str());
  std::fflush(stdout);
}

nlohmann::json read_manifest(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw nnd::Error(nnd::ErrorCode::kIo, "cannot read " + p.string());
  return nlohmann::json::parse(in);
}

int run_fixtures(const fs::path& dir) {
  int models = 0;
  const nlohmann::json manifest = read_manifest(dir / "manifest.json");
  for (const auto& c : manifest.at("cases")) {
    // The fixture generator marks cases where float32 inference itself (the tfjs oracle) misses
    // 1e-5 (uint8 inputs); the JIT tests hold them to twice the tolerance, and so does this.
    const bool f32_limited =
        c.contains("oracle_note") &&
        c.at("oracle_note").get<std::string>().find("float32 rounding") != std::string::npos;
    for (const auto& [layout, file] : c.at("models").items()) {
      const std::string name = c.at("name").get<std::string>() + "/" + layout;
      check_model(name, dir / file.get<std::string>(), dir, c,
                  f32_limited ? 2 * kExactTol : kExactTol, true);
      ++models;
    }
  }
  return models;
}

// `stem` is the model file name without ".h5" ("bop"); a network listed in the manifest but
// absent from `models` (no ../shared) is reported and skipped.
int run_real(const fs::path& data, const fs::path& models, const std::string& stem) {
  const nlohmann::json manifest = read_manifest(data / "manifest.json");
  for (const auto& c : manifest.at("cases")) {
    const std::string file = c.at("model").get<std::string>();
    if (file != stem + ".h5") continue;
    if (!fs::exists(models / file)) {
      std::printf("skip %s: %s absent\n", stem.c_str(), (models / file).c_str());
      return 0;
    }
    check_model(stem, models / file, data, c, kExactTol, false);
    return 1;
  }
  std::printf("FAIL %s: not in %s\n", stem.c_str(), (data / "manifest.json").c_str());
  ++g_failures;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool fixtures = false;
  std::vector<std::string> real;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fixtures") == 0) {
      fixtures = true;
    } else if (std::strcmp(argv[i], "--real") == 0 && i + 1 < argc) {
      real.push_back(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--fixtures] [--real NAME]...\n", argv[0]);
      return 2;
    }
  }
  if (!fixtures && real.empty()) {
    std::fprintf(stderr, "usage: %s [--fixtures] [--real NAME]...\n", argv[0]);
    return 2;
  }
  try {
    const nnd::jit::CpuFeatures host = nnd::jit::detect_cpu_features();
    std::printf("CPU as seen by this process: %s (best ISA %s)\n", host.to_string().c_str(),
                nnd::jit::isa_id(host.best()));
    const fs::path data = NND_TEST_DATA_DIR;
    int models = 0;
    if (fixtures) models += run_fixtures(data / "fixtures");
    for (const std::string& r : real) models += run_real(data / "real", NND_SHARED_MODELS_DIR, r);
    std::printf("%d model(s) checked, %d failure(s)\n", models, g_failures);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  return g_failures == 0 ? 0 : 1;
}
