#include "core/engine_factory/model_engine.h"

#include <algorithm>

#include "core/engine_factory/engine_factory.h"
#include "core/util/error.h"

namespace nnd {

std::vector<DType> apply_input_dtypes(Graph& g, const ModelOptions& options) {
  for (const auto& [name, dtype] : options.input_dtypes) {
    const auto it = std::find(g.input_names.begin(), g.input_names.end(), name);
    if (it == g.input_names.end()) {
      std::string known;
      for (const std::string& n : g.input_names) known += (known.empty() ? "" : ", ") + n;
      throw Error(ErrorCode::kInvalidArgument, "inputs: " + g.source + " has no input named '" + name +
                                                   "' (its inputs: " + known + ")");
    }
    g.values[static_cast<size_t>(g.inputs[static_cast<size_t>(it - g.input_names.begin())])].dtype = dtype;
  }
  std::vector<DType> dtypes;
  for (ValueId id : g.inputs) dtypes.push_back(g.values[static_cast<size_t>(id)].dtype);
  return dtypes;
}

ModelEngine make_model_engine(const Graph& g, const ModelOptions& options, const EngineMaker& make) {
  if (options.precision == Precision::kInt8) {
    throw Error(ErrorCode::kUnsupported,
                "precision int8 is not available in this build (nnd has no int8 kernels yet); "
                "use precision float32");
  }
  const EngineMaker& new_engine = make ? make : EngineMaker(make_engine);
  ModelEngine out;
  EngineOptions opts = options.engine;
  if (options.engine_auto) {
    opts.engine = EngineKind::kJit;
    try {
      out.engine = new_engine(g, opts);
      return out;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kIsaUnavailable && e.code() != ErrorCode::kUnsupported) throw;
      out.fallback_reason = std::string(error_code_name(e.code())) + ": " + e.what();
    }
    opts.engine = EngineKind::kReference;
  }
  out.engine = new_engine(g, opts);
  return out;
}

void warm_up_engine(Engine& e, const Graph& g) {
  std::vector<std::vector<unsigned char>> in(g.inputs.size());
  std::vector<InputView> views(g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
    in[i].assign(static_cast<size_t>(element_count(v.shape, v.name)) * (v.dtype == DType::kUInt8 ? 1 : 4), 0);
    views[i].dtype = v.dtype;
    views[i].data = in[i].data();
  }
  std::vector<std::vector<int64_t>> out(g.outputs.size());  // 8 bytes per element: room for any dtype
  std::vector<OutputView> outs(g.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.outputs[i])];
    out[i].resize(static_cast<size_t>(element_count(v.shape, v.name)));
    outs[i] = {output_view_dtype(v.dtype), out[i].data()};
  }
  e.run(1, views, outs);
}

}  // namespace nnd
