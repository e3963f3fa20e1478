// f32-merge, written once for every architecture: y = x0 op x1 op ... (MergeSpec: Add, Subtract,
// Multiply, Maximum, Minimum, Average as a sum divided by the input count) over `count` floats per
// sample, through an architecture's GeneratorTarget (generators/generator_target.h). One byte
// offset walks every input and the output alike: full vectors while at least a vector is left,
// then single lanes (loops::vector_then_scalar_loop).
#pragma once

#include <cstdint>

#include "core/jit/generators/loops.h"
#include "core/jit/kernel_args.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/elementwise.h"
#include "core/jit/vec_reg_pool.h"

namespace nnd::jit::generators {

template <class Target>
void emit_merge(Target& t, const MergeSpec& s) {
  using Gp = typename Target::Gp;
  constexpr int64_t kFloat = 4;
  auto& ve = t.vec();
  const int W = t.width();
  const Gp args = t.role("args", Target::kArgs), table = t.role("input table", Target::kW);
  const Gp out = t.role("output", Target::kOut), left = t.role("elements left", Target::kN);
  const Gp off = t.role("byte offset", Target::kPix), src = t.role("input", Target::kRow);
  VecRegPool pool(ve, "f32-merge");
  const VecReg acc = pool.take("acc"), x = pool.take("operand");
  t.load_field(table, args, kArgsIn);
  t.load_field(out, args, kArgsOut);
  t.load_field(left, args, kArgsBatch);
  t.multiply(left, s.count);
  t.clear(off);
  auto body = [&](bool scalar) {
    for (int i = 0; i < s.inputs; ++i) {
      t.load_field(src, table, i * static_cast<int64_t>(sizeof(void*)));
      t.load_at(i == 0 ? acc : x, src, off, scalar);
      if (i == 0) continue;
      switch (s.op) {
        case BinOp::kAdd: ve.add(acc, acc, x); break;
        case BinOp::kSub: ve.sub(acc, acc, x); break;
        case BinOp::kMul: ve.mul(acc, acc, x); break;
        case BinOp::kMax: ve.max(acc, acc, x); break;
        case BinOp::kMin: ve.min(acc, acc, x); break;
      }
    }
    if (s.divisor != 1.0f) {
      ve.load_const(x, s.divisor);
      ve.div(acc, acc, x);
    }
    t.store_at(out, off, acc, scalar);
  };
  loops::vector_then_scalar_loop(
      ve, left, W, Trips::samples(s.count),
      [&] {
        body(false);
        t.add(off, W * kFloat);
      },
      [&] {
        body(true);
        t.add(off, kFloat);
      });
}

}  // namespace nnd::jit::generators
