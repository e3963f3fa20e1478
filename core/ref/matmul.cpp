// MatMul of two computed tensors: per sample, one matrix product per position of the leading axes,
// the operands' leading axes broadcast (a length 1 pairs with every position of the other's).
#include <cstdint>
#include <vector>

#include "core/ref/ref_ops.h"

namespace nnd::ref {
namespace {

// Offset (in matrices) of operand `s`'s matrix for the output's leading position `pos`, where the
// operand's leading shape is `lead` and broadcast axes (length 1) stay at index 0.
int64_t matrix_index(const Dims& lead, const Dims& out_lead, int64_t pos) {
  int64_t index = 0, stride = 1;
  for (size_t i = out_lead.size(); i-- > 0;) {
    const int64_t coord = pos % out_lead[i];
    pos /= out_lead[i];
    if (lead[i] != 1) index += coord * stride;
    stride *= lead[i];
  }
  return index;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, const Dims& out_shape) {
  Tensor y(out_shape, a.batch);
  const size_t r = out_shape.size();
  const int64_t m = a.shape[r - 2], k = a.shape[r - 1], n = b.shape[r - 1];
  const Dims a_lead(a.shape.begin(), a.shape.end() - 2), b_lead(b.shape.begin(), b.shape.end() - 2);
  const Dims out_lead(out_shape.begin(), out_shape.end() - 2);
  int64_t matrices = 1;
  for (int64_t d : out_lead) matrices *= d;
  for (int64_t s = 0; s < y.batch; ++s) {
    for (int64_t p = 0; p < matrices; ++p) {
      const double* am = a.sample(s) + matrix_index(a_lead, out_lead, p) * m * k;
      const double* bm = b.sample(s) + matrix_index(b_lead, out_lead, p) * k * n;
      double* ym = y.sample(s) + p * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t t = 0; t < k; ++t) acc += am[i * k + t] * bm[t * n + j];
          ym[i * n + j] = acc;
        }
      }
    }
  }
  return y;
}

}  // namespace nnd::ref
