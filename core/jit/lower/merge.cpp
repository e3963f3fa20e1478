// Merges (Add, Subtract, Multiply, Average, Maximum, Minimum): one f32-merge over inputs of the
// output's shape; inputs that broadcast are first expanded by an f32-broadcast gather.
#include "core/ir/broadcast.h"
#include "core/jit/lower/lower.h"

namespace nnd::jit {

void lower(LowerContext& cx, const Node& n, const MergeParams& p) {
  const int dst = cx.output_buffer(n);
  const Dims& out_shape = cx.out_shape(n);
  const int64_t count = cx.out_count(n);
  std::vector<int> ins;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Dims& s = cx.in_shape(n, i);
    if (s == out_shape) {
      ins.push_back(cx.in_buf(n, i));
      continue;
    }
    const int b = cx.new_buffer(count, n.name + ":broadcast" + std::to_string(i));
    gather_step(cx, n, broadcast_map(out_shape, s), element_count(s, ""), cx.in_buf(n, i), b, "broadcast");
    ins.push_back(b);
  }
  MergeSpec ms;
  ms.inputs = static_cast<int>(ins.size());
  ms.count = count;
  const char* op = "merge-add";
  switch (p.op) {
    case MergeOp::kAdd: ms.op = BinOp::kAdd; break;
    case MergeOp::kSubtract: ms.op = BinOp::kSub; op = "merge-sub"; break;
    case MergeOp::kMultiply: ms.op = BinOp::kMul; op = "merge-mul"; break;
    case MergeOp::kAverage:
      ms.op = BinOp::kAdd;
      ms.divisor = static_cast<float>(n.inputs.size());
      op = "merge-avg";
      break;
    case MergeOp::kMaximum: ms.op = BinOp::kMax; op = "merge-max"; break;
    case MergeOp::kMinimum: ms.op = BinOp::kMin; op = "merge-min"; break;
  }
  cx.add(n, op, ms, ins, dst);
}

}  // namespace nnd::jit
