// Concatenate: per outer index, each input's inner block in turn (f32-concat).
#include "core/jit/lower/lower.h"

namespace nnd::jit {

void lower(LowerContext& cx, const Node& n, const ConcatParams& p) {
  const int dst = cx.output_buffer(n);
  ConcatSpec cs;
  for (int i = 0; i < p.axis; ++i) cs.outer *= cx.out_shape(n)[static_cast<size_t>(i)];
  std::vector<int> ins;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    cs.inner.push_back(element_count(cx.in_shape(n, i), "") / cs.outer);
    ins.push_back(cx.in_buf(n, i));
  }
  cx.add(n, "concat", cs, ins, dst);
}

}  // namespace nnd::jit
