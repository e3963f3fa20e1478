// f32-const, written once for every architecture (see generators/matmul.h for the generator
// target it is written against): per sample, a copy of `count` floats of the weight blob to the
// output, whole vectors then one tail.
#pragma once

#include <cstdint>

#include "core/jit/kernel_args.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/data_movement.h"

namespace nnd::jit::generators {

template <class Target>
void emit_constant_fill(Target& t, const ConstantFillSpec& s) {
  using Gp = typename Target::Gp;
  constexpr int64_t kFloat = 4;
  const int W = t.width();
  const Gp args = t.role("args", Target::kArgs);
  const Gp base = t.role("the constant", Target::kW), src = t.role("source", Target::kIn);
  const Gp out = t.role("output", Target::kOut), left = t.role("samples left", Target::kN);
  const Gp vectors_left = t.role("vectors left", Target::kCi);
  t.load_field(base, args, kArgsWeights);
  t.add(base, s.weights_off * kFloat);
  t.load_field(out, args, kArgsOut);
  t.load_field(left, args, kArgsBatch);
  const int64_t full = s.count / W;
  const int tail = static_cast<int>(s.count % W);
  t.count_down_loop(left, Trips::samples(1), [&] {
    t.copy(src, base);
    t.times_loop(vectors_left, full, [&] {
      t.load_lanes(0, src, 0, W);
      t.store_lanes(out, 0, 0, W);
      t.add(src, W * kFloat);
      t.add(out, W * kFloat);
    });
    if (tail > 0) {
      t.load_lanes(0, src, 0, tail);
      t.store_lanes(out, 0, 0, tail);
      t.add(out, tail * kFloat);
    }
  });
}

}  // namespace nnd::jit::generators
