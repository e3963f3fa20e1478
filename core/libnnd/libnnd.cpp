// libnnd: the C API of nnd.h over nnd_core. A model is the graph, its engine (made by
// make_model_engine, as the daemon makes it) and the facts the API hands out; nothing here runs
// a model differently from the daemon.
#include "core/libnnd/nnd.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/engine/model_options.h"
#include "core/engine_factory/model_engine.h"
#include "core/io/model_file.h"
#include "core/jit/jit_engine.h"
#include "core/util/error.h"

struct nnd_options {
  nnd::ModelOptions options;
};

struct nnd_model {
  nnd::Graph graph;
  std::unique_ptr<nnd::Engine> engine;
  std::string engine_name, summary;
  std::vector<nnd_tensor_info_t> inputs, outputs;  // names point into graph
};

namespace {

// The message of the calling thread's last failure.
thread_local std::string t_last_error;

nnd_status fail(nnd_status status, std::string message) {
  t_last_error = std::move(message);
  return status;
}

nnd_status status_of(nnd::ErrorCode code) {
  switch (code) {
    case nnd::ErrorCode::kIo: return NND_E_IO;
    case nnd::ErrorCode::kFormat: return NND_E_FORMAT;
    case nnd::ErrorCode::kUnsupported: return NND_E_UNSUPPORTED;
    case nnd::ErrorCode::kLimit: return NND_E_LIMIT;
    case nnd::ErrorCode::kInvalidArgument: return NND_E_INVALID_ARGUMENT;
    case nnd::ErrorCode::kIsaUnavailable: return NND_E_ISA_UNAVAILABLE;
    case nnd::ErrorCode::kInternal: return NND_E_INTERNAL;
  }
  return NND_E_INTERNAL;
}

// Runs `body`, turning every exception into a status and a message: nothing leaves the C API.
template <class Body>
nnd_status guarded(const char* what, Body&& body) {
  try {
    return body();
  } catch (const nnd::Error& e) {
    return fail(status_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(NND_E_OUT_OF_MEMORY, std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(NND_E_INTERNAL, std::string(what) + ": " + e.what());
  } catch (...) {
    return fail(NND_E_INTERNAL, std::string(what) + ": unknown exception");
  }
}

nnd_tensor_info_t tensor_info(const nnd::Graph& g, nnd::ValueId id, const std::string& name) {
  const nnd::Value& v = g.values[static_cast<size_t>(id)];
  nnd_tensor_info_t t;
  std::memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  // What a caller passes or gets: a uint8 input as such, an output as the engine writes it.
  const nnd::DType served = v.dtype == nnd::DType::kUInt8 ? v.dtype : nnd::output_view_dtype(v.dtype);
  t.dtype = served == nnd::DType::kUInt8 ? NND_UINT8 : served == nnd::DType::kInt64 ? NND_INT64 : NND_FLOAT32;
  t.name = name.c_str();
  if (v.shape.size() > NND_MAX_RANK) {
    throw nnd::Error(nnd::ErrorCode::kLimit, "tensor '" + name + "' has rank " +
                                                 std::to_string(v.shape.size()) + ", libnnd reports at most " +
                                                 std::to_string(NND_MAX_RANK));
  }
  t.rank = static_cast<uint32_t>(v.shape.size());
  for (size_t d = 0; d < v.shape.size(); ++d) t.dims[d] = v.shape[d];
  t.sample_elements = static_cast<uint64_t>(nnd::element_count(v.shape, name));
  t.sample_bytes = t.sample_elements * nnd::dtype_bytes(served);
  return t;
}

// The size of nnd_tensor_info_t's first version: callers built with it get what it holds, and
// fields appended later are written only for callers whose struct_size says they have them.
constexpr uint32_t kTensorInfoV1Bytes = offsetof(nnd_tensor_info_t, sample_bytes) + sizeof(uint64_t);

nnd_status copy_info(const std::vector<nnd_tensor_info_t>& list, const char* side, uint32_t index,
                     nnd_tensor_info_t* info) {
  if (!info) return fail(NND_E_INVALID_ARGUMENT, std::string("nnd_model_") + side + ": info is NULL");
  if (info->struct_size < kTensorInfoV1Bytes) {
    return fail(NND_E_INVALID_ARGUMENT, std::string("nnd_model_") + side +
                                            ": info->struct_size is " + std::to_string(info->struct_size) +
                                            ": set it to sizeof(nnd_tensor_info_t)");
  }
  if (index >= list.size()) {
    return fail(NND_E_INVALID_ARGUMENT, std::string("nnd_model_") + side + ": index " + std::to_string(index) +
                                            ", the model has " + std::to_string(list.size()) + " " + side +
                                            (list.size() == 1 ? "" : "s"));
  }
  const uint32_t size = info->struct_size;
  std::memcpy(info, &list[index], std::min<size_t>(size, sizeof(nnd_tensor_info_t)));
  info->struct_size = size;
  return NND_OK;
}

}  // namespace

#define NND_STR_(x) #x
#define NND_STR(x) NND_STR_(x)

extern "C" {

const char* nnd_version(void) {
  return NND_STR(NND_VERSION_MAJOR) "." NND_STR(NND_VERSION_MINOR) "." NND_STR(NND_VERSION_PATCH);
}

const char* nnd_status_name(nnd_status s) {
  switch (s) {
    case NND_OK: return "NND_OK";
    case NND_E_INVALID_ARGUMENT: return "NND_E_INVALID_ARGUMENT";
    case NND_E_IO: return "NND_E_IO";
    case NND_E_FORMAT: return "NND_E_FORMAT";
    case NND_E_UNSUPPORTED: return "NND_E_UNSUPPORTED";
    case NND_E_LIMIT: return "NND_E_LIMIT";
    case NND_E_ISA_UNAVAILABLE: return "NND_E_ISA_UNAVAILABLE";
    case NND_E_INTERNAL: return "NND_E_INTERNAL";
    case NND_E_OUT_OF_MEMORY: return "NND_E_OUT_OF_MEMORY";
  }
  return "NND_E_UNKNOWN_STATUS";
}

const char* nnd_strerror(nnd_status s) {
  switch (s) {
    case NND_OK: return "success";
    case NND_E_INVALID_ARGUMENT: return "invalid argument";
    case NND_E_IO: return "model file cannot be read";
    case NND_E_FORMAT: return "not a model file nnd reads (damaged or unknown format)";
    case NND_E_UNSUPPORTED: return "layer, parameter or option not supported";
    case NND_E_LIMIT: return "over one of nnd's size limits";
    case NND_E_ISA_UNAVAILABLE: return "the CPU lacks the instruction set";
    case NND_E_INTERNAL: return "internal error in nnd";
    case NND_E_OUT_OF_MEMORY: return "out of memory";
  }
  return "unknown status";
}

const char* nnd_last_error(void) { return t_last_error.c_str(); }

nnd_status nnd_options_new(nnd_options_t** options) {
  if (!options) return fail(NND_E_INVALID_ARGUMENT, "nnd_options_new: options is NULL");
  *options = nullptr;
  return guarded("nnd_options_new", [&] {
    *options = new nnd_options;
    return NND_OK;
  });
}

void nnd_options_free(nnd_options_t* options) { delete options; }

nnd_status nnd_options_set(nnd_options_t* options, const char* key, const char* value) {
  if (!options || !key || !value) {
    return fail(NND_E_INVALID_ARGUMENT, "nnd_options_set: options, key or value is NULL");
  }
  return guarded("nnd_options_set", [&] {
    nnd::set_model_option(options->options, key, value);
    return NND_OK;
  });
}

nnd_status nnd_model_open(const char* path, const nnd_options_t* options, nnd_model_t** model) {
  if (!model) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_open: model is NULL");
  *model = nullptr;
  if (!path || !path[0]) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_open: path is NULL or empty");
  return guarded("nnd_model_open", [&] {
    const nnd::ModelOptions o = options ? options->options : nnd::ModelOptions{};
    auto m = std::make_unique<nnd_model>();
    m->graph = nnd::load_model(path);
    nnd::apply_input_dtypes(m->graph, o);
    nnd::ModelEngine made = nnd::make_model_engine(m->graph, o);
    m->engine = std::move(made.engine);
    m->engine_name = m->engine->name();
    if (const auto* jit = dynamic_cast<const nnd::jit::JitEngine*>(m->engine.get())) {
      const nnd::jit::IsaSelection& sel = jit->isa_selection();
      m->summary = "isa " + sel.summary() + "\nthreads " + std::to_string(jit->threads()) + "\n";
      for (const std::string& w : sel.warnings) m->summary += "warning: " + w + "\n";
    } else {
      m->summary = "engine " + m->engine_name + "\n";
    }
    if (!made.fallback_reason.empty()) {
      m->summary += "warning: engine auto: the JIT is unavailable (" + made.fallback_reason +
                    "); running the float64 reference engine, which is much slower\n";
    }
    const nnd::Graph& g = m->graph;
    for (size_t i = 0; i < g.inputs.size(); ++i) m->inputs.push_back(tensor_info(g, g.inputs[i], g.input_names[i]));
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      m->outputs.push_back(tensor_info(g, g.outputs[i], g.output_names[i]));
    }
    nnd::warm_up_engine(*m->engine, g);
    *model = m.release();
    return NND_OK;
  });
}

void nnd_model_close(nnd_model_t* model) { delete model; }

uint32_t nnd_model_num_inputs(const nnd_model_t* model) {
  return model ? static_cast<uint32_t>(model->inputs.size()) : 0;
}

uint32_t nnd_model_num_outputs(const nnd_model_t* model) {
  return model ? static_cast<uint32_t>(model->outputs.size()) : 0;
}

nnd_status nnd_model_input(const nnd_model_t* model, uint32_t index, nnd_tensor_info_t* info) {
  if (!model) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_input: model is NULL");
  return copy_info(model->inputs, "input", index, info);
}

nnd_status nnd_model_output(const nnd_model_t* model, uint32_t index, nnd_tensor_info_t* info) {
  if (!model) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_output: model is NULL");
  return copy_info(model->outputs, "output", index, info);
}

const char* nnd_model_engine(const nnd_model_t* model) { return model ? model->engine_name.c_str() : ""; }

const char* nnd_model_summary(const nnd_model_t* model) { return model ? model->summary.c_str() : ""; }

nnd_status nnd_model_run(nnd_model_t* model, uint32_t batch, const void* const* inputs,
                         void* const* outputs) {
  if (!model) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_run: model is NULL");
  if (batch == 0) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_run: batch must be at least 1");
  const size_t n_in = model->inputs.size(), n_out = model->outputs.size();
  if ((n_in && !inputs) || (n_out && !outputs)) {
    return fail(NND_E_INVALID_ARGUMENT, "nnd_model_run: inputs or outputs is NULL");
  }
  // Views on the stack for the usual few tensors (no allocation per run), on the heap beyond.
  constexpr size_t kStack = 8;
  nnd::InputView in_stack[kStack];
  nnd::OutputView out_stack[kStack];
  std::vector<nnd::InputView> in_heap;
  std::vector<nnd::OutputView> out_heap;
  nnd::InputView* in = in_stack;
  nnd::OutputView* out = out_stack;
  return guarded("nnd_model_run", [&] {
    if (n_in > kStack) {
      in_heap.resize(n_in);
      in = in_heap.data();
    }
    if (n_out > kStack) {
      out_heap.resize(n_out);
      out = out_heap.data();
    }
    for (size_t k = 0; k < n_in; ++k) {
      if (!inputs[k]) return fail(NND_E_INVALID_ARGUMENT, "nnd_model_run: inputs[" + std::to_string(k) + "] is NULL");
      in[k].dtype = model->inputs[k].dtype == NND_UINT8 ? nnd::DType::kUInt8 : nnd::DType::kFloat32;
      in[k].data = inputs[k];
    }
    for (size_t k = 0; k < n_out; ++k) {
      if (!outputs[k]) {
        return fail(NND_E_INVALID_ARGUMENT, "nnd_model_run: outputs[" + std::to_string(k) + "] is NULL");
      }
      out[k].dtype = model->outputs[k].dtype == NND_INT64 ? nnd::DType::kInt64 : nnd::DType::kFloat32;
      out[k].data = outputs[k];
    }
    model->engine->run(batch, std::span<const nnd::InputView>(in, n_in), std::span<const nnd::OutputView>(out, n_out));
    return NND_OK;
  });
}

}  // extern "C"
