// The graph IR: values (tensors) and nodes (layers) in topological order.
//
// A Graph is produced by a loader (core/io), checked and completed by shape inference
// (shape_inference.h), rewritten by passes and executed by engines. It owns its weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/layers.h"
#include "core/ir/tensor.h"

namespace nnd {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

// A tensor flowing between layers: one sample's shape and its element type.
struct Value {
  std::string name;  // "<keras layer name>" or "<name>:<k>" for the k-th call of a shared layer
  DType dtype = DType::kFloat32;
  Dims shape;                 // filled by shape inference for node outputs
  NodeId producer = kNoNode;  // kNoNode for graph inputs
};

// The model format a graph was loaded from.
enum class ModelFormat : uint8_t { kUnknown, kKeras, kOnnx };
const char* model_format_name(ModelFormat f);  // "Keras", "ONNX"

// One layer call. A Keras layer called twice becomes two nodes with copies of its weights.
struct Node {
  std::string name;       // Keras layer or ONNX node name (for messages and dumps)
  std::string source_op;  // the Keras class or ONNX operator it comes from: "SeparableConv2D",
                          // "TFOpLambda", "Conv" (for messages only)
  LayerParams params;
  std::vector<ValueId> inputs;
  ValueId output = -1;
};

struct Graph {
  std::string source;  // file the graph was loaded from (for messages)
  ModelFormat format = ModelFormat::kUnknown;
  std::string format_version;  // Keras: the file's keras_version ("2.6.0"; empty when it records
                               // none); ONNX: the default domain's opset ("15")
  std::string producer;        // what wrote the file, when it says: ONNX producer_name and version
                               // ("pytorch 1.13.0"), a Keras .h5's backend ("tensorflow")
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order: every input is a graph input or produced earlier
  std::vector<ValueId> inputs;   // in Keras `input_layers` order
  std::vector<ValueId> outputs;  // in Keras `output_layers` order
  std::vector<std::string> input_names;   // Keras input layer names
  std::vector<std::string> output_names;  // Keras output layer names (unique; see loader)

  // "file.h5: layer 'name' (Class)", "file.onnx: node 'name' (Op)" — the prefix every node-level
  // error message starts with.
  std::string node_context(const Node& n) const;
  // "Keras 2.6.0", "ONNX opset 15, pytorch 1.13.0" (for tools and logs).
  std::string format_description() const;
};

// Checks the structural invariants: ids in range, topological order, every value produced once,
// outputs reachable. Throws nnd::Error naming the file and node on violation.
void verify_structure(const Graph& g);

}  // namespace nnd
