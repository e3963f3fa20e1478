// A NEON f32-conv / f32-gemm spec with packed weights, for the tests that assemble the arm64
// generators on the x86 host (tests/jit/jit_neon_emitter_test.cpp encodings,
// tests/cost_model/cost_model_neon_test.cpp pricing): h x w outputs of a k x k kernel over an
// unpadded input, or (rows) a GEMM, every weight 0.5 and every bias `bias`.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/activation.h"
#include "core/jit/isa.h"
#include "core/jit/kernel_config.h"
#include "core/jit/specs/conv.h"

namespace nnd::test {

inline jit::ConvSpec neon_conv_spec(int64_t h, int64_t w, int64_t cin, int64_t cout, int64_t k, bool rows,
                                    ActivationKind act, float bias) {
  jit::ConvSpec s;
  s.in_h = h + k - 1;
  s.in_w = w + k - 1;
  s.in_c = cin;
  s.out_h = h;
  s.out_w = w;
  s.out_c = cout;
  s.kh = s.kw = k;
  s.cin_g = cin;
  s.cout_g = cout;
  s.rows_mode = rows;
  s.has_bias = true;
  s.act = act;
  s.blocking = jit::conv_blocking(jit::isa_traits(jit::Isa::kNeon), cout);
  std::vector<float> kernel(static_cast<size_t>(k * k * cin * cout), 0.5f), biases(static_cast<size_t>(cout), bias),
      blob;
  jit::pack_conv_weights(s, jit::isa_traits(jit::Isa::kNeon).f32_lanes, kernel, &biases, blob);
  return s;
}

}  // namespace nnd::test
