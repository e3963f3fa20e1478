#include "core/io/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>

#include "core/io/file_bytes.h"
#include "core/io/onnx_batch_trace.h"
#include "core/io/onnx_loader.h"
#include "core/ir/shape_inference.h"
#include "core/util/error.h"

namespace nnd {
namespace onnx_import {
namespace {

std::string perm_text(const Perm& p) {
  std::string s;
  for (int a : p) s += std::to_string(a);
  return s;
}

const char* attribute_type_name(int type) {
  switch (type) {
    case onnx::AttributeProto_AttributeType_FLOAT: return "a float";
    case onnx::AttributeProto_AttributeType_INT: return "an int";
    case onnx::AttributeProto_AttributeType_STRING: return "a string";
    case onnx::AttributeProto_AttributeType_TENSOR: return "a tensor";
    case onnx::AttributeProto_AttributeType_FLOATS: return "a list of floats";
    case onnx::AttributeProto_AttributeType_INTS: return "a list of ints";
    default: return "another type";
  }
}

}  // namespace

Perm identity_perm(size_t rank) {
  Perm p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int>(i);
  return p;
}

Perm batch_front_perm(size_t rank, int batch_axis) {
  Perm p{batch_axis};
  for (int k = 0; k < static_cast<int>(rank); ++k) {
    if (k != batch_axis) p.push_back(k);
  }
  return p;
}

Perm onnx_order(const Symbol& s) { return batch_front_perm(s.rank(), s.batch_outside() ? kBatchOutside : s.perm[0]); }

Perm channels_last_perm(size_t rank) {
  Perm p{0};
  for (size_t i = 2; i < rank; ++i) p.push_back(static_cast<int>(i));
  p.push_back(1);
  return p;
}

// ---------------------------------------------------------------------------------------------
// Attributes

Attributes::Attributes(const onnx::NodeProto& node, std::string context)
    : node_(node), context_(std::move(context)) {}

const onnx::AttributeProto* Attributes::find(const std::string& name, int type) {
  read_.insert(name);
  for (const auto& a : node_.attribute()) {
    if (a.name() != name) continue;
    if (!a.ref_attr_name().empty()) {
      throw Error(ErrorCode::kUnsupported, context_ + ": attribute '" + name + "' refers to a function attribute, which is not supported");
    }
    // Files from old exporters leave `type` unset; trust the field that is filled in then.
    if (a.type() != onnx::AttributeProto_AttributeType_UNDEFINED && a.type() != type) {
      throw Error(ErrorCode::kFormat, context_ + ": attribute '" + name + "' must be " + attribute_type_name(type) + ", got " +
                  attribute_type_name(a.type()));
    }
    return &a;
  }
  return nullptr;
}

bool Attributes::has(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return true;
  }
  return false;
}

int64_t Attributes::i(const std::string& name, int64_t fallback) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_INT);
  return a ? a->i() : fallback;
}

double Attributes::f(const std::string& name, double fallback) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_FLOAT);
  return a ? a->f() : fallback;
}

std::string Attributes::s(const std::string& name, const std::string& fallback) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_STRING);
  return a ? a->s() : fallback;
}

std::optional<std::vector<int64_t>> Attributes::ints(const std::string& name) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_INTS);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<std::vector<double>> Attributes::floats(const std::string& name) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_FLOATS);
  if (!a) return std::nullopt;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

const onnx::TensorProto* Attributes::t(const std::string& name) {
  const auto* a = find(name, onnx::AttributeProto_AttributeType_TENSOR);
  return a ? &a->t() : nullptr;
}

void Attributes::check_all_read() const {
  for (const auto& a : node_.attribute()) {
    if (!read_.count(a.name())) {
      throw Error(ErrorCode::kUnsupported, context_ + ": attribute '" + a.name() + "' is not supported for this operator");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Importer

Importer::Importer(const onnx::ModelProto& model, std::string source, BatchReading reading)
    : model_(model), source_(std::move(source)), whole_samples_(reading == BatchReading::kWholeSamples) {
  if (reading == BatchReading::kFreeAsOne) trace_ = std::make_unique<BatchTrace>();
  g_.source = source_;
  for (const auto& o : model_.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = static_cast<int>(o.version());
  }
  if (model_.opset_import_size() == 0) opset_ = 1;  // IR version 2 files: implicitly opset 1
  g_.format = ModelFormat::kOnnx;
  g_.format_version = std::to_string(opset_);
  g_.producer = model_.producer_name();
  if (!model_.producer_version().empty()) g_.producer += (g_.producer.empty() ? "" : " ") + model_.producer_version();
}

Importer::~Importer() = default;

void Importer::fail(const std::string& message) const { fail(ErrorCode::kFormat, message); }
void Importer::fail(ErrorCode code, const std::string& message) const { throw Error(code, context_ + ": " + message); }

std::string Importer::unique_value_name(const std::string& base) {
  std::string name = base.empty() ? "value" : base;
  for (int k = 1; value_names_.count(name); ++k) name = base + ":" + std::to_string(k);
  value_names_.insert(name);
  return name;
}

std::string Importer::unique_node_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; node_names_.count(name); ++k) name = base + ":" + std::to_string(k);
  node_names_.insert(name);
  return name;
}

Symbol Importer::dynamic_symbol(ValueId v, Perm perm, DType dtype) const {
  Symbol s;
  s.value = v;
  const Dims shape = ir_shape(v);
  const bool outside = perm[0] == kBatchOutside;
  if (perm.size() != shape.size() + 1) fail(ErrorCode::kInternal, "internal: a layout of the wrong rank");
  s.dims.assign(outside ? shape.size() : shape.size() + 1, 0);
  if (!outside) s.dims[static_cast<size_t>(perm[0])] = kBatchMarker;
  for (size_t j = 1; j < perm.size(); ++j) s.dims[static_cast<size_t>(perm[j])] = shape[j - 1];
  s.perm = std::move(perm);
  s.dtype = dtype;
  return s;
}

void Importer::read_inputs() {
  const auto& graph = model_.graph();
  int64_t initializer_elements = 0;
  for (const auto& init : graph.initializer()) {
    Symbol s;
    s.constant = decode_tensor(init, source_ + ": initializer '" + init.name() + "'");
    initializer_elements += s.constant->size();
    symbols_[init.name()] = std::move(s);
  }
  fold_budget_ = std::max(kMaxFoldedElements, 4 * initializer_elements);
  if (graph.sparse_initializer_size() > 0) {
    throw Error(ErrorCode::kUnsupported, source_ + ": sparse initializers are not supported");
  }
  for (const auto& in : graph.input()) {
    if (symbols_.count(in.name())) continue;  // an initializer also listed as input (IR < 4)
    const std::string ctx = source_ + ": input '" + in.name() + "'";
    if (!in.type().has_tensor_type()) throw Error(ErrorCode::kFormat, ctx + ": is not a tensor");
    const auto& tt = in.type().tensor_type();
    DType dtype;
    if (tt.elem_type() == onnx::TensorProto_DataType_FLOAT) {
      dtype = DType::kFloat32;
    } else if (tt.elem_type() == onnx::TensorProto_DataType_UINT8) {
      dtype = DType::kUInt8;
    } else {
      throw Error(ErrorCode::kUnsupported, ctx + ": element type " + onnx::TensorProto_DataType_Name(tt.elem_type()) +
                  " is not supported (float32 and uint8 inputs are)");
    }
    if (!tt.has_shape()) throw Error(ErrorCode::kUnsupported, ctx + ": has no shape; nnd compiles models with fixed input shapes");
    const auto& dims = tt.shape().dim();
    if (dims.size() < 2) {
      throw Error(ErrorCode::kUnsupported, ctx + ": has rank " + std::to_string(dims.size()) +
                  "; nnd needs a batch axis followed by at least one more axis");
    }
    const int b = whole_samples_ ? kBatchOutside : input_batch_axis(in.name(), tt.shape());
    const int64_t batch = b != kBatchOutside && dims[b].has_dim_value() ? dims[b].dim_value() : 0;
    declared_batch_ = declared_batch_ < 0 || declared_batch_ == batch ? batch : 0;
    Dims sample;
    for (int k = 0; k < dims.size(); ++k) {
      if (k == b) continue;
      if (!dims[k].has_dim_value() || dims[k].dim_value() < 1) {
        throw Error(ErrorCode::kUnsupported, ctx + ": dimension " + std::to_string(k) + " is " +
                    (dims[k].has_dim_param() ? "symbolic ('" + dims[k].dim_param() + "')" : "unknown") +
                    "; only the batch axis (" + std::to_string(b) +
                    ") may vary: export the model with a fixed input size");
      }
      sample.push_back(dims[k].dim_value());
    }
    Value v;
    v.name = unique_value_name(in.name());
    v.dtype = dtype;
    v.shape = sample;
    const ValueId id = static_cast<ValueId>(g_.values.size());
    g_.values.push_back(std::move(v));
    g_.inputs.push_back(id);
    g_.input_names.push_back(in.name());
    symbols_[in.name()] = dynamic_symbol(id, batch_front_perm(static_cast<size_t>(dims.size()), b), dtype);
    if (trace_) trace_->input(in.name(), b);
  }
  if (g_.inputs.empty()) throw Error(ErrorCode::kFormat, source_ + ": the graph has no inputs besides its weights");
  if (trace_) {
    // Read as the file's batch of one; the trace checks that this reading holds for any batch.
    if (declared_batch_ != 0) throw Error(ErrorCode::kUnsupported, source_ + ": an input fixes its batch size");
    declared_batch_ = 1;
  }
  for (const auto& node : graph.node()) {
    for (const auto& name : node.input()) {
      if (!name.empty()) ++readers_[name];
    }
  }
  for (const auto& out : graph.output()) ++readers_[out.name()];
}

// Operators that handle a batch axis in any position: they only relabel axes, work element by
// element, or (the recurrent ones) expect the time-major layout.
// Besides the layout operators and the recurrent ones: element-wise operators (one tensor, or
// several with the batch on the same axis, onnx_ops_binary.cpp), Slice, Split and Gather along
// the other axes (onnx_ops_shape.cpp) and MatMul with a constant B
// (Dense over the last axis, which any axis but the batch's may be: PyTorch's seq-first
// nn.Linear/nn.MultiheadAttention projections of a [T, N, E] tensor).
bool Importer::batch_anywhere_ok(const std::string& op) {
  static const std::set<std::string> ops = {"Transpose", "Squeeze", "Reshape", "Identity", "Dropout", "Shape",
                                            "LSTM",      "GRU",     "RNN",     "Relu",     "Sigmoid", "Tanh",
                                            "Add",       "Sub",     "Mul",     "Div",      "Max",     "Min",
                                            "Sum",       "Mean",    "Pow",     "MatMul",   "Slice",   "Split",
                                            "Gather"};
  return ops.count(op) > 0;
}

// Operators whose lowerings take the file's single sample as a whole (a batch outside the ONNX
// axes, Importer::with_batch_outside): the layout operators, element-wise ones, MatMul and Gemm,
// Softmax, LayerNormalization (and its pattern), the reductions, slicing and Concat. Everything
// else refuses such a tensor by name instead of reading its batch from an axis that has none.
bool Importer::batch_outside_ok(const std::string& op) {
  static const std::set<std::string> ops = {
      "Transpose", "Squeeze",   "Unsqueeze", "Reshape", "Flatten", "Identity",  "Dropout",           "Shape",
      "Cast",      "Relu",      "Sigmoid",   "Tanh",    "Gelu",    "Softsign",  "Add",               "Sub",
      "Mul",       "Div",       "Max",       "Min",     "Sum",     "Mean",      "Pow",               "Sqrt",
      "Abs",       "Neg",       "Reciprocal", "MatMul", "Gemm",    "Softmax",   "LayerNormalization", "ReduceMean",
      "ReduceSum", "ReduceMax", "Slice",     "Split",   "Gather",  "Concat",    "Pad"};
  return ops.count(op) > 0;
}

// The batch axis of graph input `name`: the one axis the file leaves free when there is exactly
// one; else axis 1 when a recurrent operator reads the input time-major (its X with layout 0, or an
// initial state [directions, N, units]); else axis 0.
int Importer::input_batch_axis(const std::string& name, const onnx::TensorShapeProto& shape) const {
  int free_axis = -1, free_count = 0;
  for (int k = 0; k < shape.dim_size(); ++k) {
    if (!shape.dim(k).has_dim_value()) {
      free_axis = k;
      ++free_count;
    }
  }
  if (free_count == 1) return free_axis;
  for (const auto& node : model_.graph().node()) {
    const std::string& op = node.op_type();
    if (op != "LSTM" && op != "GRU" && op != "RNN") continue;
    int64_t layout = 0;
    for (const auto& a : node.attribute()) {
      if (a.name() == "layout") layout = a.i();
    }
    for (int k = 0; k < node.input_size(); ++k) {
      if (node.input(k) != name) continue;
      if (layout == 0 && (k == 0 || k == 5 || k == 6)) return 1;
    }
  }
  return 0;
}

int Importer::readers(const std::string& name) const {
  auto it = readers_.find(name);
  return it == readers_.end() ? 0 : it->second;
}

int Importer::value_readers(ValueId v) const {
  int n = 0;
  for (const Node& node : g_.nodes) n += static_cast<int>(std::count(node.inputs.begin(), node.inputs.end(), v));
  return n;
}

void Importer::reinfer(Node& n) { infer_node_shape(g_, static_cast<NodeId>(&n - g_.nodes.data())); }

// Nodes whose value nothing reads (left behind by the QDQ folding, onnx_ops_quant.cpp), removed
// last to first so that a chain of them goes at once; the survivors' producers are renumbered.
void Importer::drop_unread_nodes() {
  std::vector<int> uses(g_.values.size(), 0);
  for (const Node& n : g_.nodes)
    for (ValueId v : n.inputs) ++uses[static_cast<size_t>(v)];
  for (ValueId v : g_.outputs) ++uses[static_cast<size_t>(v)];
  std::vector<bool> dead(g_.nodes.size(), false);
  for (size_t i = g_.nodes.size(); i-- > 0;) {
    const Node& n = g_.nodes[i];
    if (uses[static_cast<size_t>(n.output)] > 0) continue;
    dead[i] = true;
    for (ValueId v : n.inputs) --uses[static_cast<size_t>(v)];
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    if (dead[i]) {
      g_.values[static_cast<size_t>(g_.nodes[i].output)].producer = kNoNode;
      continue;
    }
    g_.values[static_cast<size_t>(g_.nodes[i].output)].producer = static_cast<NodeId>(kept.size());
    kept.push_back(std::move(g_.nodes[i]));
  }
  g_.nodes = std::move(kept);
}

Node* Importer::producer_of(ValueId v) {
  const NodeId p = g_.values[static_cast<size_t>(v)].producer;
  return p == kNoNode ? nullptr : &g_.nodes[static_cast<size_t>(p)];
}

bool Importer::has_input(const onnx::NodeProto& node, int n) const {
  return n < node.input_size() && !node.input(n).empty();
}

Symbol& Importer::input(const onnx::NodeProto& node, int n) {
  if (!has_input(node, n)) fail("input " + std::to_string(n) + " is missing");
  return tensor(node.input(n));
}

const Symbol* Importer::symbol(const std::string& name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : &it->second;
}

Symbol& Importer::tensor(const std::string& name) {
  auto it = symbols_.find(name);
  if (it == symbols_.end()) fail("input '" + name + "' is not produced by any earlier node, initializer or graph input");
  if (!it->second.is_const() && it->second.batch_outside()) {
    if (batch_outside_ok(current_op_)) return it->second;
    // An operator that needs the batch on an axis: an axis of length 1 carries it again.
    auto r = restored_.find(name);
    if (r == restored_.end()) r = restored_.emplace(name, batch_on_unit_axis(it->second)).first;
    if (r->second.batch_outside()) {
      fail(ErrorCode::kUnsupported, "input '" + name + "' is the file's single sample as a whole (an earlier node merged "
           "its batch of 1 into another axis, and no axis of length 1 is left to carry it), which this operator does not take");
    }
    it = r;
  }
  const Symbol& s = it->second;
  if (!s.is_const() && s.perm[0] != 0 && !batch_anywhere_ok(current_op_)) {
    if (auto moved = with_batch_on(s, 0)) {
      return batch_first_.try_emplace(name, std::move(*moved)).first->second;
    }
    // Axis 0 is data of the file's single sample: an operator that runs per sample on any shape
    // takes the tensor as that sample as a whole.
    if (batch_outside_ok(current_op_)) {
      if (auto outside = with_batch_outside(s)) return batch_first_.try_emplace(name, std::move(*outside)).first->second;
    }
    fail("input '" + name + "' has its batch axis at position " + std::to_string(s.perm[0]) + " (" +
         (declared_batch_ == 1 ? "the file's batch of 1 moved there, and axis 0 has length " + std::to_string(s.dims[0])
                               : std::string("a Transpose or a time-major recurrent layer put it there")) +
         "); this operator needs the batch first");
  }
  return it->second;
}

std::optional<Symbol> Importer::with_batch_on(const Symbol& s, int64_t axis) const {
  if (s.is_const() || s.batch_outside() || axis < 0 || axis >= static_cast<int64_t>(s.rank())) return std::nullopt;
  if (s.perm[0] == axis) return s;
  if (declared_batch_ != 1 || s.dims[static_cast<size_t>(axis)] != 1) return std::nullopt;
  // Swap the roles of the two length-1 axes: the IR position that held `axis` now holds the old
  // batch axis (length 1 in the file), so the memory of every sample stays as it is.
  Perm perm = s.perm;
  const int old_batch = perm[0];
  for (int& p : perm) {
    if (p == axis) p = old_batch;
  }
  perm[0] = static_cast<int>(axis);
  Symbol moved = dynamic_symbol(s.value, std::move(perm), s.dtype);
  moved.origin = s.origin;
  return moved;
}

std::optional<Symbol> Importer::with_batch_outside(const Symbol& s) {
  if (s.is_const()) return std::nullopt;
  if (s.batch_outside()) return s;
  if (declared_batch_ != 1) return std::nullopt;
  const auto key = std::make_pair(s.value, s.perm);
  if (auto it = outside_.find(key); it != outside_.end()) return it->second;
  // IR [N, sample...] -> [N, 1, sample...]: the new IR axis 1 is the ONNX axis that carried the
  // batch, with the file's length 1; the memory of every sample stays as it is.
  Perm perm{kBatchOutside};
  perm.insert(perm.end(), s.perm.begin(), s.perm.end());
  Dims shape = ir_shape(s.value);
  shape.insert(shape.begin(), 1);
  const ValueId v = emit_internal(g_.values[static_cast<size_t>(s.value)].name + ":one_sample", ReshapeParams{shape}, {s.value});
  Symbol out = dynamic_symbol(v, std::move(perm), s.dtype);
  out.origin = s.origin;
  outside_.emplace(key, out);
  return out;
}

Symbol Importer::batch_like(const Symbol& s, bool outside, const std::string& role) {
  if (s.is_const() || s.batch_outside() == outside) return s;
  if (!outside) fail(ErrorCode::kInternal, "internal: " + role + " is the single sample as a whole, its partner is not");
  std::optional<Symbol> o = with_batch_outside(s);
  if (!o) {
    fail(ErrorCode::kUnsupported, role + " carries the batch on ONNX axis " + std::to_string(s.perm[0]) +
         " while the other operand is the file's single sample as a whole; with a batch that is not fixed to 1 the two "
         "cannot be paired");
  }
  return *o;
}

Symbol Importer::batch_on_unit_axis(Symbol& s, int axis) {
  size_t unit = axis >= 0 ? static_cast<size_t>(axis) : 0;
  while (axis < 0 && unit < s.rank() && s.dims[unit] != 1) ++unit;
  if (unit == s.rank()) return s;  // served as it is: each sample's output has the file's whole shape
  Perm perm{kBatchOutside, static_cast<int>(unit)};
  for (int a : s.perm) {
    if (a != kBatchOutside && a != static_cast<int>(unit)) perm.push_back(a);
  }
  const ValueId v = in_layout(s, perm);
  Dims shape = ir_shape(v);
  shape.erase(shape.begin());
  perm.erase(perm.begin());
  const ValueId r = emit_internal(g_.values[static_cast<size_t>(s.value)].name + ":batch", ReshapeParams{shape}, {v});
  Symbol out = dynamic_symbol(r, std::move(perm), s.dtype);
  out.origin = s.origin;
  return out;
}

const Constant& Importer::const_input(const onnx::NodeProto& node, int n, const std::string& role) {
  Symbol& s = input(node, n);
  if (!s.is_const()) {
    fail(role + " (input '" + node.input(n) + "') must be a constant; here it is computed from the model input");
  }
  return *s.constant;
}

Symbol& Importer::dynamic_input(const onnx::NodeProto& node, int n) {
  Symbol& s = input(node, n);
  if (s.is_const()) {
    fail(ErrorCode::kUnsupported, "input '" + node.input(n) + "' is a constant; this operator on constants only is not folded");
  }
  return s;
}

int64_t Importer::onnx_axis(const Symbol& s, int64_t axis) const {
  const int64_t r = static_cast<int64_t>(s.rank());
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return a;
}

int Importer::ir_axis(const Symbol& s, int64_t axis) const {
  const int64_t a = onnx_axis(s, axis);
  for (size_t j = 0; j < s.perm.size(); ++j) {
    if (s.perm[j] == a) return static_cast<int>(j);
  }
  fail(ErrorCode::kInternal, "internal: axis not in layout");
}

ValueId Importer::in_layout(Symbol& s, const Perm& perm) {
  if (s.perm == perm) return s.value;
  if (perm.size() != s.perm.size()) fail(ErrorCode::kInternal, "internal: layout of the wrong rank");
  if (perm[0] != s.perm[0]) fail(ErrorCode::kInternal, "internal: a layout change cannot move the batch axis");
  auto key = std::make_pair(s.value, perm);
  if (auto it = layouts_.find(key); it != layouts_.end()) return it->second;
  std::vector<int> pos(s.dims.size());
  for (size_t j = s.batch_outside() ? 1 : 0; j < s.perm.size(); ++j) pos[static_cast<size_t>(s.perm[j])] = static_cast<int>(j);
  PermuteParams p;
  Dims target;
  for (size_t j = 1; j < perm.size(); ++j) {
    p.dims.push_back(pos[static_cast<size_t>(perm[j])]);
    target.push_back(s.dims[static_cast<size_t>(perm[j])]);
  }
  // When only axes of length 1 move, the memory order is unchanged: a Reshape, not a copy.
  std::vector<int> moved;
  for (int d : p.dims) {
    if (s.dims[static_cast<size_t>(s.perm[static_cast<size_t>(d)])] != 1) moved.push_back(d);
  }
  const bool order_kept = std::is_sorted(moved.begin(), moved.end());
  const std::string name = g_.values[static_cast<size_t>(s.value)].name + ":layout" + perm_text(perm);
  ValueId v = order_kept ? emit_internal(name, ReshapeParams{target}, {s.value})
                         : emit_internal(name, p, {s.value});
  layouts_[key] = v;
  return v;
}

ValueId Importer::emit_internal(const std::string& name, LayerParams params, std::vector<ValueId> inputs) {
  Value v;
  v.name = unique_value_name(name);
  const ValueId id = static_cast<ValueId>(g_.values.size());
  const NodeId nid = static_cast<NodeId>(g_.nodes.size());
  v.producer = nid;
  g_.values.push_back(std::move(v));
  Node n;
  n.name = unique_node_name(name);
  n.source_op = current_op_;
  n.params = std::move(params);
  n.inputs = std::move(inputs);
  n.output = id;
  g_.nodes.push_back(std::move(n));
  infer_node_shape(g_, nid);
  return id;
}

void Importer::emit(const onnx::NodeProto& node, int out, LayerParams params, std::vector<ValueId> inputs,
                    const Perm& perm, const std::string& suffix) {
  const std::string& out_name = node.output(out);
  const ValueId v = emit_internal(node_name_ + suffix, std::move(params), std::move(inputs));
  g_.values[static_cast<size_t>(v)].name = unique_value_name(out_name);
  Symbol s = dynamic_symbol(v, perm, g_.values[static_cast<size_t>(v)].dtype);
  s.origin = out_name;
  symbols_[out_name] = std::move(s);
}

void Importer::alias(const onnx::NodeProto& node, int out, const Symbol& s, Perm perm) {
  Symbol a = s;
  if (!s.is_const()) {
    // Reorder the ONNX dims to match the new perm's meaning: dims follow the ONNX axes.
    a = dynamic_symbol(s.value, std::move(perm), s.dtype);
    a.origin = s.origin;
  }
  symbols_[node.output(out)] = std::move(a);
}

void Importer::set_constant(const onnx::NodeProto& node, int out, Constant c, bool from_file) {
  if (from_file) fold_budget_ += 4 * c.size();
  folded_elements_ += c.size();
  if (folded_elements_ > fold_budget_) {
    fail(ErrorCode::kLimit, "the constants folded so far hold " + std::to_string(folded_elements_) + " elements, more than " +
         std::to_string(fold_budget_) + " (4x the initializers and 4x the stored constants, at least " +
         std::to_string(kMaxFoldedElements) + "): the file computes unusually large constants at load time");
  }
  Symbol s;
  s.constant = std::move(c);
  symbols_[node.output(out)] = std::move(s);
}

void Importer::lower(const onnx::NodeProto& node, int index) {
  current_op_ = node.op_type();
  node_name_ = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  context_ = source_ + ": node '" + node_name_ + "' (" + node.op_type() + ")";
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    fail(ErrorCode::kUnsupported, "operator domain '" + node.domain() + "' is not supported (only the default ONNX domain is)");
  }
  const Lowering lowering = find_lowering(node.op_type());
  if (!lowering) fail(ErrorCode::kUnsupported, "operator '" + node.op_type() + "' is not supported");
  if (node.output_size() < 1 || node.output(0).empty()) fail("the node has no output");
  Attributes attrs(node, context_);
  try {
    lowering(*this, node, attrs);
    attrs.check_all_read();
  } catch (const Error& e) {
    // A node of a chain that was almost one of the patterns: say why it was not.
    auto note = pattern_notes_.find(index);
    if (note == pattern_notes_.end()) throw;
    throw Error(e.code(), std::string(e.what()) + " (" + note->second + ")");
  }
  for (int k = 0; k < node.output_size(); ++k) {
    const std::string& name = node.output(k);
    if (!name.empty() && !symbols_.count(name) && readers(name) > 0) {
      fail(ErrorCode::kUnsupported, "output " + std::to_string(k) + " ('" + name + "') is used but not supported");
    }
  }
  if (trace_) trace_->node(*this, node);
}

void Importer::set_outputs() {
  std::set<ValueId> used;
  for (const auto& out : model_.graph().output()) {
    context_ = source_ + ": output '" + out.name() + "'";
    auto it = symbols_.find(out.name());
    if (it == symbols_.end()) fail("is not produced by any node");
    if (it->second.is_const()) fail(ErrorCode::kUnsupported, "is a constant; nnd serves outputs computed from the inputs");
    // The file's single sample as a whole: an axis of length 1 carries the batch again (with
    // whole-sample inputs the outputs stay whole too). A free batch read per sample is served on
    // the axis the trace found it on.
    const int axis = trace_ ? trace_->output_axis(*this, out.name()) : -1;
    Symbol s = it->second.batch_outside() && !whole_samples_ ? batch_on_unit_axis(it->second, axis) : it->second;
    if (axis >= 0 && !s.batch_outside() && s.perm[0] != axis) {
      std::optional<Symbol> moved = with_batch_on(s, axis);
      if (!moved) fail(ErrorCode::kInternal, "internal: the batch cannot be moved to the axis the trace found");
      s = std::move(*moved);
    }
    // An output whose batch axis is not first in the file (an RNN state [directions, N, units]) is
    // served batch-first, the other axes in the file's order (docs/onnx.md).
    ValueId v = in_layout(s, onnx_order(s));
    const bool is_input = std::find(g_.inputs.begin(), g_.inputs.end(), v) != g_.inputs.end();
    const DType dtype = g_.values[static_cast<size_t>(v)].dtype;
    if (!is_input && dtype != DType::kFloat32 && dtype != DType::kInt64) {
      // nnd's outputs are float32 or the int64 indices of an ArgMax: any other integer output is
      // served as float32 holding its integers.
      const quant::QuantType t = dtype == DType::kInt8 ? quant::QuantType::kInt8 : dtype == DType::kUInt8 ? quant::QuantType::kUInt8 : quant::QuantType::kInt32;
      v = emit_internal(out.name(), DequantizeParams{quant::QuantParams::per_tensor(t, 1.0f, 0)}, {v});
    } else if (is_input || used.count(v)) {
      v = emit_internal(out.name(), IdentityParams{}, {v});
    }
    used.insert(v);
    g_.outputs.push_back(v);
    g_.output_names.push_back(out.name());
  }
  if (g_.outputs.empty()) throw Error(ErrorCode::kFormat, source_ + ": the graph has no outputs");
}

// Lowers the nodes of a recognised chain at its last node (the others were held back).
void Importer::lower_chain(const Pattern& p) {
  const auto& nodes = model_.graph().node();
  auto label = [&](int i) { return nodes[i].name().empty() ? nodes[i].op_type() + "_" + std::to_string(i) : nodes[i].name(); };
  current_op_ = pattern_op(p.kind);
  node_name_ = p.name;
  context_ = source_ + ": nodes '" + label(p.nodes.front()) + "' to '" + label(p.nodes.back()) + "' (" + current_op_ +
             " pattern)";
  size_t k = lower_pattern(*this, model_.graph(), p);
  if (trace_ && k > 0) trace_->pattern(*this, model_.graph(), p, k);
  for (; k < p.nodes.size(); ++k) lower(nodes[p.nodes[k]], p.nodes[k]);
}

Graph Importer::run() {
  read_inputs();
  PatternScan scan = find_patterns(model_.graph());
  pattern_notes_ = std::move(scan.notes);
  std::map<int, const Pattern*> chain_end;
  std::set<int> held_back;
  for (const Pattern& p : scan.patterns) {
    chain_end[p.nodes.back()] = &p;
    held_back.insert(p.nodes.begin(), p.nodes.end() - 1);
  }
  const auto& nodes = model_.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    if (held_back.count(i)) continue;
    if (auto it = chain_end.find(i); it != chain_end.end()) {
      lower_chain(*it->second);
    } else {
      lower(nodes[i], i);
    }
  }
  set_outputs();
  drop_unread_nodes();
  verify_structure(g_);
  infer_shapes(g_);
  return std::move(g_);
}

}  // namespace onnx_import

namespace {

Graph parse_and_import(const void* data, size_t size, const std::string& name) {
  if (size == 0) throw Error(ErrorCode::kFormat, name + ": the file is empty");
  if (size > static_cast<size_t>(INT32_MAX)) throw Error(ErrorCode::kLimit, name + ": larger than 2 GiB, the protobuf limit");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) {
    throw Error(ErrorCode::kFormat, name + ": not an ONNX model (the protobuf message does not parse; truncated or another format)");
  }
  if (!model.has_graph() || model.graph().node_size() == 0) {
    throw Error(ErrorCode::kFormat, name + ": not an ONNX model (no graph with nodes)");
  }
  using onnx_import::BatchReading;
  onnx_import::Importer batch_first(model, name);
  try {
    return batch_first.run();
  } catch (const Error& e) {
    // A file that fixes every input's batch above 1 may use axis 0 as data (a sequence-first
    // [T, 1, E] exported at fixed size): read as whole samples, it may load. A file with a free
    // batch may compute with the batch size (nn.MultiheadAttention's N * heads): read as a batch
    // of one, each sample on its own, it may load. When the second reading fails too, the
    // batch-first reading's error stands (it is the one the documentation describes); a refusal
    // of the second reading that says something else is added to it.
    const int64_t declared = batch_first.declared_batch();
    if (declared == 1 || (e.code() != ErrorCode::kUnsupported && e.code() != ErrorCode::kFormat)) throw;
    try {
      return onnx_import::Importer(model, name, declared > 1 ? BatchReading::kWholeSamples : BatchReading::kFreeAsOne).run();
    } catch (const onnx_import::BatchTraceRefusal& second) {
      const std::string again = second.what(), prefix = name + ": ";
      throw Error(e.code(), std::string(e.what()) + " (read one sample at a time instead: " +
                                (again.rfind(prefix, 0) == 0 ? again.substr(prefix.size()) : again) + ")");
    } catch (const Error&) {
      throw e;
    }
  }
}

}  // namespace

Graph load_onnx(const std::string& path) {
  constexpr uint64_t kMaxModelBytes = uint64_t{2} << 30;
  h5::FileBytes bytes = h5::FileBytes::read(path, kMaxModelBytes);
  if (!bytes.data()) throw Error(ErrorCode::kIo, path + ": cannot read the file (missing, not a regular file, or over 2 GiB)");
  return parse_and_import(bytes.data(), bytes.size(), path);
}

Graph load_onnx_bytes(const void* data, size_t size, const std::string& name) {
  return parse_and_import(data, size, name);
}


}  // namespace nnd
