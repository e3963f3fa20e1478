// The ONNX recurrent operators RNN, LSTM and GRU (opsets 7 to 22) onto the IR's Recurrent layer.
//
// ONNX stores W [D, G*H, F], R [D, G*H, H], B [D, 2*G*H] with LSTM gates in the order i, o, f, c;
// the IR keeps Keras' layout and order ((F, G*H), i, f, c, o), so weights are transposed and
// reordered here. With layout 0 (the default) X is time-major [T, N, F] and the outputs are
// Y [T, D, N, H], Y_h / Y_c [D, N, H]: their batch sits on axis 1 or 2, which the importer tracks
// in the symbol's layout (onnx_import.h), so the Transpose/Squeeze/Reshape around them that
// exporters emit cost nothing. Each used output is one IR node; Y_h next to Y is cropped from Y,
// Y_c needs its own node (the cell state is not part of Y).
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

struct CellSpec {
  RecurrentCell cell;
  int gates;
  int activations;           // entries per direction in the `activations` attribute
  std::vector<int> from_onnx;  // IR gate k comes from ONNX block from_onnx[k]
};

CellSpec cell_spec(const std::string& op) {
  if (op == "LSTM") return {RecurrentCell::kLstm, 4, 3, {0, 2, 3, 1}};  // i f c o <- i o f c
  if (op == "GRU") return {RecurrentCell::kGru, 3, 2, {0, 1, 2}};
  return {RecurrentCell::kSimple, 1, 1, {0}};
}

ActivationKind activation_kind(Importer& im, const std::string& name) {
  if (name == "Sigmoid") return ActivationKind::kSigmoid;
  if (name == "Tanh") return ActivationKind::kTanh;
  if (name == "Relu") return ActivationKind::kRelu;
  if (name == "Softsign") return ActivationKind::kSoftsign;
  if (name == "Softplus") return ActivationKind::kSoftplus;
  if (name == "HardSigmoid") return ActivationKind::kHardSigmoidK2;  // default alpha 0.2, beta 0.5
  im.fail(ErrorCode::kUnsupported, "activation '" + name + "' is not supported (Sigmoid, Tanh, Relu, Softsign, Softplus, HardSigmoid are)");
}

// Reads `activations` (names per direction) into the IR's two kinds.
void read_activations(Importer& im, const Node_& node, Attributes& a, const CellSpec& spec, int dirs, RecurrentParams& p) {
  std::vector<std::string> names;
  for (const auto& attr : node.attribute()) {
    if (attr.name() == "activations") names.assign(attr.strings().begin(), attr.strings().end());
  }
  a.ignore("activations");
  if (a.has("activation_alpha") || a.has("activation_beta")) {
    im.fail(ErrorCode::kUnsupported, "activation_alpha / activation_beta are not supported (the activations' default parameters are)");
  }
  if (names.empty()) return;  // the defaults RecurrentParams starts with
  if (static_cast<int>(names.size()) != spec.activations * dirs) {
    im.fail("activations lists " + std::to_string(names.size()) + " functions, expected " +
            std::to_string(spec.activations * dirs));
  }
  for (int d = 1; d < dirs; ++d) {
    for (int k = 0; k < spec.activations; ++k) {
      if (names[static_cast<size_t>(d * spec.activations + k)] != names[static_cast<size_t>(k)]) {
        im.fail(ErrorCode::kUnsupported, "activations differ between the directions, which is not supported");
      }
    }
  }
  if (spec.cell == RecurrentCell::kSimple) {
    p.activation = activation_kind(im, names[0]);
    return;
  }
  p.recurrent_activation = activation_kind(im, names[0]);
  p.activation = activation_kind(im, names[1]);
  if (spec.cell == RecurrentCell::kLstm && names[2] != names[1]) {
    im.fail(ErrorCode::kUnsupported, "LSTM activations g ('" + names[1] + "') and h ('" + names[2] + "') differ, which is not supported");
  }
}

// Block `onnx_block` of direction d of a [D, G*H, cols] tensor, transposed into columns
// [k*H, (k+1)*H) of a (cols, G*H) matrix.
void place_transposed(const Constant& c, int d, int onnx_block, int k, int64_t units, int64_t cols, Weights& out) {
  const int64_t g_h = static_cast<int64_t>(out.shape[1]);
  for (int64_t u = 0; u < units; ++u) {
    for (int64_t f = 0; f < cols; ++f) {
      const int64_t src = (static_cast<int64_t>(d) * g_h + onnx_block * units + u) * cols + f;
      out.data[static_cast<size_t>(f * g_h + k * units + u)] = static_cast<float>(c.real_at(src));
    }
  }
}

Weights zero_matrix(int64_t rows, int64_t cols) {
  Weights w;
  w.shape = {rows, cols};
  w.data.assign(static_cast<size_t>(rows * cols), 0.0f);
  return w;
}

bool all_zero(const Constant& c) {
  for (int64_t i = 0; i < c.size(); ++i) {
    if (c.real_at(i) != 0.0) return false;
  }
  return true;
}

// Checks a constant's dims against [D, N, H] where N may be the batch-broadcast 1 or any batch.
void check_state_constant(Importer& im, const Constant& c, int dirs, int64_t units, const std::string& role) {
  if (c.dims.size() != 3 || c.dims[0] != dirs || c.dims[2] != units || (c.dims[1] != 1 && !all_zero(c))) {
    im.fail(role + " is a constant of shape that is not [" + std::to_string(dirs) + ", 1, " + std::to_string(units) +
            "] (a constant state must be the same for every sample)");
  }
}

// The IR value of a computed initial state [D, N, H] as {D * H} per sample.
ValueId state_input(Importer& im, const Node_& node, int n, int dirs, int64_t units, const std::string& role) {
  Symbol s = im.input(node, n);
  if (s.rank() != 3) im.fail(role + " must have rank 3 ([directions, batch, hidden_size])");
  if (auto moved = im.with_batch_on(s, 1)) s = std::move(*moved);  // a fixed batch of 1
  ValueId v;
  if (s.perm[0] == 1) {
    v = im.in_layout(s, batch_front_perm(3, 1));
  } else if (s.perm[0] == 0 && dirs == 1 && s.dims[1] == 1) {
    // [1, 1, H] with every axis fixed reads as batch-first; with one direction and one sample
    // both readings hold the same numbers.
    v = im.in_layout(s, identity_perm(3));
  } else {
    im.fail(role + " must carry the batch on axis 1 ([directions, batch, hidden_size])");
  }
  if (im.ir_shape(v) != Dims{dirs, units}) im.fail(role + " does not have shape [" + std::to_string(dirs) + ", N, " + std::to_string(units) + "]");
  return im.emit_internal(node.output(0) + ":" + role, ReshapeParams{Dims{dirs * units}}, {v});
}

void lower_recurrent(Importer& im, const Node_& node, Attributes& a) {
  const CellSpec spec = cell_spec(node.op_type());
  const std::string dir_name = a.s("direction", "forward");
  RecurrentParams p;
  p.cell = spec.cell;
  if (dir_name == "forward") p.direction = RecurrentDirection::kForward;
  else if (dir_name == "reverse") p.direction = RecurrentDirection::kReverse;
  else if (dir_name == "bidirectional") p.direction = RecurrentDirection::kBidirectional;
  else im.fail("direction '" + dir_name + "' is not forward, reverse or bidirectional");
  const int dirs = p.direction_count();
  if (spec.cell == RecurrentCell::kSimple) p.activation = ActivationKind::kTanh;
  read_activations(im, node, a, spec, dirs, p);
  if (a.i("input_forget", 0) != 0) im.fail(ErrorCode::kUnsupported, "input_forget = 1 (coupled input and forget gates) is not supported");
  if (spec.cell == RecurrentCell::kGru) p.reset_after = a.i("linear_before_reset", 0) != 0;
  const int64_t layout = a.i("layout", 0);
  if (layout != 0 && layout != 1) im.fail("layout " + std::to_string(layout) + " is not 0 or 1");

  Symbol x = im.input(node, 0);
  if (x.is_const()) im.fail(ErrorCode::kUnsupported, "X is a constant; nnd serves recurrent layers over computed inputs");
  if (x.rank() != 3) im.fail("X must have rank 3");
  const int batch_axis = layout == 0 ? 1 : 0;
  if (auto moved = im.with_batch_on(x, batch_axis)) x = std::move(*moved);  // a fixed batch of 1
  if (x.perm[0] != batch_axis) {
    im.fail(std::string("X carries the batch on axis ") + std::to_string(x.perm[0]) + "; with layout " + std::to_string(layout) +
            " it must be axis " + std::to_string(batch_axis) + (layout == 0 ? " ([seq_length, batch, input_size])" : ""));
  }
  const ValueId xv = im.in_layout(x, batch_front_perm(3, batch_axis));  // {T, F} per sample
  const int64_t steps = im.ir_shape(xv)[0], features = im.ir_shape(xv)[1];

  const Constant& w = im.const_input(node, 1, "W");
  const Constant& r = im.const_input(node, 2, "R");
  const int64_t units = a.i("hidden_size", w.dims.size() == 3 ? w.dims[1] / spec.gates : 0);
  if (units < 1) im.fail("hidden_size is missing or not positive");
  p.units = units;
  const int64_t cols = spec.gates * units;
  if (w.dims != std::vector<int64_t>{dirs, cols, features}) im.fail("W does not have shape [" + std::to_string(dirs) + ", " + std::to_string(cols) + ", " + std::to_string(features) + "]");
  if (r.dims != std::vector<int64_t>{dirs, cols, units}) im.fail("R does not have shape [" + std::to_string(dirs) + ", " + std::to_string(cols) + ", " + std::to_string(units) + "]");
  const Constant* b = im.has_input(node, 3) ? &im.const_input(node, 3, "B") : nullptr;
  if (b && b->dims != std::vector<int64_t>{dirs, 2 * cols}) im.fail("B does not have shape [" + std::to_string(dirs) + ", " + std::to_string(2 * cols) + "]");
  if (im.has_input(node, 4)) {
    const Constant& lens = im.const_input(node, 4, "sequence_lens");
    for (int64_t i = 0; i < lens.size(); ++i) {
      if (lens.real_at(i) != static_cast<double>(steps)) {
        im.fail(ErrorCode::kUnsupported, "sequence_lens holds " + std::to_string(static_cast<int64_t>(lens.real_at(i))) +
                "; only sequences of the full length (" + std::to_string(steps) + ") are supported");
      }
    }
  }
  if (spec.cell == RecurrentCell::kLstm && im.has_input(node, 7) && !all_zero(im.const_input(node, 7, "P"))) {
    im.fail(ErrorCode::kUnsupported, "peephole weights P are not supported");
  }

  for (int d = 0; d < dirs; ++d) {
    RecurrentWeights rw;
    rw.kernel = zero_matrix(features, cols);
    rw.recurrent_kernel = zero_matrix(units, cols);
    for (int k = 0; k < spec.gates; ++k) {
      place_transposed(w, d, spec.from_onnx[static_cast<size_t>(k)], k, units, features, rw.kernel);
      place_transposed(r, d, spec.from_onnx[static_cast<size_t>(k)], k, units, units, rw.recurrent_kernel);
    }
    if (b) {
      rw.bias.shape = rw.recurrent_bias.shape = {cols};
      rw.bias.data.resize(static_cast<size_t>(cols));
      rw.recurrent_bias.data.resize(static_cast<size_t>(cols));
      for (int k = 0; k < spec.gates; ++k) {
        for (int64_t u = 0; u < units; ++u) {
          const int64_t src = static_cast<int64_t>(d) * 2 * cols + spec.from_onnx[static_cast<size_t>(k)] * units + u;
          rw.bias.data[static_cast<size_t>(k * units + u)] = static_cast<float>(b->real_at(src));
          rw.recurrent_bias.data[static_cast<size_t>(k * units + u)] = static_cast<float>(b->real_at(src + cols));
        }
      }
    }
    p.directions.push_back(std::move(rw));
  }

  // Initial states: absent or zero, a constant, or computed inputs.
  std::vector<ValueId> inputs{xv};
  const bool lstm = spec.cell == RecurrentCell::kLstm;
  const int state_count = lstm ? 2 : 1;
  std::vector<const Constant*> const_states(2, nullptr);
  bool computed = false, nonzero = false;
  for (int k = 0; k < state_count; ++k) {
    if (!im.has_input(node, 5 + k)) continue;
    const Symbol& s = im.input(node, 5 + k);
    if (s.is_const()) {
      const_states[static_cast<size_t>(k)] = &*s.constant;
      check_state_constant(im, *s.constant, dirs, units, k == 0 ? "initial_h" : "initial_c");
      nonzero = nonzero || !all_zero(*s.constant);
    } else {
      computed = true;
    }
  }
  if (computed) {
    // Computed states: both become inputs (a missing or constant one is refused: mixing is rare).
    for (int k = 0; k < state_count; ++k) {
      const std::string role = k == 0 ? "initial_h" : "initial_c";
      if (!im.has_input(node, 5 + k) || im.input(node, 5 + k).is_const()) {
        im.fail(role + " is " + (im.has_input(node, 5 + k) ? "a constant" : "missing") +
                " while the other initial state is computed; both must be computed");
      }
      inputs.push_back(state_input(im, node, 5 + k, dirs, units, role));
    }
    p.initial_state = RecurrentInitialState::kInputs;
  } else if (nonzero) {
    p.initial_state = RecurrentInitialState::kConstant;
    for (int d = 0; d < dirs; ++d) {
      RecurrentWeights& rw = p.directions[static_cast<size_t>(d)];
      for (int k = 0; k < state_count; ++k) {
        Weights& dst = k == 0 ? rw.initial_h : rw.initial_c;
        dst.shape = {units};
        dst.data.assign(static_cast<size_t>(units), 0.0f);
        if (const Constant* c = const_states[static_cast<size_t>(k)]) {
          for (int64_t u = 0; u < units; ++u) dst.data[static_cast<size_t>(u)] = static_cast<float>(c->real_at(d * units + u));
        }
      }
    }
  }

  // Outputs. Y [T, D, N, H] (layout 0) or [N, T, D, H]; Y_h, Y_c [D, N, H] or [N, D, H].
  const Perm seq_perm = layout == 0 ? Perm{2, 0, 1, 3} : identity_perm(4);
  const Perm state_perm = layout == 0 ? Perm{1, 0, 2} : identity_perm(3);
  auto used = [&](int k) { return k < node.output_size() && !node.output(k).empty() && im.readers(node.output(k)) > 0; };
  ValueId seq = -1;
  if (used(0)) {
    p.output = RecurrentOutput::kSequence;
    seq = im.emit_internal(node.output(0) + ":rnn", p, inputs);
    im.emit(node, 0, ReshapeParams{Dims{steps, dirs, units}}, {seq}, seq_perm);
  }
  if (used(1)) {
    ValueId last;
    if (seq >= 0) {
      // The last state of each direction is a row of Y: forward at step T-1, backward at step 0.
      const ValueId grid = im.emit_internal(node.output(1) + ":grid", ReshapeParams{Dims{steps, dirs, units}}, {seq});
      std::vector<ValueId> rows;
      for (int d = 0; d < dirs; ++d) {
        const int64_t t = p.backward(d) ? 0 : steps - 1;
        rows.push_back(im.emit_internal(node.output(1) + ":d" + std::to_string(d),
                                        CroppingParams{2, t, steps - 1 - t, d, dirs - 1 - d}, {grid}));
      }
      last = rows.size() == 1 ? rows[0] : im.emit_internal(node.output(1) + ":dirs", ConcatParams{2, -1}, rows);
    } else {
      p.output = RecurrentOutput::kLastHidden;
      last = im.emit_internal(node.output(1) + ":rnn", p, inputs);
    }
    im.emit(node, 1, ReshapeParams{Dims{dirs, units}}, {last}, state_perm);
  }
  if (lstm && used(2)) {
    p.output = RecurrentOutput::kLastCell;
    const ValueId cell = im.emit_internal(node.output(2) + ":rnn", p, inputs);
    im.emit(node, 2, ReshapeParams{Dims{dirs, units}}, {cell}, state_perm);
  }
}

}  // namespace

void add_recurrent_lowerings(LoweringTable& t) {
  t.add("GRU", lower_recurrent);
  t.add("LSTM", lower_recurrent);
  t.add("RNN", lower_recurrent);
}

}  // namespace nnd::onnx_import
