#include "daemon/registry/registry_builder.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>
#include <thread>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/engine_factory/model_engine.h"
#include "core/io/model_file.h"
#include "core/ir/cost.h"
#include "core/jit/jit_engine.h"
#include "core/util/error.h"
#include "daemon/registry/model_file_hash.h"
#include "daemon/registry/model_memory.h"

namespace nnd::daemon {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
};

std::vector<std::pair<std::string, DType>> sorted(std::vector<std::pair<std::string, DType>> v) {
  std::sort(v.begin(), v.end());
  return v;
}

uint64_t file_size_or_zero(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

std::string engine_setting_name(const ModelSettings& s) {
  if (s.options.engine_auto) return "auto";
  return s.options.engine.engine == EngineKind::kJit ? "jit" : "reference";
}

uint64_t model_signature(const Graph& g, const std::vector<DType>& input_dtypes, uint32_t max_batch) {
  Fnv f;
  f.u64(g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
    f.str(i < g.input_names.size() ? g.input_names[i] : v.name);
    f.u64(static_cast<uint64_t>(i < input_dtypes.size() ? input_dtypes[i] : v.dtype));
    f.u64(v.shape.size());
    for (int64_t d : v.shape) f.u64(static_cast<uint64_t>(d));
  }
  f.u64(g.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.outputs[i])];
    f.str(i < g.output_names.size() ? g.output_names[i] : v.name);
    f.u64(static_cast<uint64_t>(output_view_dtype(v.dtype)));
    f.u64(v.shape.size());
    for (int64_t d : v.shape) f.u64(static_cast<uint64_t>(d));
  }
  f.u64(max_batch);
  return f.h;
}

Graph interface_graph(const Graph& g) {
  Graph out;
  out.source = g.source;
  out.format = g.format;
  out.format_version = g.format_version;
  out.producer = g.producer;
  out.input_names = g.input_names;
  out.output_names = g.output_names;
  auto take = [&](ValueId id) {
    Value v = g.values[static_cast<size_t>(id)];
    v.producer = kNoNode;
    out.values.push_back(std::move(v));
    return static_cast<ValueId>(out.values.size() - 1);
  };
  for (ValueId id : g.inputs) out.inputs.push_back(take(id));
  for (ValueId id : g.outputs) out.outputs.push_back(take(id));
  return out;
}

bool compile_settings_equal(const ModelSettings& a, const ModelSettings& b) {
  const ModelOptions& x = a.options;
  const ModelOptions& y = b.options;
  return a.name == b.name && a.path == b.path && sorted(x.input_dtypes) == sorted(y.input_dtypes) &&
         x.engine.engine == y.engine.engine && x.engine.isa == y.engine.isa &&
         x.engine.math == y.engine.math && x.engine.threads == y.engine.threads &&
         x.engine_auto == y.engine_auto && x.precision == y.precision && x.quantization == y.quantization;
}

bool same_settings(const ModelSettings& a, const ModelSettings& b) {
  return compile_settings_equal(a, b) && a.max_batch == b.max_batch &&
         a.batch_delay_us == b.batch_delay_us && a.priority == b.priority && a.required == b.required;
}

std::shared_ptr<ServedModel> compile_model(const ModelSettings& settings, bool warm_up,
                                           const Logger& log, const GraphLoader& load_graph,
                                           const EngineFactory& engine_factory, uint64_t max_memory_bytes) {
  const EngineFactory& new_engine = engine_factory ? engine_factory : EngineFactory(make_engine);
  const auto t0 = Clock::now();
  auto m = std::make_shared<ServedModel>();
  m->settings = settings;
  const std::string model_text = "model '" + settings.name + "' (" + settings.path + ")";
  if (log) log(LogLevel::kDebug, "model '" + settings.name + "': loading " + settings.path);
  try {
    m->file_hash = model_file_hash(settings.path);  // before reading: a later change is seen
    m->graph = load_graph ? load_graph(settings) : load_model(settings.path);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kLimit, model_text + ": out of memory while loading it (" +
                                       std::to_string(file_size_or_zero(settings.path)) + " bytes of file)");
  } catch (const Error& e) {
    throw Error(e.code(), "model '" + settings.name + "': " + e.what());
  }
  Graph& g = m->graph;

  // Input dtype overrides, by input name.
  try {
    m->input_dtypes = apply_input_dtypes(g, settings.options);
  } catch (const Error& e) {
    throw Error(e.code(), "model '" + settings.name + "': " + e.what());
  }

  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
    m->input_sample_bytes.push_back(static_cast<size_t>(element_count(v.shape, v.name)) *
                                    dtype_bytes(m->input_dtypes[i]));
  }
  for (ValueId id : g.outputs) {
    const Value& v = g.values[static_cast<size_t>(id)];
    m->output_dtypes.push_back(output_view_dtype(v.dtype));
    m->output_sample_bytes.push_back(static_cast<size_t>(element_count(v.shape, v.name)) *
                                     dtype_bytes(m->output_dtypes.back()));
  }
  m->signature = model_signature(g, m->input_dtypes, settings.max_batch);
  m->parameters = parameter_count(g);
  m->flops_per_sample = flops_per_sample(g);

  // What it will need, before the engine allocates any of it.
  const ModelMemoryNeed need = model_memory_need(g, settings.max_batch);
  if (max_memory_bytes != 0 && need.total() > max_memory_bytes) {
    throw Error(ErrorCode::kLimit, model_text + ": needs " + describe_memory_need(need) +
                                       ", over daemon.max_model_memory_bytes (" + byte_text(max_memory_bytes) + ")");
  }

  // One engine, shared by every worker, made as libnnd makes it: `engine: auto` asks for the JIT
  // and falls back to the reference engine only when the JIT is not available for this CPU or
  // model.
  try {
    ModelEngine made = make_model_engine(g, settings.options, new_engine);
    m->engine = std::move(made.engine);
    if (!made.fallback_reason.empty() && log) {
      log(LogLevel::kWarning, "model '" + settings.name + "': engine auto: the JIT is unavailable (" +
                                  made.fallback_reason + "); serving the float64 reference engine, which is much slower");
    }
    if (warm_up) warm_up_engine(*m->engine, g);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kLimit, model_text + ": out of memory while compiling it (its need: " +
                                       describe_memory_need(need) + ")");
  } catch (const Error& e) {
    throw Error(e.code(), "model '" + settings.name + "': engine " + engine_setting_name(settings) + ": " +
                              e.what());
  }
  m->engine_name = m->engine->name();
  // The engine holds the network; the served model keeps its interface only (the weights were
  // held twice, or three times with the JIT's packed copy).
  m->graph = interface_graph(g);
  // Generated machine code (0 for the reference engine, which generates none).
  if (const auto* jit = dynamic_cast<const jit::JitEngine*>(m->engine.get())) {
    m->code_bytes = jit->code_bytes();
    m->run_threads = jit->threads();
    const jit::IsaSelection& sel = jit->isa_selection();
    if (log) {
      for (const std::string& w : sel.warnings) log(LogLevel::kWarning, "model '" + settings.name + "': " + w);
      log(LogLevel::kInfo, "model '" + settings.name + "': isa " + sel.summary());
    }
  }
  m->compile_ms = ms_since(t0);
  return m;
}

std::shared_ptr<ModelSet> build_model_set(const std::vector<ModelSettings>& models,
                                          const ModelSet* previous, const BuildOptions& options,
                                          BuildStats* stats) {
  const auto t0 = Clock::now();
  auto set = std::make_shared<ModelSet>();
  set->generation = previous ? previous->generation + 1 : 1;
  set->models.resize(models.size());

  // Decide what to reuse: the same file bytes and compile settings.
  std::vector<size_t> todo;
  BuildStats st;
  for (size_t i = 0; i < models.size(); ++i) {
    std::shared_ptr<ServedModel> old = previous ? previous->find(models[i].name) : nullptr;
    bool same_file = false;
    if (old && compile_settings_equal(old->settings, models[i])) {
      try {
        same_file = model_file_hash(models[i].path) == old->file_hash;
      } catch (const Error&) {
        same_file = false;  // compiling it reports why the file cannot be read
      }
    }
    if (!same_file) {
      todo.push_back(i);
      continue;
    }
    ++st.reused;
    if (same_settings(old->settings, models[i])) {
      set->models[i] = old;
      if (options.log) {
        options.log(LogLevel::kDebug, "model '" + models[i].name + "': unchanged, version " +
                                          std::to_string(old->version) + " kept");
      }
      continue;
    }
    // Only how it is scheduled changed: the same engine under the new settings.
    auto m = std::make_shared<ServedModel>(*old);
    m->settings = models[i];
    m->signature = model_signature(m->graph, m->input_dtypes, m->settings.max_batch);
    set->models[i] = std::move(m);
    ++st.rescheduled;
    if (options.log) {
      options.log(LogLevel::kInfo, "model '" + models[i].name + "' v" + std::to_string(old->version) +
                                       ": new scheduling settings, engine kept (max_batch " +
                                       std::to_string(models[i].max_batch) + ", batch_delay_us " +
                                       std::to_string(models[i].batch_delay_us) + ", priority " +
                                       std::to_string(models[i].priority) + ")");
    }
  }

  // Compile the rest in parallel.
  std::vector<std::string> errors(models.size());
  std::atomic<size_t> next{0};
  unsigned threads = options.compile_threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, todo.size()));
  auto work = [&] {
    if (options.low_priority) {
      ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
    }
    for (;;) {
      const size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      const size_t i = todo[k];
      try {
        ModelSettings settings = models[i];
        settings.options.engine.isa_cache = options.isa_cache;
        set->models[i] = compile_model(settings, options.warm_up, options.log, options.load_graph,
                                       options.make_engine, options.max_model_memory_bytes);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // out of threads or address space: the threads that started (or this one) do it
      }
    }
    if (pool.empty()) work();
    for (auto& t : pool) t.join();
  }

  std::vector<std::string> failures;
  bool required_failed = false;
  for (size_t i : todo) {
    if (errors[i].empty()) continue;
    failures.push_back(errors[i]);
    required_failed = required_failed || models[i].required;
  }
  if (!failures.empty() && (!options.skip_failed || required_failed)) {
    std::string what = std::to_string(failures.size()) + " of " + std::to_string(models.size()) +
                       " model(s) failed:";
    for (const std::string& f : failures) what += "\n  " + f;
    throw BuildError(what, std::move(failures));
  }

  // Skipped models leave the set (only reachable with skip_failed and no required failure).
  st.skipped = std::move(failures);
  std::vector<size_t> built;
  for (size_t i : todo) {
    if (errors[i].empty()) built.push_back(i);
  }

  // Versions: a replaced model continues its predecessor's count.
  for (size_t i : built) {
    ServedModel& m = *set->models[i];
    std::shared_ptr<ServedModel> old = previous ? previous->find(m.settings.name) : nullptr;
    m.version = old ? old->version + 1 : 1;
    ++st.compiled;
    if (options.log) {
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "model '%s' v%u: compiled in %.1f ms, code %llu bytes, engine %s%s, "
                    "%lld parameters, %lld FLOPs/sample, signature %016llx",
                    m.settings.name.c_str(), m.version, m.compile_ms,
                    static_cast<unsigned long long>(m.code_bytes), m.engine_name.c_str(),
                    m.run_threads > 1 ? (" on " + std::to_string(m.run_threads) + " threads").c_str() : "",
                    static_cast<long long>(m.parameters),
                    static_cast<long long>(m.flops_per_sample),
                    static_cast<unsigned long long>(m.signature));
      options.log(LogLevel::kInfo, buf);
    }
  }
  if (!st.skipped.empty()) {
    std::erase_if(set->models, [](const std::shared_ptr<ServedModel>& m) { return !m; });
  }
  st.wall_ms = ms_since(t0);
  if (stats) *stats = st;
  return set;
}

}  // namespace nnd::daemon
