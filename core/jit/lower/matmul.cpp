// MatMul of two computed tensors (attention's Q·Kᵀ and weights·V): one f32-matmul over the
// stacks of matrices; an operand whose leading axes broadcast is first expanded to the output's
// leading axes by an f32-broadcast gather (as merges do).
#include "core/ir/broadcast.h"
#include "core/jit/kernel_config.h"
#include "core/jit/lower/lower.h"

namespace nnd::jit {

void lower(LowerContext& cx, const Node& n, const MatMulParams&) {
  const int dst = cx.output_buffer(n);
  const Dims& out = cx.out_shape(n);
  const size_t r = out.size();
  MatMulSpec s;
  s.m = out[r - 2];
  s.n = out[r - 1];
  s.k = cx.in_shape(n, 0)[r - 1];
  for (size_t i = 0; i + 2 < r; ++i) s.matrices *= out[i];
  const MatMulBlocking b = matmul_blocking(isa_traits(cx.isa), s.m, s.n);
  s.rows = b.rows;
  s.vectors = b.vectors;
  std::vector<int> ins;
  for (size_t i = 0; i < 2; ++i) {
    const Dims& shape = cx.in_shape(n, i);
    Dims full(out.begin(), out.end() - 2);
    full.push_back(shape[r - 2]);
    full.push_back(shape[r - 1]);
    if (shape == full) {
      ins.push_back(cx.in_buf(n, i));
      continue;
    }
    const int expanded = cx.new_buffer(element_count(full, ""), n.name + ":broadcast" + std::to_string(i));
    gather_step(cx, n, broadcast_map(full, shape), element_count(shape, ""), cx.in_buf(n, i), expanded, "broadcast");
    ins.push_back(expanded);
  }
  cx.add(n, "matmul", s, ins, dst);
}

}  // namespace nnd::jit
