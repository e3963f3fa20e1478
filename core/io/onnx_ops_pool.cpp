// ONNX pooling and reductions: MaxPool, AveragePool, the global pools, and Reduce* over any
// non-batch axes.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

void lower_pool(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  const bool is_max = node.op_type() == "MaxPool";
  const size_t sp = x.rank() - 2;
  WindowAttrs wa = read_window(im, a, sp, {});
  wa.ceil_mode = a.i("ceil_mode", 0) != 0;
  a.ignore("storage_order");
  const bool include_pad = !is_max && a.i("count_include_pad", 0) != 0;
  for (int64_t d : wa.dilations) {
    if (d != 1) im.fail(ErrorCode::kUnsupported, "dilations " + list_text(wa.dilations) + " are not supported for pooling");
  }
  const Perm perm = channels_last_perm(x.rank());
  ValueId in = im.in_layout(x, perm);
  std::vector<int64_t> spatial = spatial_dims(x);
  PoolParams p;
  p.kind = is_max ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = static_cast<int>(sp);
  Window win = make_window(im, wa, spatial);
  if (include_pad && win.padding == Padding::kExplicit) {
    // Averages over zero padding: pad with zeros explicitly, then pool without padding. The
    // windows ceil_mode adds past the padded input would divide by fewer taps: refused.
    if (wa.ceil_mode) im.fail(ErrorCode::kUnsupported, "count_include_pad together with ceil_mode is not supported");
    ZeroPaddingParams zp;
    zp.rank = p.rank;
    zp.top = win.pad_top;
    zp.bottom = win.pad_bottom;
    zp.left = win.pad_left;
    zp.right = win.pad_right;
    in = im.emit_internal(node.output(0) + ":padded", zp, {in});
    win.padding = Padding::kValid;
    win.pad_top = win.pad_bottom = win.pad_left = win.pad_right = 0;
  }
  p.window = win;
  im.emit(node, 0, p, {in}, perm);
}

void lower_global_pool(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.dynamic_input(node, 0);
  check_conv_rank(im, x);
  GlobalPoolParams p;
  p.kind = node.op_type() == "GlobalMaxPool" ? PoolKind::kMax : PoolKind::kAverage;
  p.rank = static_cast<int>(x.rank()) - 2;
  p.keepdims = true;
  const Perm perm = channels_last_perm(x.rank());
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

// ReduceMean / ReduceMax / ReduceMin / ReduceSum over any non-batch axes:
// - a sum or mean over x's innermost axes (in memory) is a Dense with one unit over the view
//   [N, kept, reduced]: nothing moves before it (a channel sum of an NCHW model, say);
// - otherwise the reduced axes move in front of the kept ones and are pooled away: plain global
//   pooling when one axis of a rank 3-4 tensor is kept (it is the channel), else the same pooling
//   of the view [N, reduced, kept] and a Reshape to the result.
// A pooled sum is the mean times the count; a minimum is the negated maximum of -x.
void lower_reduce(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const std::string& op = node.op_type();
  const bool keepdims = a.i("keepdims", 1) != 0;
  if (a.i("noop_with_empty_axes", 0) != 0) im.fail(ErrorCode::kUnsupported, "noop_with_empty_axes is not supported");
  const std::vector<int64_t> axes = ints_from(im, node, a, "axes", 1).value_or(std::vector<int64_t>{});
  if (axes.empty()) im.fail(ErrorCode::kUnsupported, "reducing over every axis (the batch included) is not supported");
  const size_t r = x.rank();
  std::vector<bool> reduced(r, false);
  for (int64_t ax : axes) reduced[static_cast<size_t>(im.onnx_axis(x, ax))] = true;
  const int batch = x.perm[0];  // kBatchOutside for the file's single sample as a whole
  if (batch != kBatchOutside && reduced[static_cast<size_t>(batch)]) {
    im.fail(ErrorCode::kUnsupported, "reducing over the batch axis is not supported");
  }
  Perm red, kept;  // ONNX axes, in x's IR order
  for (size_t j = 1; j < x.perm.size(); ++j) (reduced[static_cast<size_t>(x.perm[j])] ? red : kept).push_back(x.perm[j]);
  int64_t count = 1, kept_size = 1;
  for (int ax : red) count *= x.dims[static_cast<size_t>(ax)];
  for (int ax : kept) kept_size *= x.dims[static_cast<size_t>(ax)];

  // The result's ONNX dims and layout: the kept axes in x's IR order, after the reduced ones
  // (of length 1) with keepdims.
  Symbol result;
  if (keepdims) {
    result.dims = x.dims;
    for (int ax : red) result.dims[static_cast<size_t>(ax)] = 1;
    result.perm = {batch};
    result.perm.insert(result.perm.end(), red.begin(), red.end());
    result.perm.insert(result.perm.end(), kept.begin(), kept.end());
  } else {
    if (kept.empty()) im.fail("axes " + list_text(axes) + ": the result would have no axis besides the batch");
    const auto renumber = [&](int ax) {
      if (ax == kBatchOutside) return ax;
      return static_cast<int>(ax - std::count(reduced.begin(), reduced.begin() + ax, true));
    };
    for (size_t k = 0; k < r; ++k) {
      if (!reduced[k]) result.dims.push_back(x.dims[k]);
    }
    result.perm = {renumber(batch)};
    for (int ax : kept) result.perm.push_back(renumber(ax));
  }
  Dims out_shape;
  for (size_t j = 1; j < result.perm.size(); ++j) {
    out_shape.push_back(result.dims[static_cast<size_t>(result.perm[j])]);
  }

  Symbol src = x;
  const std::string& name = node.output(0);
  if (op == "ReduceMin") {
    src.value = im.emit_internal(name + ":negate", affine_params(im, x, -1, {-1.0}, {0.0}), {x.value});
  } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
    src.value = im.emit_internal(name + ":square", MergeParams{MergeOp::kMultiply}, {x.value, x.value});
  } else if (op == "ReduceL1") {
    src.value = im.emit_internal(name + ":abs", ActivationParams{ActivationKind::kAbs}, {x.value});
  }
  // What is left to do after those: a sum, a mean or a maximum.
  const bool sum = op == "ReduceSum" || op == "ReduceSumSquare" || op == "ReduceL2" || op == "ReduceL1";
  const bool mean = op == "ReduceMean";
  const bool innermost =
      std::equal(red.begin(), red.end(), x.perm.end() - static_cast<std::ptrdiff_t>(red.size()));
  Steps steps;
  ValueId v = -1;
  if ((sum || mean) && innermost && count <= kMaxMadeUpParameters) {
    v = src.value;
    if (im.ir_shape(v) != Dims{kept_size, count}) steps.emplace_back("view", ReshapeParams{{kept_size, count}});
    DenseParams d;
    d.units = 1;
    d.kernel = Weights::filled(count, sum ? 1.0f : static_cast<float>(1.0 / static_cast<double>(count)));
    d.kernel.shape = {count, 1};
    steps.emplace_back("sum", std::move(d));
    if (out_shape != Dims{kept_size, 1}) steps.emplace_back("shape", ReshapeParams{out_shape});
  } else {
    Perm pooling_layout{batch};
    pooling_layout.insert(pooling_layout.end(), red.begin(), red.end());
    pooling_layout.insert(pooling_layout.end(), kept.begin(), kept.end());
    v = im.in_layout(src, pooling_layout);
    GlobalPoolParams p;
    p.kind = sum || mean ? PoolKind::kAverage : PoolKind::kMax;
    const size_t ir_rank = x.perm.size();  // r, or r + 1 with the batch outside the ONNX axes
    if (kept.size() == 1 && (ir_rank == 3 || ir_rank == 4)) {
      p.rank = static_cast<int>(ir_rank) - 2;
      p.keepdims = keepdims;
      steps.emplace_back("pool", p);  // its shape is out_shape
    } else {
      p.rank = 1;
      if (im.ir_shape(v) != Dims{count, kept_size}) steps.emplace_back("view", ReshapeParams{{count, kept_size}});
      steps.emplace_back("pool", p);
      if (out_shape != Dims{kept_size}) steps.emplace_back("shape", ReshapeParams{out_shape});
    }
    if (sum) steps.emplace_back("sum", affine_params(im, result, -1, {static_cast<double>(count)}, {0.0}));
  }
  if (op == "ReduceMin") steps.emplace_back("min", affine_params(im, result, -1, {-1.0}, {0.0}));
  if (op == "ReduceL2") steps.emplace_back("sqrt", ActivationParams{ActivationKind::kSqrt});
  emit_steps(im, node, 0, result, v, std::move(steps));
}

// ArgMax / ArgMin along one non-batch axis: int64 indices, served as a graph output (shape
// inference refuses them as any layer's input, so no layout change may follow). The result keeps
// x's layout with the axis dropped, or kept (length 1) where it stands in ONNX order among the
// axes after it: a channels-last NCHW input gives its [N, 1, H, W] indices without a transpose.
// Where that is not the ONNX order of the result, x is put in ONNX order first.
void lower_arg_max(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const int axis = static_cast<int>(im.onnx_axis(x, a.i("axis", 0)));
  const bool keepdims = a.i("keepdims", 1) != 0;
  ArgMaxParams p;
  p.smallest = node.op_type() == "ArgMin";
  p.select_last_index = a.i("select_last_index", 0) != 0;
  const int batch = x.perm[0];
  if (batch == axis) im.fail(ErrorCode::kUnsupported, "the index along the batch axis is not supported");
  const auto renumber = [&](int ax) { return ax == kBatchOutside || ax < axis ? ax : ax - 1; };
  // The result's layout when x has layout `in` (and where the kept axis of length 1 goes).
  const auto result_layout = [&](const Perm& in, int* keep_at) {
    Perm kept;  // the other ONNX axes in x's IR order
    for (size_t j = 1; j < in.size(); ++j) {
      if (in[j] != axis) kept.push_back(in[j]);
    }
    Perm out{batch};
    if (keepdims) {
      size_t at = 0;  // before the first kept axis that follows it in ONNX order
      while (at < kept.size() && kept[at] < axis) ++at;
      *keep_at = static_cast<int>(at);
      kept.insert(kept.begin() + static_cast<std::ptrdiff_t>(at), axis);
      out.insert(out.end(), kept.begin(), kept.end());
    } else {
      out = {renumber(batch)};
      for (int ax : kept) out.push_back(renumber(ax));
    }
    return out;
  };
  const Perm ordered = keepdims ? batch_front_perm(x.rank(), batch) : batch_front_perm(x.rank() - 1, renumber(batch));
  Perm in_perm = x.perm;
  Perm perm = result_layout(in_perm, &p.keep_at);
  if (perm != ordered) {
    in_perm = onnx_order(x);
    perm = result_layout(in_perm, &p.keep_at);
  }
  const ValueId in = im.in_layout(x, in_perm);
  p.axis = static_cast<int>(std::find(in_perm.begin() + 1, in_perm.end(), axis) - in_perm.begin()) - 1;
  im.emit(node, 0, p, {in}, perm);
}

}  // namespace

void add_pool_lowerings(LoweringTable& t) {
  t.add("ArgMax", lower_arg_max);
  t.add("ArgMin", lower_arg_max);
  t.add("AveragePool", lower_pool);
  t.add("GlobalAveragePool", lower_global_pool);
  t.add("GlobalMaxPool", lower_global_pool);
  t.add("MaxPool", lower_pool);
  t.add("ReduceL1", lower_reduce);
  t.add("ReduceL2", lower_reduce);
  t.add("ReduceMax", lower_reduce);
  t.add("ReduceMean", lower_reduce);
  t.add("ReduceMin", lower_reduce);
  t.add("ReduceSum", lower_reduce);
  t.add("ReduceSumSquare", lower_reduce);
}

}  // namespace nnd::onnx_import
