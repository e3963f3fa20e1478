#include "core/ir/graph.h"

#include <vector>

#include "core/util/error.h"

namespace nnd {

const char* model_format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::kKeras: return "Keras";
    case ModelFormat::kOnnx: return "ONNX";
    case ModelFormat::kUnknown: break;
  }
  return "unknown format";
}

std::string Graph::node_context(const Node& n) const {
  return source + (format == ModelFormat::kOnnx ? ": node '" : ": layer '") + n.name + "' (" + n.source_op + ")";
}

std::string Graph::format_description() const {
  std::string s = model_format_name(format);
  if (!format_version.empty()) s += (format == ModelFormat::kOnnx ? " opset " : " ") + format_version;
  else if (format == ModelFormat::kKeras) s += " (version not recorded)";
  if (!producer.empty()) s += ", " + producer;
  return s;
}

void verify_structure(const Graph& g) {
  const auto nvalues = static_cast<ValueId>(g.values.size());
  auto in_range = [&](ValueId v) { return v >= 0 && v < nvalues; };

  // available[v]: value v has been defined (graph input or output of an earlier node).
  std::vector<bool> available(g.values.size(), false);
  std::vector<bool> produced(g.values.size(), false);
  if (g.inputs.empty()) throw Error(ErrorCode::kFormat, g.source + ": the model has no inputs");
  if (g.outputs.empty()) throw Error(ErrorCode::kFormat, g.source + ": the model has no outputs");
  if (g.input_names.size() != g.inputs.size() || g.output_names.size() != g.outputs.size()) {
    throw Error(ErrorCode::kInternal, g.source + ": internal error: input/output name lists do not match");
  }
  for (ValueId v : g.inputs) {
    if (!in_range(v)) throw Error(ErrorCode::kFormat, g.source + ": graph input refers to a missing tensor");
    if (g.values[v].producer != kNoNode || available[v]) {
      throw Error(ErrorCode::kFormat, g.source + ": graph input '" + g.values[v].name + "' is listed twice or produced by a layer");
    }
    available[v] = true;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.inputs.empty()) throw Error(ErrorCode::kFormat, g.node_context(n) + ": has no inputs");
    for (ValueId v : n.inputs) {
      if (!in_range(v)) throw Error(ErrorCode::kFormat, g.node_context(n) + ": input refers to a missing tensor");
      if (!available[v]) {
        throw Error(ErrorCode::kFormat, g.node_context(n) + ": input '" + g.values[v].name +
                    "' is not computed before this layer (cycle or dangling reference)");
      }
    }
    if (!in_range(n.output)) throw Error(ErrorCode::kFormat, g.node_context(n) + ": output refers to a missing tensor");
    if (produced[n.output] || available[n.output] ||
        g.values[n.output].producer != static_cast<NodeId>(i)) {
      throw Error(ErrorCode::kFormat, g.node_context(n) + ": output tensor '" + g.values[n.output].name +
                  "' is produced more than once");
    }
    produced[n.output] = available[n.output] = true;
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    ValueId v = g.outputs[i];
    if (!in_range(v) || !available[v]) {
      throw Error(ErrorCode::kFormat, g.source + ": model output '" + g.output_names[i] + "' is never computed");
    }
  }
}

}  // namespace nnd
