// The proof behind BatchReading::kFreeAsOne (onnx_import.h): a graph whose batch is free, read as
// a batch of one so that the shape arithmetic exporters write on the batch size folds, runs each
// sample of any batch on its own. Internal to the ONNX loader.
//
// The importer lowers the graph with the batch as 1; the trace follows where the batch of N
// samples really sits in every ONNX tensor, node by node, from the operators' semantics:
//
//   - a computed tensor carries the batch on one ONNX axis `a`, possibly merged with other data
//     (nn.MultiheadAttention's Reshape [T, N, E] -> [T, N * heads, E / heads] puts the heads
//     inside it, the out-projection's [T * N, E] the time steps outside it): the axis has length
//     outer * N * inner, its index being (o * N + n) * inner + i (BatchPos; outer and inner are
//     what it has in the batch-of-one reading, where its length is outer * inner);
//   - an integer constant may hold multiples of the batch size (Shape of a computed tensor and the
//     arithmetic on it): per element, whether its value c (the batch-of-one one) stands for c * N;
//     a constant made over such a shape (ConstantOfShape, Expand) repeats its values along N.
//
// Each node is checked against its operator: element-wise operators pair the batch axis of their
// operands, Reshape must find the batch at the same stride in the result, reductions, softmax,
// slicing and products must leave the batch axis alone or only run over whole samples (a MatMul
// batched over it, a Gemm over its rows), arithmetic on the batch size must stay a multiple of it.
// A node that would mix samples, or whose operator the trace does not know, is refused by name:
// the reading is then not taken. At a graph output the batch must stand alone on one axis
// (inner and outer 1), where it is served.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/onnx_constant.h"
#include "core/io/onnx_patterns.h"

namespace onnx {
class NodeProto;
}

namespace nnd::onnx_import {

class Importer;
struct Symbol;

struct BatchPos {
  int axis = 0;         // the ONNX axis that holds the batch
  int64_t inner = 1;    // its length below the batch (the heads of N * heads)
};

class BatchTrace {
 public:
  // A graph input, its batch on ONNX axis `axis`.
  void input(const std::string& name, int axis);
  // After the importer lowered `node`: where the batch sits in each output, or throws nnd::Error
  // (kUnsupported, naming the operator's reason) when the node would mix the samples.
  void node(const Importer& im, const onnx::NodeProto& node);
  // After the importer lowered the first `lowered` nodes of pattern `p` as one function.
  void pattern(const Importer& im, const onnx::GraphProto& graph, const Pattern& p, size_t lowered);
  // The ONNX axis where graph output `name` is served with the batch; throws when the batch is
  // merged with other data there.
  int output_axis(const Importer& im, const std::string& name) const;

 private:
  struct Scaled {
    Constant times_n;               // same dims as the constant; 1 where the value stands for c * N
    std::vector<bool> repeats_on;  // per axis: the constant's length there is really c * N
  };
  void dynamic_node(const Importer& im, const onnx::NodeProto& node);
  void constant_node(const Importer& im, const onnx::NodeProto& node);
  bool scaled(const std::string& name) const;
  Constant times_n(const Importer& im, const std::string& name) const;  // zeros when not scaled
  std::vector<bool> repeats_on(const Importer& im, const std::string& name) const;
  BatchPos pos(const Importer& im, const std::string& name) const;
  // The batch position of an element-wise (broadcasting) result of `inputs`, rank `rank`.
  BatchPos broadcast(const Importer& im, const std::vector<std::string>& inputs, size_t rank) const;

  std::unordered_map<std::string, BatchPos> pos_;
  std::unordered_map<std::string, Scaled> scaled_;
};

}  // namespace nnd::onnx_import
