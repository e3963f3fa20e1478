// f32-matmul, written once for every architecture: C = A · B of two computed tensors (MatMulSpec),
// generated through an architecture's GeneratorTarget (x86/generator_target_p.h,
// arm64/generator_target_p.h), the small vocabulary this generator needs (roles of the general-
// purpose registers, KernelArgs fields, pointer arithmetic, recorded loops, vector loads, stores,
// broadcasts and multiply-adds by register index). Each architecture instantiates it once, in the
// file that registers its generators; the machine code is the architecture's own.
//
// The loop nest, all sizes compile-time constants but the batch:
//   matrices (batch * spec.matrices, run time)
//     row blocks of `rows` rows of C (a last, shorter block when rows does not divide m)
//       column blocks of `vectors` vectors (a last block with fewer vectors and a tail vector)
//         the tile: rows * vectors accumulators; per step of k, one row of B in `vectors`
//         registers and one broadcast of A per row, multiply-added into the row's accumulators.
#pragma once

#include <cstdint>
#include <string>

#include "core/jit/kernel_args.h"
#include "core/jit/loop_record.h"
#include "core/jit/specs/matmul.h"
#include "core/util/error.h"

namespace nnd::jit::generators {

template <class Target>
void emit_matmul(Target& t, const MatMulSpec& s) {
  using Gp = typename Target::Gp;
  constexpr int64_t kFloat = 4;
  const int W = t.width();
  const int rows = s.rows, vectors = s.vectors;
  // Registers by index: the accumulators, B's row, the broadcast of A.
  const int b_first = rows * vectors, bcast = b_first + vectors;
  if (rows < 1 || vectors < 1 || bcast >= t.usable_regs() || s.m < 1 || s.k < 1 || s.n < 1 || s.matrices < 1) {
    throw Error(ErrorCode::kInternal, "JIT internal error in f32-matmul: tile " + std::to_string(rows) + "x" +
                                          std::to_string(vectors) + "v does not fit the registers or the shape");
  }
  auto acc = [&](int r, int v) { return r * vectors + v; };

  const Gp args = t.role("args", Target::kArgs);
  const Gp a_mat = t.role("A matrix", Target::kIn), b_mat = t.role("B matrix", Target::kW);
  const Gp c_mat = t.role("C matrix", Target::kOut), left = t.role("matrices left", Target::kN);
  const Gp a_row = t.role("A row block", Target::kRow), c_row = t.role("C row block", Target::kOb);
  const Gp b_col = t.role("B column block", Target::kWk), c_col = t.role("C column block", Target::kCol);
  const Gp a_step = t.role("A step", Target::kPix), b_step = t.role("B step", Target::kBias);
  const Gp steps_left = t.role("steps left", Target::kKh), row_blocks = t.role("row blocks left", Target::kCi);
  const Gp col_blocks = t.role("column blocks left", Target::kKw);

  t.load_field(b_mat, args, kArgsIn);  // the input table first
  t.load_field(a_mat, b_mat, 0);
  t.load_field(b_mat, b_mat, sizeof(void*));
  t.load_field(c_mat, args, kArgsOut);
  t.load_field(left, args, kArgsBatch);
  t.multiply(left, s.matrices);

  // One tile: `rs` rows by `vs` vectors of columns, the last vector `last_lanes` wide.
  auto tile = [&](int rs, int vs, int last_lanes) {
    auto lanes = [&](int v) { return v == vs - 1 ? last_lanes : W; };
    for (int r = 0; r < rs; ++r) {
      for (int v = 0; v < vs; ++v) t.zero(acc(r, v));
    }
    t.copy(a_step, a_row);
    t.copy(b_step, b_col);
    t.counted_loop(steps_left, s.k, [&] {
      for (int v = 0; v < vs; ++v) t.load_lanes(b_first + v, b_step, v * W * kFloat, lanes(v));
      for (int r = 0; r < rs; ++r) {
        t.broadcast(bcast, a_step, r * s.k * kFloat);
        for (int v = 0; v < vs; ++v) t.fmadd(acc(r, v), bcast, b_first + v);
      }
      t.add(a_step, kFloat);
      t.add(b_step, s.n * kFloat);
    });
    for (int r = 0; r < rs; ++r) {
      for (int v = 0; v < vs; ++v) t.store_lanes(c_col, (r * s.n + v * W) * kFloat, acc(r, v), lanes(v));
    }
  };
  // The column blocks of `rs` rows of C starting at c_row (A's rows at a_row).
  auto row_block = [&](int rs) {
    t.copy(b_col, b_mat);
    t.copy(c_col, c_row);
    const int64_t block = static_cast<int64_t>(vectors) * W;
    const int64_t full = s.n / block, rest = s.n % block;
    t.times_loop(col_blocks, full, [&] {
      tile(rs, vectors, W);
      t.add(b_col, block * kFloat);
      t.add(c_col, block * kFloat);
    });
    if (rest > 0) {
      const int vs = static_cast<int>((rest + W - 1) / W);
      tile(rs, vs, static_cast<int>(rest - static_cast<int64_t>(vs - 1) * W));
    }
  };
  t.count_down_loop(left, Trips::samples(s.matrices), [&] {
    t.copy(a_row, a_mat);
    t.copy(c_row, c_mat);
    t.times_loop(row_blocks, s.m / rows, [&] {
      row_block(rows);
      t.add(a_row, rows * s.k * kFloat);
      t.add(c_row, rows * s.n * kFloat);
    });
    if (s.m % rows > 0) row_block(static_cast<int>(s.m % rows));
    t.add(a_mat, s.m * s.k * kFloat);
    t.add(b_mat, s.k * s.n * kFloat);
    t.add(c_mat, s.m * s.n * kFloat);
  });
}

}  // namespace nnd::jit::generators
