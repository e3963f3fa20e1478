// f32-matmul: the spec of the product of two computed tensors (attention's Q·Kᵀ and weights·V).
#pragma once

#include <cstdint>

namespace nnd::jit {

// C = A · B for `matrices` pairs per sample: A (m, k), B (k, n) and C (m, n), each row-major and
// contiguous, one matrix after the other and the samples one after another (operands whose leading
// axes broadcast are expanded first). `rows` x `vectors` is the register tile, from
// kernel_config's matmul_blocking: rows of C by vectors of its columns.
struct MatMulSpec {
  int64_t matrices = 1, m = 1, k = 1, n = 1;
  int rows = 1, vectors = 1;
};

}  // namespace nnd::jit
