#include "core/passes/expand_recurrent.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/util/error.h"

namespace nnd::passes {
namespace {

// Columns [first, first + count) of a row-major (rows, cols) matrix.
Weights columns(const Weights& w, int64_t first, int64_t count) {
  Weights out;
  const int64_t rows = w.shape[0], cols = w.shape[1];
  out.shape = {rows, count};
  out.data.resize(static_cast<size_t>(rows * count));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < count; ++c) {
      out.data[static_cast<size_t>(r * count + c)] = w.data[static_cast<size_t>(r * cols + first + c)];
    }
  }
  return out;
}

// Elements [first, first + count) of a vector (empty stays empty).
Weights segment(const Weights& w, int64_t first, int64_t count) {
  Weights out;
  if (w.empty()) return out;
  out.shape = {count};
  out.data.assign(w.data.begin() + first, w.data.begin() + first + count);
  return out;
}

Weights sum_or_either(const Weights& a, const Weights& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  Weights s = a;
  for (size_t i = 0; i < s.data.size(); ++i) s.data[i] += b.data[i];
  return s;
}

// Emits the replacement of one Recurrent node into `out`, appending new values to the graph.
class Expansion {
 public:
  Expansion(Graph& g, const Node& n, std::vector<Node>& out)
      : g_(g), n_(n), p_(std::get<RecurrentParams>(n.params)), out_(out) {
    const Dims& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
    steps_ = x[0];
  }

  void run() {
    const int dirs = p_.direction_count();
    std::vector<ValueId> per_direction;
    for (int d = 0; d < dirs; ++d) per_direction.push_back(direction(d));
    const ValueId result = n_.output;
    if (p_.output == RecurrentOutput::kSequence) {
      if (dirs == 1) {
        rename_last(per_direction[0], result);
      } else {
        add("seq", join(), per_direction, result);
      }
      return;
    }
    // Last states: {1, units} per direction -> {output_width}.
    ValueId joined = per_direction[0];
    if (dirs == 2) joined = add("last", join(), per_direction);
    add("out", ReshapeParams{Dims{p_.output_width()}}, {joined}, result);
  }

 private:
  // The layer that joins the two directions' {rows, units} results.
  LayerParams join() const {
    switch (p_.merge) {
      case RecurrentMerge::kConcat: return ConcatParams{-1, -1};
      case RecurrentMerge::kSum: return MergeParams{MergeOp::kAdd};
      case RecurrentMerge::kMultiply: return MergeParams{MergeOp::kMultiply};
      case RecurrentMerge::kAverage: return MergeParams{MergeOp::kAverage};
    }
    return ConcatParams{-1, -1};
  }

  // Runs direction d; returns its {steps, units} sequence or its {1, units} last state.
  ValueId direction(int d) {
    const RecurrentWeights& w = p_.directions[static_cast<size_t>(d)];
    const int64_t u = p_.units;
    const std::string dn = p_.direction_count() == 2 ? (d == 0 ? "fw/" : "bw/") : "";
    const bool gru = p_.cell == RecurrentCell::kGru;
    // Input projections of every step at once, one Dense per gate.
    std::vector<ValueId> proj;
    for (int gate = 0; gate < p_.gates(); ++gate) {
      DenseParams dp;
      dp.units = u;
      dp.kernel = columns(w.kernel, gate * u, u);
      const Weights b = segment(w.bias, gate * u, u), rb = segment(w.recurrent_bias, gate * u, u);
      // The recurrent bias moves into the projection unless GRU's reset multiplies it.
      dp.bias = gru && gate == 2 && p_.reset_after ? b : sum_or_either(b, rb);
      proj.push_back(add(dn + "x" + gate_name(gate), std::move(dp), {n_.inputs[0]}));
    }
    ValueId h = initial(d, false, proj[0]);
    ValueId c = p_.cell == RecurrentCell::kLstm ? initial(d, true, proj[0]) : -1;
    std::vector<ValueId> states(static_cast<size_t>(steps_), -1);
    for (int64_t s = 0; s < steps_; ++s) {
      const int64_t t = p_.backward(d) ? steps_ - 1 - s : s;
      const std::string tn = dn + "t" + std::to_string(t) + "/";
      std::vector<ValueId> pre;
      for (ValueId v : proj) pre.push_back(steps_ == 1 ? v : add(tn + "x" + gate_name(static_cast<int>(pre.size())),
                                                                  CroppingParams{1, 0, 0, t, steps_ - 1 - t}, {v}));
      auto gate = [&](int k, ValueId state, ActivationKind act, const Weights& bias) {
        DenseParams dp;
        dp.units = u;
        dp.kernel = columns(w.recurrent_kernel, k * u, u);
        dp.bias = bias;
        dp.activation = act;
        dp.residual = true;
        return add(tn + gate_name(k), std::move(dp), {state, pre[static_cast<size_t>(k)]});
      };
      switch (p_.cell) {
        case RecurrentCell::kSimple:
          h = gate(0, h, p_.activation, {});
          break;
        case RecurrentCell::kLstm: {
          const ValueId i = gate(0, h, p_.recurrent_activation, {});
          const ValueId f = gate(1, h, p_.recurrent_activation, {});
          const ValueId g = gate(2, h, p_.activation, {});
          const ValueId o = gate(3, h, p_.recurrent_activation, {});
          const ValueId fc = merge(tn + "f*c", MergeOp::kMultiply, f, c);
          const ValueId ig = merge(tn + "i*g", MergeOp::kMultiply, i, g);
          c = merge(tn + "c", MergeOp::kAdd, fc, ig);
          const ValueId ac = add(tn + "act(c)", ActivationParams{p_.activation}, {c});
          h = merge(tn + "h", MergeOp::kMultiply, o, ac);
          break;
        }
        case RecurrentCell::kGru: {
          const ValueId z = gate(0, h, p_.recurrent_activation, {});
          const ValueId r = gate(1, h, p_.recurrent_activation, {});
          ValueId cand;
          if (p_.reset_after) {
            DenseParams dp;
            dp.units = u;
            dp.kernel = columns(w.recurrent_kernel, 2 * u, u);
            dp.bias = segment(w.recurrent_bias, 2 * u, u);
            const ValueId hr = add(tn + "hRh", std::move(dp), {h});
            const ValueId rhr = merge(tn + "r*hRh", MergeOp::kMultiply, r, hr);
            const ValueId sum = merge(tn + "n_pre", MergeOp::kAdd, pre[2], rhr);
            cand = add(tn + "n", ActivationParams{p_.activation}, {sum});
          } else {
            const ValueId rh = merge(tn + "r*h", MergeOp::kMultiply, r, h);
            cand = gate(2, rh, p_.activation, {});
          }
          const ValueId diff = merge(tn + "h-n", MergeOp::kSubtract, h, cand);
          const ValueId zd = merge(tn + "z*(h-n)", MergeOp::kMultiply, z, diff);
          h = merge(tn + "h", MergeOp::kAdd, cand, zd);
          break;
        }
      }
      states[static_cast<size_t>(t)] = h;
    }
    if (p_.output == RecurrentOutput::kLastCell) return c;
    if (p_.output == RecurrentOutput::kLastHidden) return h;
    if (steps_ == 1) return states[0];
    return add(dn + "seq", ConcatParams{1, -1}, states);
  }

  // The {1, units} initial hidden (or cell) state of direction d. Zeros and constants are an
  // affine map with scale 0 of a {1, units} value that exists anyway (a step's projection).
  ValueId initial(int d, bool cell, ValueId projection) {
    const std::string name = std::string(cell ? "c0" : "h0") + (p_.direction_count() == 2 ? (d == 0 ? "/fw" : "/bw") : "");
    const int64_t u = p_.units;
    if (p_.initial_state == RecurrentInitialState::kInputs) {
      const ValueId in = n_.inputs[cell ? 2 : 1];
      const ValueId rows = add(name + "/rows", ReshapeParams{Dims{p_.direction_count(), u}}, {in});
      return add(name, CroppingParams{1, 0, 0, d, p_.direction_count() - 1 - d}, {rows});
    }
    const ValueId row = steps_ == 1 ? projection : add(name + "/src", CroppingParams{1, 0, 0, 0, steps_ - 1}, {projection});
    BatchNormParams bn;
    bn.keras_axis = -1;
    bn.epsilon = 0.0;
    bn.gamma = Weights::filled(u, 0.0f);
    bn.moving_mean = Weights::filled(u, 0.0f);
    bn.moving_variance = Weights::filled(u, 1.0f);
    const RecurrentWeights& w = p_.directions[static_cast<size_t>(d)];
    bn.beta = p_.initial_state == RecurrentInitialState::kConstant ? (cell ? w.initial_c : w.initial_h) : Weights::filled(u, 0.0f);
    return add(name, std::move(bn), {row});
  }

  const char* gate_name(int k) const {
    static const char* lstm[] = {"i", "f", "g", "o"};
    static const char* gru[] = {"z", "r", "n"};
    if (p_.cell == RecurrentCell::kLstm) return lstm[k];
    if (p_.cell == RecurrentCell::kGru) return gru[k];
    return "h";
  }

  ValueId merge(const std::string& name, MergeOp op, ValueId a, ValueId b) {
    return add(name, MergeParams{op}, {a, b});
  }

  // Appends a node; its output is a new value, or `output` when given.
  ValueId add(const std::string& suffix, LayerParams params, std::vector<ValueId> inputs, ValueId output = -1) {
    if (output < 0) {
      Value v;
      v.name = n_.name + "/" + suffix;
      output = static_cast<ValueId>(g_.values.size());
      g_.values.push_back(std::move(v));
    }
    Node node;
    node.name = n_.name + "/" + suffix;
    node.source_op = n_.source_op;
    node.params = std::move(params);
    node.inputs = std::move(inputs);
    node.output = output;
    out_.push_back(std::move(node));
    return output;
  }

  // Makes the node that produced `v` (the last one emitted) produce `result` instead.
  void rename_last(ValueId v, ValueId result) {
    if (out_.empty() || out_.back().output != v) throw Error(ErrorCode::kInternal, g_.node_context(n_) + ": internal: recurrent expansion order");
    out_.back().output = result;
  }

  Graph& g_;
  const Node& n_;
  const RecurrentParams& p_;
  std::vector<Node>& out_;
  int64_t steps_ = 0;
};

}  // namespace

bool ExpandRecurrent::run(Graph& g) {
  bool any = false;
  auto expandable = [&g](const Node& n) {
    return std::holds_alternative<RecurrentParams>(n.params) &&
           g.values[static_cast<size_t>(n.inputs[0])].shape[0] <= kMaxUnrolledSteps;
  };
  for (const Node& n : g.nodes) any = any || expandable(n);
  if (!any) return false;
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (Node& n : g.nodes) {
    if (expandable(n)) {
      Expansion(g, n, nodes).run();
    } else {
      nodes.push_back(std::move(n));
    }
  }
  g.nodes = std::move(nodes);
  for (Value& v : g.values) v.producer = kNoNode;
  for (size_t i = 0; i < g.nodes.size(); ++i) g.values[static_cast<size_t>(g.nodes[i].output)].producer = static_cast<NodeId>(i);
  return true;
}

}  // namespace nnd::passes
