#include "workload.h"

#include <cstring>
#include <random>
#include <span>
#include <sstream>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/util/error.h"

namespace nnd::soak {
namespace {

// Expected outputs of every pool sample, each run alone (batch 1) as a lone client request would
// be, and a check that one batch of the whole pool gives the same bits.
std::vector<std::vector<float>> run_pool(const Graph& g, const ModelData& m, EngineKind kind,
                                         const std::string& isa_cache, std::string* engine_name) {
  EngineOptions o;
  o.engine = kind;
  o.isa_cache = isa_cache;
  auto engine = make_engine(g, o);
  if (engine_name) *engine_name = engine->name();
  const DType dt = m.uint8_input ? DType::kUInt8 : DType::kFloat32;
  std::vector<std::vector<float>> single(m.out_floats.size()), batched(m.out_floats.size());
  for (size_t k = 0; k < m.out_floats.size(); ++k) {
    single[k].resize(m.n * m.out_floats[k]);
    batched[k].resize(m.n * m.out_floats[k]);
  }
  for (size_t i = 0; i < m.n; ++i) {
    InputView v{dt, m.inputs.data() + i * m.in_bytes};
    std::vector<float*> outs;
    for (size_t k = 0; k < single.size(); ++k) outs.push_back(single[k].data() + i * m.out_floats[k]);
    engine->run(1, std::span<const InputView>(&v, 1), outs);
  }
  InputView v{dt, m.inputs.data()};
  std::vector<float*> outs;
  for (auto& b : batched) outs.push_back(b.data());
  engine->run(static_cast<int64_t>(m.n), std::span<const InputView>(&v, 1), outs);
  for (size_t k = 0; k < single.size(); ++k) {
    if (std::memcmp(single[k].data(), batched[k].data(), single[k].size() * sizeof(float)) != 0) {
      throw Error(ErrorCode::kInternal, m.path + ": engine " + engine->name() +
                  " gives different bits in a batch than alone; exact comparison impossible");
    }
  }
  return single;
}

ModelData load(const std::string& path, bool uint8_input, size_t n, uint32_t seed, bool with_reference,
               const std::string& isa_cache) {
  ModelData m;
  m.path = path;
  m.uint8_input = uint8_input;
  m.n = n;
  Graph g = load_model(path);
  if (g.inputs.size() != 1) throw Error(ErrorCode::kUnsupported, path + ": the soak expects one input");
  // The daemon types a `inputs: uint8` input in its graph (compile_model), which changes the
  // graph's content hash and so its ISA calibration cache key: typed alike, both find one entry.
  if (uint8_input) g.values[static_cast<size_t>(g.inputs[0])].dtype = DType::kUInt8;
  m.input_name = g.input_names[0];
  const size_t elems = static_cast<size_t>(element_count(g.values[g.inputs[0]].shape, "input"));
  m.in_bytes = elems * (uint8_input ? 1 : sizeof(float));
  for (auto id : g.outputs) {
    m.out_floats.push_back(static_cast<size_t>(element_count(g.values[id].shape, "output")));
  }
  // Deterministic pool: floats uniform in [-1, 1), bytes uniform in 0..255.
  m.inputs.resize(n * m.in_bytes);
  std::mt19937 rng(seed);
  if (uint8_input) {
    for (auto& b : m.inputs) b = static_cast<uint8_t>(rng() & 0xff);
  } else {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i < n * elems; ++i) {
      const float x = d(rng);
      std::memcpy(m.inputs.data() + i * sizeof(float), &x, sizeof x);
    }
  }
  m.exact = run_pool(g, m, EngineKind::kJit, isa_cache, &m.engine);
  if (with_reference) m.reference = run_pool(g, m, EngineKind::kReference, isa_cache, nullptr);
  return m;
}

}  // namespace

Workload Workload::build(const std::string& models_dir, const std::string& isa_cache) {
  Workload w;
  w.isa_cache = isa_cache;
  w.ball = load(models_dir + "/ball_patch.h5", false, 32, 11, true, isa_cache);
  w.fb = load(models_dir + "/field_boundary.h5", false, 16, 12, false, isa_cache);
  w.det = load(models_dir + "/detector.h5", true, 4, 13, false, isa_cache);
  // Config A's and B's ball engines must be told apart by their answers.
  size_t differing = 0;
  const size_t of = w.ball.out_floats[0];
  for (size_t s = 0; s < w.ball.n; ++s) {
    differing += std::memcmp(w.ball.exact[0].data() + s * of, w.ball.reference[0].data() + s * of,
                             of * sizeof(float)) != 0;
  }
  if (differing < w.ball.n / 2) {
    throw Error(ErrorCode::kInternal, "ball_patch.h5: the JIT and the reference engine agree on most samples; the soak could not "
                "tell config A's answers from B's");
  }
  return w;
}

std::string Workload::config_yaml(Config which, const std::string& endpoint, int workers) const {
  std::ostringstream y;
  const bool a = which == kConfigA;
  y << "# nnd_soak config " << (a ? "A" : "B") << " (rewritten before every SIGHUP)\n"
    << "daemon:\n  endpoint: " << endpoint << "\n  workers: " << workers
    << "\n  log_level: notice\n  max_clients: 64\n  isa_calibration_cache: " << isa_cache
    << "\nmodels:\n";
  y << "  - name: ball\n    path: " << ball.path << "\n    engine: " << (a ? "jit" : "reference")
    << "\n    max_batch: " << (a ? 32 : 16)
    << "\n    batch_delay_us: " << (a ? 300 : 0) << "\n    priority: 10\n";
  if (a) y << "  - name: fb\n    path: " << fb.path << "\n    engine: jit\n    max_batch: 4\n";
  y << "  - name: flip\n    path: " << (a ? ball.path : fb.path)
    << "\n    engine: jit\n    max_batch: 8\n";
  y << "  - name: det\n    path: " << det.path << "\n    engine: jit\n    inputs:\n      "
    << det.input_name << ": uint8\n    max_batch: 2\n";
  return y.str();
}

void fill_input(const ModelData& m, size_t first, uint32_t batch, void* dst) {
  auto* d = static_cast<uint8_t*>(dst);
  for (uint32_t b = 0; b < batch; ++b) {
    std::memcpy(d + b * m.in_bytes, m.inputs.data() + ((first + b) % m.n) * m.in_bytes, m.in_bytes);
  }
}

Match match_output(const ModelData& m, size_t first, uint32_t batch,
                   const std::vector<const float*>& out) {
  auto equals = [&](const std::vector<std::vector<float>>& exp) {
    if (exp.empty()) return false;
    for (size_t k = 0; k < m.out_floats.size(); ++k) {
      const size_t of = m.out_floats[k];
      for (uint32_t b = 0; b < batch; ++b) {
        const size_t s = (first + b) % m.n;
        if (std::memcmp(out[k] + b * of, exp[k].data() + s * of, of * sizeof(float)) != 0) {
          return false;
        }
      }
    }
    return true;
  };
  const bool e = equals(m.exact), r = equals(m.reference);
  return e && r ? Match::kBoth : e ? Match::kExact : r ? Match::kReference : Match::kNeither;
}

}  // namespace nnd::soak
