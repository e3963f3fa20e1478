// SimpleRNN, LSTM and GRU in float64, step by step, exactly as RecurrentParams (core/ir/layers.h)
// writes the formulas. This is the oracle the JIT's expansion into Dense / Merge nodes
// (core/passes/expand_recurrent.h) is tested against, so it shares no code with it.
#include <vector>

#include "core/ref/activation_math.h"
#include "core/ref/ref_ops.h"

namespace nnd::ref {
namespace {

double at(const Weights& w, int64_t i) { return w.empty() ? 0.0 : static_cast<double>(w.data[static_cast<size_t>(i)]); }

// One direction over one sample. `x` is {steps, features}; writes the hidden state of step t to
// `seq` row t (stride `row`, columns offset by the caller) and leaves the last states in h, c.
struct DirectionRun {
  const RecurrentParams& p;
  const RecurrentWeights& w;
  int64_t steps, features;

  void run(const double* x, std::vector<double>& h, std::vector<double>& c, double* seq, int64_t row,
           bool backward) const {
    const int64_t units = p.units, cols = units * p.gates();
    std::vector<double> xw(static_cast<size_t>(cols)), hr(static_cast<size_t>(cols)), next(h.size());
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t t = backward ? steps - 1 - s : s;
      const double* xt = x + t * features;
      for (int64_t j = 0; j < cols; ++j) {
        double a = at(w.bias, j), b = at(w.recurrent_bias, j);
        for (int64_t f = 0; f < features; ++f) a += xt[f] * w.kernel.data[static_cast<size_t>(f * cols + j)];
        for (int64_t u = 0; u < units; ++u) b += h[static_cast<size_t>(u)] * w.recurrent_kernel.data[static_cast<size_t>(u * cols + j)];
        xw[static_cast<size_t>(j)] = a;
        hr[static_cast<size_t>(j)] = b;
      }
      step(xw, hr, h, c, next);
      h.swap(next);
      if (seq) {
        for (int64_t u = 0; u < units; ++u) seq[t * row + u] = h[static_cast<size_t>(u)];
      }
    }
  }

  // From the input and recurrent products of one step (hr computed with the old h) to the new
  // hidden state in `out` (and the new cell state in c).
  void step(const std::vector<double>& xw, const std::vector<double>& hr, const std::vector<double>& h,
            std::vector<double>& c, std::vector<double>& out) const {
    const int64_t n = p.units;
    auto act = [&](double v) { return activation_scalar(p.activation, v); };
    auto gate = [&](double v) { return activation_scalar(p.recurrent_activation, v); };
    for (int64_t u = 0; u < n; ++u) {
      const auto k = static_cast<size_t>(u);
      const auto pre = [&](int g) { return xw[k + static_cast<size_t>(g * n)] + hr[k + static_cast<size_t>(g * n)]; };
      switch (p.cell) {
        case RecurrentCell::kSimple:
          out[k] = act(pre(0));
          break;
        case RecurrentCell::kLstm: {
          const double i = gate(pre(0)), f = gate(pre(1)), g = act(pre(2)), o = gate(pre(3));
          c[k] = f * c[k] + i * g;
          out[k] = o * act(c[k]);
          break;
        }
        case RecurrentCell::kGru: {
          const double z = gate(pre(0)), r = gate(pre(1));
          double cand;
          if (p.reset_after) {
            cand = act(xw[k + static_cast<size_t>(2 * n)] + r * hr[k + static_cast<size_t>(2 * n)]);
          } else {
            // (r * h) Rh + rbh: the recurrent product of the candidate uses the reset state.
            double rh = at(w.recurrent_bias, 2 * n + u);
            for (int64_t v = 0; v < n; ++v) {
              rh += r_at(xw, hr, v) * h[static_cast<size_t>(v)] *
                    w.recurrent_kernel.data[static_cast<size_t>(v * 3 * n + 2 * n + u)];
            }
            cand = act(xw[k + static_cast<size_t>(2 * n)] + rh);
          }
          out[k] = (1.0 - z) * cand + z * h[k];
          break;
        }
      }
    }
  }

  // GRU reset gate of unit v (needed across units when the reset applies before the product).
  double r_at(const std::vector<double>& xw, const std::vector<double>& hr, int64_t v) const {
    const auto k = static_cast<size_t>(p.units + v);
    return activation_scalar(p.recurrent_activation, xw[k] + hr[k]);
  }
};

// Joins the two directions' columns of `both` ({.., 2 * units} per row) element-wise.
Tensor merge_directions(const Tensor& both, RecurrentMerge merge, int64_t units, const Dims& out_shape) {
  Tensor y(out_shape, both.batch);
  const int64_t rows = both.sample_size / (2 * units);
  for (int64_t n = 0; n < both.batch; ++n) {
    for (int64_t r = 0; r < rows; ++r) {
      const double* f = both.sample(n) + r * 2 * units;
      double* o = y.sample(n) + r * units;
      for (int64_t u = 0; u < units; ++u) {
        const double a = f[u], b = f[units + u];
        o[u] = merge == RecurrentMerge::kSum ? a + b : merge == RecurrentMerge::kMultiply ? a * b : (a + b) * 0.5;
      }
    }
  }
  return y;
}

}  // namespace

Tensor recurrent(const RecurrentParams& p, const std::vector<const Tensor*>& in, const Dims& out_shape) {
  const Tensor& x = *in[0];
  const int64_t steps = x.shape[0], features = x.shape[1], units = p.units;
  const int dirs = p.direction_count();
  Dims full_shape = out_shape;  // both directions side by side, merged at the end unless concatenated
  full_shape.back() = units * dirs;
  Tensor y(full_shape, x.batch);
  const bool lstm = p.cell == RecurrentCell::kLstm;
  for (int64_t n = 0; n < x.batch; ++n) {
    for (int d = 0; d < dirs; ++d) {
      const RecurrentWeights& w = p.directions[static_cast<size_t>(d)];
      std::vector<double> h(static_cast<size_t>(units), 0.0), c(h.size(), 0.0);
      for (int64_t u = 0; u < units; ++u) {
        const auto k = static_cast<size_t>(u);
        if (p.initial_state == RecurrentInitialState::kConstant) {
          h[k] = w.initial_h.data[k];
          if (lstm) c[k] = w.initial_c.data[k];
        } else if (p.initial_state == RecurrentInitialState::kInputs) {
          h[k] = in[1]->sample(n)[d * units + u];
          if (lstm) c[k] = in[2]->sample(n)[d * units + u];
        }
      }
      double* seq = p.output == RecurrentOutput::kSequence ? y.sample(n) + d * units : nullptr;
      DirectionRun{p, w, steps, features}.run(x.sample(n), h, c, seq, dirs * units, p.backward(d));
      if (p.output != RecurrentOutput::kSequence) {
        const std::vector<double>& last = p.output == RecurrentOutput::kLastCell ? c : h;
        for (int64_t u = 0; u < units; ++u) y.sample(n)[d * units + u] = last[static_cast<size_t>(u)];
      }
    }
  }
  return p.merge == RecurrentMerge::kConcat ? y : merge_directions(y, p.merge, units, out_shape);
}

}  // namespace nnd::ref
