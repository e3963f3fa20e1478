// expand_recurrent: rewrites each Recurrent node (SimpleRNN / LSTM / GRU, core/ir/layers.h) into the
// layers the JIT already compiles, unrolled over the steps (their count is fixed at load time):
//
//   per direction and gate g:  P_g = Dense(x, W_g, b_g [+ rb_g])            {steps, units}, once
//   per step t:                p_g = Cropping1D(P_g, row t)                  {1, units}
//                              gate = Dense(h, R_g, act, residual p_g)       = act(h R_g + p_g)
//   LSTM                       c = f*c + i*g (Merge mul, mul, add), h = o * a(c)
//   GRU                        h = n + z*(h - n), n as RecurrentParams says for reset_after
//   output                     Concatenate of the step states (and of the directions), or the
//                              last state reshaped to {D * units}
//
// The initial state is a {1, units} value too: zeros or the constants come from an affine map
// (BatchNorm, scale 0) of a step's projection, a state input is cropped per direction. So every
// step, the first included, is the same handful of GEMM and element-wise kernels: nothing new
// for an ISA to implement. The reference engine runs Recurrent nodes natively (core/ref/
// recurrent.cpp), so the JIT-vs-reference tests check this expansion against the formulas.
#pragma once

#include "core/passes/pass.h"

namespace nnd::passes {

// Each step becomes about a dozen nodes; a layer over more steps than this stays a Recurrent node,
// which the JIT's support check refuses (the reference engine runs it) rather than compiling an
// enormous graph. The pass itself never fails on a valid graph.
inline constexpr int64_t kMaxUnrolledSteps = 4096;

class ExpandRecurrent final : public Pass {
 public:
  std::string name() const override { return "expand_recurrent"; }
  bool run(Graph& g) override;
};

}  // namespace nnd::passes
