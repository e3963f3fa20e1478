// The ONNX importer's internals, shared by onnx_import.cpp (tensors, layouts, the node loop) and
// onnx_ops*.cpp (one lowering per operator, by family: onnx_ops.h). Not a public header: see onnx_loader.h.
//
// Layout. ONNX graphs from PyTorch are NCHW; nnd's IR and engines are channels-last. Each ONNX
// tensor is kept as an IR value plus a permutation `perm`: IR axis j (batch included) holds ONNX
// axis perm[j]. A Conv wants its input with the channel axis last (perm {0, 2, 3, 1} for NCHW)
// and produces that layout, so a chain of convolutions, activations, batch norms and pools never
// moves data; a `Transpose` only changes `perm`, so tf2onnx's NHWC→NCHW→NHWC pairs cost nothing.
// Data is moved (an IR Permute node) only where an operator depends on the memory order (Reshape,
// Flatten, MatMul over the last axis) or at a graph output, which has the ONNX layout the model
// declares. Graph inputs arrive in the declared layout too.
//
// Batch. IR axis 0 is always the batch; `perm[0]` says which ONNX axis holds it. That is axis 0
// everywhere except around recurrent operators, whose time-major tensors ([steps, N, features],
// states [directions, N, units]) carry it at axis 1 or 2: only the operators that relabel axes or
// read that layout accept such a tensor (Importer::batch_anywhere_ok). A batch fixed to 1 in the
// file is treated as free: the graph runs any batch where it is per-sample. Such a graph may move
// its single sample across axis 0 (tf2onnx writes Reshape [1, T, F] -> [T, 1, F] for a transpose
// whose moved axes have length 1): the batch then moves to another axis of length 1
// (Importer::with_batch_on), and batch N is served as N samples of the file's batch of one.
// Where no axis of length 1 is left to carry it (nn.MultiheadAttention's Reshape [T, 1, E] ->
// [T, H, E/H] merges the batch of 1 with the heads), the tensor becomes the file's single sample
// as a whole (Importer::with_batch_outside): every ONNX axis is data, the served batch is an IR
// axis outside them (perm[0] == kBatchOutside), and from there on the ONNX operators run per
// sample on exactly the shapes the file states. Only the operators batch_outside_ok lists take
// such a tensor; at a graph output an axis of length 1 (axis 0 first) carries the batch again.
// A free batch the graph computes with (N * heads) is read the same way, as a batch of one, when
// a BatchTrace proves the graph keeps samples apart (BatchReading::kFreeAsOne).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/io/onnx_constant.h"
#include "core/io/onnx_patterns.h"
#include "core/ir/graph.h"
#include "core/ir/quant/quant_params.h"
#include "core/util/error.h"

namespace onnx {
class ModelProto;
class NodeProto;
class AttributeProto;
class TensorProto;
class TensorShapeProto;
}  // namespace onnx

namespace nnd::onnx_import {

using Perm = std::vector<int>;

// perm[0] of a tensor whose served batch is outside its ONNX axes (the file's single sample as a
// whole, see the top of this file): perm then has one entry more than the tensor has ONNX axes.
inline constexpr int kBatchOutside = -1;

// The integers behind a DequantizeLinear of a constant (onnx_ops_quant.cpp): what an integer layer
// takes as weights or bias, next to the dequantized values other readers use.
struct QuantizedConstant {
  Constant ints;
  quant::QuantParams params;  // per-channel axis in ONNX axes of `ints`
};

// One ONNX tensor name during import: a constant, or an IR value in some layout.
struct Symbol {
  std::optional<Constant> constant;
  std::optional<QuantizedConstant> quantized;  // set on DequantizeLinear results of constants
  ValueId value = -1;
  std::vector<int64_t> dims;  // ONNX dims; dims[perm[0]] is the batch (kBatchMarker)
  Perm perm;                  // IR axis j holds ONNX axis perm[j]; perm[0] is the batch's axis
                              // (kBatchOutside: no ONNX axis, every dims entry is data)
  DType dtype = DType::kFloat32;
  std::string origin;  // the ONNX output name under which `value` was emitted

  bool is_const() const { return constant.has_value(); }
  size_t rank() const { return dims.size(); }  // ONNX rank
  bool batch_outside() const { return !perm.empty() && perm[0] == kBatchOutside; }
};

// Attribute access that remembers what was read, so an attribute no lowering understood is
// refused by name instead of silently ignored.
class Attributes {
 public:
  Attributes(const onnx::NodeProto& node, std::string context);
  bool has(const std::string& name) const;
  int64_t i(const std::string& name, int64_t fallback);
  double f(const std::string& name, double fallback);
  std::string s(const std::string& name, const std::string& fallback);
  std::optional<std::vector<int64_t>> ints(const std::string& name);
  std::optional<std::vector<double>> floats(const std::string& name);
  const onnx::TensorProto* t(const std::string& name);
  void ignore(const std::string& name) { read_.insert(name); }
  // Throws naming the first attribute nobody read.
  void check_all_read() const;

 private:
  const onnx::AttributeProto* find(const std::string& name, int type);
  const onnx::NodeProto& node_;
  std::string context_;
  std::set<std::string> read_;
};

class Importer;

// A free batch read one sample at a time that the batch trace (onnx_batch_trace.h) refuses: the
// graph mixes samples. load_onnx adds the reason to the batch-first reading's error; any other
// failure of that second reading leaves the first error as it was.
class BatchTraceRefusal : public Error {
 public:
  using Error::Error;
};
class BatchTrace;
using Lowering = void (*)(Importer&, const onnx::NodeProto&, Attributes&);

// Identity permutation of `rank` axes, and channels-last (ONNX N, C, S... -> IR N, S..., C).
Perm identity_perm(size_t rank);
Perm channels_last_perm(size_t rank);
// The batch (ONNX axis `batch_axis`) first, then the other ONNX axes in order: the IR layout of a
// tensor whose batch is not ONNX axis 0 (time-major recurrent tensors), and of such graph I/O.
// With kBatchOutside: every ONNX axis in order behind the served batch.
Perm batch_front_perm(size_t rank, int batch_axis);
// The layout of `s` with its ONNX axes in order behind the batch: identity_perm for a batch-first
// tensor, batch_front_perm(rank, kBatchOutside) for the file's single sample as a whole.
Perm onnx_order(const Symbol& s);

// How the importer reads the batch of a file's inputs. load_onnx tries kAsDeclared first and the
// others only where that fails.
enum class BatchReading {
  kAsDeclared,  // the free axis (or the one the file fixes) is the batch
  // Every graph input is one sample as a whole (its batch outside the ONNX axes, all of them
  // data), for files that fix each input's batch above 1 and whose graph uses axis 0 as data (a
  // sequence-first [T, 1, E] exported at fixed size). Outputs are then served whole too.
  kWholeSamples,
  // A free batch read as a batch of one, each sample on its own: the shape arithmetic exporters
  // write on the batch size (nn.MultiheadAttention's N * heads) folds as for a file that fixes the
  // batch to 1, and a BatchTrace (onnx_batch_trace.h) proves node by node that the graph keeps
  // the samples of any batch apart, refusing the node that would mix them.
  kFreeAsOne,
};

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string source, BatchReading reading = BatchReading::kAsDeclared);
  ~Importer();
  Graph run();

  // --- used by the lowerings (onnx_ops_*.cpp) ---
  int opset() const { return opset_; }
  // The batch size the file fixes on its inputs (all of them alike), or 0 when it is free.
  int64_t declared_batch() const { return declared_batch_; }
  const std::string& context() const { return context_; }  // "file.onnx: node 'x' (Conv)"
  // Throws nnd::Error "<context>: <message>" with `code`; without one, kFormat (a malformed node).
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail(ErrorCode code, const std::string& message) const;

  // A batch the file fixes to 1 may sit on any ONNX axis of length 1 (every sample then sees
  // exactly the numbers of the file's single one): `s` with its batch moved to ONNX axis `axis`,
  // without moving data, or nothing when the batch is not fixed to 1, `s` is a constant, or
  // `axis` does not have length 1. A batch already on `axis` is returned as it is.
  std::optional<Symbol> with_batch_on(const Symbol& s, int64_t axis) const;
  // `s` as the file's single sample as a whole (the batch outside its ONNX axes; a free Reshape
  // that gives the IR value a length-1 axis for the ONNX one that carried the batch), or nothing
  // when the file does not fix the batch to 1 or `s` is a constant. A tensor already in that form
  // is returned as it is.
  std::optional<Symbol> with_batch_outside(const Symbol& s);
  // `s` with its operands' form: outside the ONNX axes when `outside`, else `s` itself; refuses
  // (naming `role`) a batch-outside tensor that should carry the batch on an ONNX axis.
  Symbol batch_like(const Symbol& s, bool outside, const std::string& role);
  // The reverse: a batch-outside `s` with an axis of length 1 (axis 0 first) carrying the batch
  // again (a free Reshape when that axis comes first in the IR layout), or `s` itself when no
  // axis has length 1. For graph outputs and for operators that need the batch on an axis.
  // `axis`, when given, is the one to take (a graph output of a free batch read per sample).
  Symbol batch_on_unit_axis(Symbol& s, int axis = -1);

  // The n-th input of the current node (empty names are optional inputs left out).
  bool has_input(const onnx::NodeProto& node, int n) const;
  Symbol& input(const onnx::NodeProto& node, int n);
  Symbol& tensor(const std::string& name);  // any tensor lowered so far, by name
  // The symbol of tensor `name` as its producer left it (no layout conversion), or nullptr.
  const Symbol* symbol(const std::string& name) const;
  const Constant& const_input(const onnx::NodeProto& node, int n, const std::string& role);
  Symbol& dynamic_input(const onnx::NodeProto& node, int n);

  // The IR value of `s` in layout `perm` (adds a Permute, or a Reshape when only axes of size 1
  // move, the first time a layout is asked for).
  ValueId in_layout(Symbol& s, const Perm& perm);

  // Adds an IR node computing output `out` of the current node and records its layout.
  void emit(const onnx::NodeProto& node, int out, LayerParams params, std::vector<ValueId> inputs,
            const Perm& perm, const std::string& suffix = "");
  // Adds an intermediate IR node (not an ONNX output); returns its value.
  ValueId emit_internal(const std::string& name, LayerParams params, std::vector<ValueId> inputs);
  // Makes ONNX output `out` of the node another name for `s` (Identity, Dropout, free Transpose).
  void alias(const onnx::NodeProto& node, int out, const Symbol& s, Perm perm);
  // Records a load-time constant as output `out`; `from_file` marks one the file stores (a Constant
  // node's value), which raises the folding allowance like an initializer does.
  void set_constant(const onnx::NodeProto& node, int out, Constant c, bool from_file = false);

  // A copy: emitting a node grows the value table, which would leave a reference dangling.
  Dims ir_shape(ValueId v) const { return g_.values[static_cast<size_t>(v)].shape; }
  const Value& graph_value(ValueId v) const { return g_.values[static_cast<size_t>(v)]; }
  // IR axis (0 = batch) that holds ONNX axis `axis` of `s` (negative counts from the end).
  int ir_axis(const Symbol& s, int64_t axis) const;
  int64_t onnx_axis(const Symbol& s, int64_t axis) const;  // normalised ONNX axis

  // How many nodes read ONNX tensor `name` (graph outputs count as readers).
  int readers(const std::string& name) const;
  Node* producer_of(ValueId v);
  // How many IR nodes read value v so far.
  int value_readers(ValueId v) const;
  // Reruns shape inference on node n after its parameters changed (its output's dtype).
  void reinfer(Node& n);

 private:
  void read_inputs();
  static bool batch_anywhere_ok(const std::string& op);
  static bool batch_outside_ok(const std::string& op);
  int input_batch_axis(const std::string& name, const onnx::TensorShapeProto& shape) const;
  void lower(const onnx::NodeProto& node, int index);
  void lower_chain(const Pattern& p);
  void set_outputs();
  void drop_unread_nodes();
  Symbol dynamic_symbol(ValueId v, Perm perm, DType dtype) const;
  std::string unique_value_name(const std::string& base);
  std::string unique_node_name(const std::string& base);

  const onnx::ModelProto& model_;
  std::string source_;
  std::string context_;    // of the node being lowered
  std::string current_op_;  // its op_type
  std::string node_name_;   // its name (or "<op>_<index>" when the file gives none)
  int opset_ = 0;
  int64_t declared_batch_ = -1;  // -1 until the first input is read
  bool whole_samples_ = false;
  std::unique_ptr<BatchTrace> trace_;  // kFreeAsOne only
  Graph g_;
  std::unordered_map<std::string, Symbol> symbols_;
  // Tensors whose batch tensor() moved to ONNX axis 0 for an operator that needs it first
  // (with_batch_on), or outside the ONNX axes when axis 0 is data (with_batch_outside); kept apart
  // so that the time-major readers still see the original.
  std::unordered_map<std::string, Symbol> batch_first_;
  std::map<std::pair<ValueId, Perm>, Symbol> outside_;  // with_batch_outside's conversions
  // Batch-outside tensors given back a batch axis (batch_on_unit_axis) for an operator that does
  // not take the single sample as a whole (a Conv after attention), by ONNX name.
  std::unordered_map<std::string, Symbol> restored_;
  std::map<std::pair<ValueId, Perm>, ValueId> layouts_;
  std::unordered_map<std::string, int> readers_;
  std::set<std::string> value_names_, node_names_;
  std::map<int, std::string> pattern_notes_;  // see PatternScan::notes
  // Elements folded so far and the file's allowance (set_constant): each fold is bounded, their
  // sum must be too, or a small file chaining large folds keeps the loader busy for minutes.
  int64_t folded_elements_ = 0, fold_budget_ = 0;
};

// The lowering for `op_type` in the default domain, or nullptr for an unknown operator.
Lowering find_lowering(const std::string& op_type);

}  // namespace nnd::onnx_import
