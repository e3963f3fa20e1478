// ONNX shape-changing operators: Unsqueeze, Squeeze, Transpose, Reshape, Flatten, Concat, Gather,
// Slice, Split, Expand. Most change only a tensor's layout (onnx_import.h); crops run on views.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

// Gives `x` the ONNX dims `dims` in layout `perm` without moving data (a Reshape when the IR
// shape changes).
void reshape_in_place(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& dims,
                      const Perm& perm) {
  Dims target;
  for (size_t j = 1; j < perm.size(); ++j) target.push_back(dims[static_cast<size_t>(perm[j])]);
  if (target == im.ir_shape(x.value)) {
    im.alias(node, 0, x, perm);
  } else {
    im.emit(node, 0, ReshapeParams{target}, {x.value}, perm);
  }
}

void lower_unsqueeze(Importer& im, const Node_& node, Attributes& a) {
  const auto axes_in = ints_from(im, node, a, "axes", 1);
  if (!axes_in) im.fail("axes are missing");
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> old_dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t r = static_cast<int64_t>(old_dims.size() + axes_in->size());
  std::vector<bool> inserted(static_cast<size_t>(r), false);
  for (int64_t ax : *axes_in) {
    const int64_t k = ax < 0 ? ax + r : ax;
    if (k < 0 || k >= r || inserted[static_cast<size_t>(k)]) im.fail("axes " + list_text(*axes_in) + " are invalid");
    inserted[static_cast<size_t>(k)] = true;
  }
  std::vector<int64_t> dims;
  std::vector<int> old_to_new;
  for (int64_t k = 0, o = 0; k < r; ++k) {
    if (inserted[static_cast<size_t>(k)]) {
      dims.push_back(1);
    } else {
      old_to_new.push_back(static_cast<int>(k));
      dims.push_back(old_dims[static_cast<size_t>(o++)]);
    }
  }
  if (x.is_const()) {
    Constant c = *x.constant;
    c.dims = dims;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  // With a batch the file fixes to 1 the new axis 0 has length 1 like the batch: operators that
  // need the batch first take it there (Importer::with_batch_on).
  if (inserted[0] && !x.batch_outside() && im.declared_batch() != 1) {
    im.fail(ErrorCode::kUnsupported, "inserting an axis before the batch axis is not supported");
  }
  // New axes sit in the IR right after the IR position of the ONNX axis before them.
  Perm perm;
  for (int old : x.perm) perm.push_back(old == kBatchOutside ? old : old_to_new[static_cast<size_t>(old)]);
  if (inserted[0]) perm.insert(perm.begin() + 1, 0);  // any place will do for a new axis of length 1
  for (int64_t k = 1; k < r; ++k) {
    if (!inserted[static_cast<size_t>(k)]) continue;
    const auto it = std::find(perm.begin(), perm.end(), static_cast<int>(k - 1));
    perm.insert(it + 1, static_cast<int>(k));
  }
  reshape_in_place(im, node, x, dims, perm);
}

void lower_squeeze(Importer& im, const Node_& node, Attributes& a) {
  Symbol x = im.input(node, 0);
  std::vector<int64_t> old_dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t r = static_cast<int64_t>(old_dims.size());
  std::vector<bool> drop(static_cast<size_t>(r), false);
  if (const auto axes = ints_from(im, node, a, "axes", 1)) {
    std::vector<bool> named(static_cast<size_t>(r), false);
    for (int64_t ax : *axes) {
      const int64_t k = ax < 0 ? ax + r : ax;
      if (k >= 0 && k < r) named[static_cast<size_t>(k)] = true;
    }
    // A batch the file fixes to 1 moves to a kept axis of length 1 before its axis goes.
    if (!x.is_const() && !x.batch_outside() && named[static_cast<size_t>(x.perm[0])]) {
      for (int64_t k = 0; k < r; ++k) {
        if (named[static_cast<size_t>(k)]) continue;
        if (auto moved = im.with_batch_on(x, k)) {
          x = std::move(*moved);
          old_dims = x.dims;
          break;
        }
      }
    }
    for (int64_t ax : *axes) {
      const int64_t k = ax < 0 ? ax + r : ax;
      if (k < 0 || k >= r) im.fail("axis " + std::to_string(ax) + " is out of range");
      if (!x.is_const() && k == x.perm[0]) {
        im.fail(ErrorCode::kUnsupported, "squeezing the batch axis (" + std::to_string(k) + ") is not supported" +
                                             (im.declared_batch() == 1 ? ": no other axis of length 1 is left to carry the file's batch of 1"
                                                                       : std::string()));
      }
      if (old_dims[static_cast<size_t>(k)] != 1) im.fail("axis " + std::to_string(ax) + " does not have length 1");
      drop[static_cast<size_t>(k)] = true;
    }
  } else {
    for (int64_t k = 0; k < r; ++k) {
      const bool batch = !x.is_const() && k == x.perm[0];
      drop[static_cast<size_t>(k)] = !batch && old_dims[static_cast<size_t>(k)] == 1;
    }
  }
  std::vector<int64_t> dims;
  std::vector<int> old_to_new(static_cast<size_t>(r), -1);
  for (int64_t k = 0; k < r; ++k) {
    if (drop[static_cast<size_t>(k)]) continue;
    old_to_new[static_cast<size_t>(k)] = static_cast<int>(dims.size());
    dims.push_back(old_dims[static_cast<size_t>(k)]);
  }
  if (x.is_const()) {
    Constant c = *x.constant;
    c.dims = dims;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  if (dims.size() < (x.batch_outside() ? 1u : 2u)) im.fail("the result would have no axis besides the batch");
  Perm perm;
  for (int old : x.perm) {
    if (old == kBatchOutside) perm.push_back(old);
    else if (old_to_new[static_cast<size_t>(old)] >= 0) perm.push_back(old_to_new[static_cast<size_t>(old)]);
  }
  reshape_in_place(im, node, x, dims, perm);
}

void lower_transpose(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  std::vector<int64_t> p = a.ints("perm").value_or(std::vector<int64_t>{});
  if (x.is_const()) {
    im.set_constant(node, 0, fold_transpose(*x.constant, p, im.context()));
    return;
  }
  const size_t r = x.rank();
  if (p.empty()) {
    for (size_t k = 0; k < r; ++k) p.push_back(static_cast<int64_t>(r - 1 - k));
  }
  if (p.size() != r) im.fail("perm " + list_text(p) + " does not match rank " + std::to_string(r));
  std::vector<int> inverse(r, -1);
  for (size_t i = 0; i < r; ++i) {
    if (p[i] < 0 || p[i] >= static_cast<int64_t>(r) || inverse[static_cast<size_t>(p[i])] >= 0) {
      im.fail("perm " + list_text(p) + " is not a permutation");
    }
    inverse[static_cast<size_t>(p[i])] = static_cast<int>(i);
  }
  // The batch may move (a recurrent operator's time-major layout, a Transpose): IR axis 0 stays
  // the batch, and the importer refuses the tensor for operators that need the batch first
  // (Importer::input).
  Perm perm;
  for (int old : x.perm) perm.push_back(old == kBatchOutside ? old : inverse[static_cast<size_t>(old)]);
  im.alias(node, 0, x, perm);  // no data moves: only the layout's meaning changes
}

// Reshape of a tensor whose batch is ONNX axis b > 0 (time-major, around recurrent operators):
// the axes before the batch and the batch itself must be kept (0 or their own length), the axes
// after it may be regrouped. In the layout with the batch pulled to the front that is a Reshape of
// the per-sample elements, which keep their order.
void reshape_behind_batch(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& t) {
  const auto b = static_cast<size_t>(x.perm[0]);
  if (t.size() <= b) im.fail("the target shape " + list_text(t) + " drops the batch axis (axis " + std::to_string(b) + ")");
  std::vector<int64_t> dims;
  for (size_t k = 0; k <= b; ++k) {
    const int64_t d = t[k] == 0 ? x.dims[k] : t[k];
    if (d != x.dims[k]) {
      im.fail("the target shape " + list_text(t) + " changes axis " + std::to_string(k) + ", at or before the batch axis (" +
              std::to_string(b) + ")");
    }
    dims.push_back(d);
  }
  int64_t tail = 1, known = 1;
  for (size_t k = b + 1; k < x.rank(); ++k) tail *= x.dims[k];
  int unknown = -1;
  for (size_t k = b + 1; k < t.size(); ++k) {
    int64_t d = t[k] == 0 && k < x.rank() ? x.dims[k] : t[k];
    if (d == -1) {
      if (unknown >= 0) im.fail("the target shape has more than one -1");
      unknown = static_cast<int>(dims.size());
    } else if (d < 1 || d > tail) {
      im.fail("the target shape " + list_text(t) + " does not fit the input");
    } else {
      known *= d;
    }
    dims.push_back(d);
  }
  if (unknown >= 0) {
    if (tail % known) im.fail("the target shape " + list_text(t) + " does not fit the input");
    dims[static_cast<size_t>(unknown)] = tail / known;
  } else if (known != tail) {
    im.fail("the target shape " + list_text(t) + " does not fit the input");
  }
  const Perm perm = batch_front_perm(dims.size(), static_cast<int>(b));
  const ValueId v = im.in_layout(x, batch_front_perm(x.rank(), static_cast<int>(b)));
  Dims sample;
  for (size_t j = 1; j < perm.size(); ++j) sample.push_back(dims[static_cast<size_t>(perm[j])]);
  if (sample.empty()) im.fail("the result would have no axis besides the batch");
  if (sample == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    im.alias(node, 0, s, perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{sample}, {v}, perm);
}

// The ONNX axis of a Reshape's result that carries a batch the file fixes to 1, when the reshape
// moves the single sample across the batch axis (tf2onnx's Reshape [1, T, F] -> [T, 1, F] for a
// transpose whose moved axes have length 1), with the target `t` resolved as the file's batch of
// one reads it. Nothing when the batch is free, the target does not fit, or no axis of the result
// has length 1. Preference: an axis the target computes from the batch size (Shape), the input's
// batch axis, axis 0, then the first axis of length 1.
struct OneSampleReshape {
  std::vector<int64_t> dims;  // the resolved target, the batch as 1
  int batch_axis = 0;
};
std::optional<OneSampleReshape> one_sample_reshape(const Importer& im, const Symbol& x, const std::vector<int64_t>& t) {
  if (im.declared_batch() != 1) return std::nullopt;
  const auto b = static_cast<size_t>(x.perm[0]);
  std::vector<int64_t> in = x.dims;
  in[b] = 1;
  int64_t total = 1;
  for (int64_t d : in) total *= d;
  OneSampleReshape r;
  int unknown = -1, from_batch = -1, batch_refs = 0;
  int64_t known = 1;
  for (size_t k = 0; k < t.size(); ++k) {
    int64_t d = t[k];
    if (d == 0) {
      if (k >= in.size()) return std::nullopt;
      d = in[k];
      if (k == b) ++batch_refs, from_batch = static_cast<int>(k);
    } else if (d == kBatchMarker) {
      d = 1;
      ++batch_refs, from_batch = static_cast<int>(k);
    } else if (d == -1) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int>(k);
    } else if (d < 1 || d > total) {
      return std::nullopt;
    }
    if (d != -1) known *= d;
    r.dims.push_back(d);
  }
  if (unknown >= 0) {
    if (total % known) return std::nullopt;
    r.dims[static_cast<size_t>(unknown)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  const auto unit = [&](size_t k) { return k < r.dims.size() && r.dims[k] == 1; };
  if (batch_refs == 1) {
    r.batch_axis = from_batch;
  } else if (unit(b)) {
    r.batch_axis = static_cast<int>(b);
  } else if (unit(0)) {
    r.batch_axis = 0;
  } else {
    const auto it = std::find(r.dims.begin(), r.dims.end(), 1);
    if (it == r.dims.end()) return std::nullopt;
    r.batch_axis = static_cast<int>(it - r.dims.begin());
  }
  return r;
}

// A Reshape of the file's single sample (one_sample_reshape): the per-sample elements keep their
// order, so it is a Reshape of each sample's elements with the batch moved to `r.batch_axis`.
void reshape_one_sample(Importer& im, const Node_& node, Symbol& x, const OneSampleReshape& r) {
  const Perm perm = batch_front_perm(r.dims.size(), r.batch_axis);
  const ValueId v = im.in_layout(x, batch_front_perm(x.rank(), x.perm[0]));
  Dims sample;
  for (size_t j = 1; j < perm.size(); ++j) sample.push_back(r.dims[static_cast<size_t>(perm[j])]);
  if (sample.empty()) im.fail("the result would have no axis besides the batch");
  if (sample == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    im.alias(node, 0, s, perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{sample}, {v}, perm);
}

// Reshape of the file's single sample as a whole (a batch outside the ONNX axes): the target as
// ONNX states it (0 copies an axis, one -1 is inferred), on each sample's elements in ONNX order.
// Nothing when the target does not fit.
std::optional<std::vector<int64_t>> sample_target(const Symbol& x, const std::vector<int64_t>& t) {
  int64_t total = 1;
  for (int64_t d : x.dims) total *= d;
  std::vector<int64_t> dims;
  int unknown = -1;
  int64_t known = 1;
  for (size_t k = 0; k < t.size(); ++k) {
    int64_t d = t[k];
    if (d == 0) {
      if (k >= x.rank()) return std::nullopt;
      d = x.dims[k];
    } else if (d == kBatchMarker) {
      d = 1;  // the batch size of a tensor that carries it on an axis: 1 in this one sample
    } else if (d == -1) {
      if (unknown >= 0) return std::nullopt;
      unknown = static_cast<int>(k);
    } else if (d < 1 || d > total) {
      return std::nullopt;
    }
    if (d != -1) known *= d;
    dims.push_back(d);
  }
  if (unknown >= 0) {
    if (total % known) return std::nullopt;
    dims[static_cast<size_t>(unknown)] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return dims;
}

void reshape_outside(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& t) {
  const std::optional<std::vector<int64_t>> dims = sample_target(x, t);
  if (!dims) im.fail("the target shape " + list_text(t) + " does not fit the input " + list_text(x.dims));
  const ValueId v = im.in_layout(x, onnx_order(x));
  const Perm perm = batch_front_perm(dims->size(), kBatchOutside);
  if (Dims(*dims) == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    im.alias(node, 0, s, perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{Dims(*dims)}, {v}, perm);
}

void lower_reshape(Importer& im, const Node_& node, Attributes& a) {
  const bool allow_zero = a.i("allowzero", 0) != 0;
  Symbol& x = im.input(node, 0);
  std::vector<int64_t> t = im.const_input(node, 1, "shape").as_ints(im.context() + ": shape");
  if (x.is_const()) {
    Constant c = *x.constant;
    int64_t known = 1, unknown = -1;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] == 0 && !allow_zero) t[k] = k < c.dims.size() ? c.dims[k] : 0;
      if (t[k] == -1) unknown = static_cast<int64_t>(k);
      else known *= t[k];
    }
    if (unknown >= 0) t[static_cast<size_t>(unknown)] = known ? c.size() / known : 0;
    int64_t count = 1;
    for (int64_t d : t) {
      if (d < 0 || (d != 0 && count > c.size() / d)) im.fail("the target shape " + list_text(t) + " does not fit the constant");
      count *= d;
    }
    if (count != c.size()) im.fail("the target shape " + list_text(t) + " does not fit the constant");
    c.dims = t;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  if (t.empty()) im.fail("the target shape is empty");
  if (allow_zero && std::count(t.begin(), t.end(), 0)) im.fail("allowzero with a 0 in the shape");
  if (x.batch_outside()) {
    reshape_outside(im, node, x, t);
    return;
  }
  const auto one = one_sample_reshape(im, x, t);
  if (one && one->batch_axis != x.perm[0]) {
    reshape_one_sample(im, node, x, *one);
    return;
  }
  if (!one && im.declared_batch() == 1) {
    // No axis of length 1 is left to carry the file's batch of 1 (nn.MultiheadAttention's
    // [T, 1, E] -> [T, H, E/H]): from here on the tensor is that single sample as a whole.
    Symbol outside = *im.with_batch_outside(x);
    if (sample_target(outside, t)) {
      reshape_outside(im, node, outside, t);
      return;
    }
  }
  if (x.perm[0] != 0) {
    reshape_behind_batch(im, node, x, t);
    return;
  }
  int64_t per_sample = 1;
  for (size_t k = 1; k < x.rank(); ++k) per_sample *= x.dims[k];
  std::vector<int64_t> sample;
  int unknown = -1;
  int64_t known = 1;
  for (size_t k = 1; k < t.size(); ++k) {
    int64_t d = t[k];
    if (d == 0) d = k < x.rank() ? x.dims[k] : 0;
    if (d == kBatchMarker) im.fail("the target shape " + list_text(t) + " puts the batch size on axis " + std::to_string(k));
    if (d == -1) {
      if (unknown >= 0) im.fail("the target shape has more than one -1");
      unknown = static_cast<int>(sample.size());
    } else if (d < 1 || d > per_sample) {
      im.fail("the target shape " + list_text(t) + " has a dimension " + std::to_string(d) +
              " that does not fit " + std::to_string(per_sample) + " elements per sample");
    } else {
      known *= d;
    }
    sample.push_back(d);
  }
  if (unknown >= 0) {
    if (known == 0 || per_sample % known) im.fail("the target shape " + list_text(t) + " does not fit the input");
    sample[static_cast<size_t>(unknown)] = per_sample / known;
    known = per_sample;
  }
  // Axis 0 must be the batch: the marker, 0 (copy), -1 or a literal batch with the rest fitting.
  if (known != per_sample || (t[0] == -1 && unknown >= 0)) {
    im.fail("the target shape " + list_text(t) + " moves data across the batch axis (input " +
            std::to_string(per_sample) + " elements per sample)");
  }
  if (sample.empty()) im.fail("the result would have no axis besides the batch");
  const ValueId v = im.in_layout(x, identity_perm(x.rank()));
  std::vector<int64_t> dims{kBatchMarker};
  dims.insert(dims.end(), sample.begin(), sample.end());
  if (Dims(sample) == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    s.perm = identity_perm(x.rank());
    im.alias(node, 0, s, s.perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{Dims(sample)}, {v}, identity_perm(dims.size()));
}

void lower_flatten(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.dynamic_input(node, 0);
  const int64_t axis = a.i("axis", 1);
  const int64_t r = static_cast<int64_t>(x.rank());
  const int64_t k = axis < 0 ? axis + r : axis;
  if (x.batch_outside()) {
    if (k < 0 || k > r) im.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < r; ++i) (i < k ? outer : inner) *= x.dims[static_cast<size_t>(i)];
    reshape_outside(im, node, x, {outer, inner});
    return;
  }
  if (k < 1 || k > r) im.fail(ErrorCode::kUnsupported, "axis " + std::to_string(axis) + ": flattening into the batch axis is not supported");
  const ValueId v = im.in_layout(x, identity_perm(x.rank()));
  Dims target;
  for (int64_t i = 1; i < k; ++i) target.push_back(x.dims[static_cast<size_t>(i)]);
  int64_t rest = 1;
  for (int64_t i = k; i < r; ++i) rest *= x.dims[static_cast<size_t>(i)];
  target.push_back(rest);
  if (target == im.ir_shape(v)) {
    Symbol s = x;
    s.value = v;
    s.perm = identity_perm(x.rank());
    im.alias(node, 0, s, s.perm);
    return;
  }
  im.emit(node, 0, ReshapeParams{target}, {v}, identity_perm(target.size() + 1));
}

void lower_concat(Importer& im, const Node_& node, Attributes& a) {
  const int64_t axis = a.i("axis", 0);
  bool all_const = true;
  for (int k = 0; k < node.input_size(); ++k) {
    const bool c = im.input(node, k).is_const();
    all_const = all_const && c;
  }
  if (all_const) {
    std::vector<const Constant*> parts;
    for (int k = 0; k < node.input_size(); ++k) parts.push_back(&*im.input(node, k).constant);
    im.set_constant(node, 0, fold_concat(parts, axis, im.context()));
    return;
  }
  // The layout and the batch come from the first computed input; constants among the inputs (a
  // learned class token before the patches) become IR Constant nodes in that layout.
  // When one computed input is the file's single sample as a whole, all of them become it.
  int computed = 0;
  while (im.input(node, computed).is_const()) ++computed;
  bool outside = false;
  for (int k = 0; k < node.input_size(); ++k) outside = outside || im.input(node, k).batch_outside();
  const Symbol first = im.batch_like(im.input(node, computed), outside, "input " + std::to_string(computed));
  const int64_t onnx_axis = im.onnx_axis(first, axis);
  if (onnx_axis == first.perm[0]) im.fail(ErrorCode::kUnsupported, "concatenation along the batch axis is not supported");
  const Perm perm = first.perm;
  std::vector<ValueId> ins;
  for (int k = 0; k < node.input_size(); ++k) {
    Symbol& s = im.input(node, k);
    if ((s.is_const() ? s.constant->dims.size() : s.rank()) != first.rank()) im.fail("inputs of different ranks");
    if (s.is_const()) {
      ins.push_back(constant_operand(im, *s.constant, first, perm, node.output(0) + ":constant" + std::to_string(k)));
    } else {
      Symbol operand = im.batch_like(s, outside, "input " + std::to_string(k));
      ins.push_back(im.in_layout(operand, perm));
    }
  }
  ConcatParams p;
  p.keras_axis = im.ir_axis(first, onnx_axis);
  im.emit(node, 0, p, ins, perm);
}

// The steps of emit_crop's crop of `x` by one IR Cropping on a view of its memory (see there), or
// nothing when no view crops at most two axes.
std::optional<Steps> crop_steps(Importer& im, const Symbol& x, const std::vector<int64_t>& crop_begin,
                                const std::vector<int64_t>& crop_end) {
  struct Span {
    int64_t len, begin, end;
    bool cropped() const { return begin || end; }
  };
  std::vector<Span> axes;  // IR order, batch excluded
  Dims result;
  for (size_t j = 1; j < x.perm.size(); ++j) {
    const size_t a = static_cast<size_t>(x.perm[j]);
    axes.push_back({x.dims[a], crop_begin[a], crop_end[a]});
    result.push_back(x.dims[a] - crop_begin[a] - crop_end[a]);
  }
  const auto last_cropped = std::find_if(axes.rbegin(), axes.rend(), [](const Span& s) { return s.cropped(); });
  if (last_cropped == axes.rend()) return Steps{};
  std::vector<Span> view;
  if ((axes.size() == 2 || axes.size() == 3) && !axes.back().cropped()) {
    view = axes;  // already the shape of a Cropping1D/2D
  } else {
    const auto inner = last_cropped.base();  // the uncropped axes after the last cropped one
    for (auto it = axes.begin(); it != inner; ++it) {
      if (view.empty() || it->cropped()) {
        view.push_back(*it);
      } else {
        view.back().len *= it->len;
        view.back().begin *= it->len;
        view.back().end *= it->len;
      }
    }
    Span kept{1, 0, 0};
    for (auto it = inner; it != axes.end(); ++it) kept.len *= it->len;
    view.push_back(kept);
  }
  if (view.size() > 3) return std::nullopt;
  CroppingParams cp;
  cp.rank = static_cast<int>(view.size()) - 1;
  cp.left = view[view.size() - 2].begin;
  cp.right = view[view.size() - 2].end;
  if (cp.rank == 2) {
    cp.top = view[0].begin;
    cp.bottom = view[0].end;
  }
  Dims view_shape, cropped_shape;
  for (const Span& s : view) {
    view_shape.push_back(s.len);
    cropped_shape.push_back(s.len - s.begin - s.end);
  }
  Steps steps;
  if (view_shape != im.ir_shape(x.value)) steps.emplace_back("view", ReshapeParams{view_shape});
  steps.emplace_back("crop", cp);
  if (cropped_shape != result) steps.emplace_back("shape", ReshapeParams{result});
  return steps;
}

// Crops computed `x` by crop_begin[a] / crop_end[a] elements at the two ends of each ONNX axis a,
// as output `out` of `node`, in x's own layout. An IR Cropping crops one or two axes of a tensor
// whose last axis is kept whole, so the crop runs on a view of x's memory (free Reshapes):
// a cropped axis absorbs the uncropped axes inside it (its crop scales by their size), uncropped
// outer axes merge into one, and the uncropped inner axes become the kept last axis (of length
// 1 when the innermost axis is cropped). Only the crop itself moves data, whatever the layout.
// Where no view has at most two cropped axes (three cropped axes, or an uncropped one outside two
// cropped ones), the innermost cropped axis is cropped first, alone (the axes outside it merge
// into one), then the rest.
void emit_crop(Importer& im, const Node_& node, int out, Symbol& x, std::vector<int64_t> crop_begin,
               std::vector<int64_t> crop_end) {
  const std::string& name = node.output(out);
  Symbol part = x;  // the tensor left to crop
  for (int stage = 0;; ++stage) {
    if (std::optional<Steps> steps = crop_steps(im, part, crop_begin, crop_end)) {
      Symbol result = part;
      for (size_t a = 0; a < part.rank(); ++a) {
        if (static_cast<int>(a) != part.perm[0]) result.dims[a] -= crop_begin[a] + crop_end[a];
      }
      emit_steps(im, node, out, result, part.value, std::move(*steps));
      return;
    }
    const auto first = static_cast<size_t>(*std::find_if(part.perm.rbegin(), part.perm.rend() - 1, [&](int a) {
      return crop_begin[static_cast<size_t>(a)] != 0 || crop_end[static_cast<size_t>(a)] != 0;
    }));
    std::vector<int64_t> begin_now(part.rank(), 0), end_now(part.rank(), 0);
    begin_now[first] = std::exchange(crop_begin[first], 0);
    end_now[first] = std::exchange(crop_end[first], 0);
    part.value = emit_internal_steps(im, name + ":" + std::to_string(stage), part.value,
                                     *crop_steps(im, part, begin_now, end_now));
    part.dims[first] -= begin_now[first] + end_now[first];
  }
}

// Constant indices along a non-batch axis of a computed tensor. One index (PyTorch's
// `out[:, -1, :]`, the last step of a recurrent layer) is a crop to that row, then the axis
// dropped (scalar index) or kept with length 1 (one-element list); a list of indices (`x[:, [2, 1,
// 0]]`, BGR <-> RGB) is an IR Gather in x's layout.
void gather_computed(Importer& im, const Node_& node, Symbol& x, const Constant& idx, int64_t axis) {
  if (idx.dims.size() > 1) {
    im.fail("indices of shape " + list_text(idx.dims) + ": gathering from a computed tensor takes one index or a list");
  }
  const int64_t a = im.onnx_axis(x, axis);
  if (a == x.perm[0]) im.fail(ErrorCode::kUnsupported, "gathering along the batch axis is not supported");
  const int64_t len = x.dims[static_cast<size_t>(a)];
  if (idx.size() > kMaxMadeUpParameters) im.fail(ErrorCode::kLimit, "too many indices");
  std::vector<int64_t> picked;
  for (int64_t k = 0; k < idx.size(); ++k) {
    const auto given = static_cast<int64_t>(idx.real_at(k));
    const int64_t i = given < 0 ? given + len : given;
    if (i < 0 || i >= len) im.fail("index " + std::to_string(given) + " is out of range for length " + std::to_string(len));
    picked.push_back(i);
  }
  if (picked.empty()) im.fail("the index list is empty");
  if (picked.size() > 1) {
    Symbol result = x;
    result.dims[static_cast<size_t>(a)] = static_cast<int64_t>(picked.size());
    emit_steps(im, node, 0, result, x.value, {{"gather", GatherParams{im.ir_axis(x, a) - 1, std::move(picked)}}});
    return;
  }
  const int64_t i = picked[0];
  std::vector<int64_t> begin(x.rank(), 0), end(x.rank(), 0);
  begin[static_cast<size_t>(a)] = i;
  end[static_cast<size_t>(a)] = len - 1 - i;
  emit_crop(im, node, 0, x, begin, end);
  if (!idx.dims.empty()) return;
  Symbol& row = im.tensor(node.output(0));
  std::vector<int64_t> dims = row.dims;
  dims.erase(dims.begin() + a);
  Perm perm;
  for (int p : row.perm) {
    if (p != a) perm.push_back(p > a ? p - 1 : p);
  }
  if (perm.size() < 2) im.fail("the result would have no axis besides the batch");
  reshape_in_place(im, node, row, dims, perm);
}

void lower_gather(Importer& im, const Node_& node, Attributes& a) {
  const int64_t axis = a.i("axis", 0);
  const Constant& idx = im.const_input(node, 1, "indices");
  Symbol& data = im.input(node, 0);
  if (!data.is_const()) {
    gather_computed(im, node, data, idx, axis);
    return;
  }
  im.set_constant(node, 0, fold_gather(*data.constant, idx, axis, im.context()));
}


// The layout in which a 1x1 max pool keeps every stride[a]-th element along each ONNX axis a of
// `x`: the strided axes spatial, an unstrided axis last (the channel; x's own last one when it
// is unstrided). Rank 3 and 4 tensors, at most rank - 2 strided axes.
Perm subsample_layout(Importer& im, const Symbol& x, const std::vector<int64_t>& stride) {
  const size_t r = x.rank();
  const size_t ir_rank = x.perm.size();  // r, or r + 1 with the batch outside the ONNX axes
  const int batch = x.perm[0];
  std::vector<int64_t> strided;
  for (size_t a = 0; a < r; ++a) {
    if (static_cast<int>(a) != batch && stride[a] > 1) strided.push_back(static_cast<int64_t>(a));
  }
  if ((ir_rank != 3 && ir_rank != 4) || strided.size() > ir_rank - 2) {
    im.fail(ErrorCode::kUnsupported, "a slice with steps on axes " + list_text(strided) + " of a rank-" + std::to_string(r) +
            " tensor is not supported (steps on at most rank - 2 axes of a rank 3 or 4 tensor)");
  }
  int channel = x.perm.back();  // stays last when unstrided: no layout change
  if (stride[static_cast<size_t>(channel)] > 1) {
    for (size_t a = r; a-- > 0;) {
      if (static_cast<int>(a) != batch && stride[a] == 1) channel = static_cast<int>(a);
    }
  }
  Perm perm{batch};
  for (int a : x.perm) {
    if (a != batch && a != channel) perm.push_back(a);
  }
  perm.push_back(channel);
  return perm;
}

// Keeps every stride[a]-th element along each ONNX axis a of `x` (output 0 of `node`, replaced).
void subsample(Importer& im, const Node_& node, Symbol& x, const std::vector<int64_t>& stride) {
  const Perm perm = subsample_layout(im, x, stride);
  const ValueId in = im.in_layout(x, perm);
  PoolParams p;
  p.kind = PoolKind::kMax;
  p.rank = static_cast<int>(perm.size()) - 2;
  if (p.rank == 2) {
    p.window.stride_h = stride[static_cast<size_t>(perm[1])];
    p.window.stride_w = stride[static_cast<size_t>(perm[2])];
  } else {
    p.window.stride_w = stride[static_cast<size_t>(perm[1])];
  }
  im.emit(node, 0, p, {in}, perm);
}

void lower_slice(Importer& im, const Node_& node, Attributes& a) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (a.has("starts")) {  // opset < 10
    starts = *a.ints("starts");
    ends = a.ints("ends").value_or(std::vector<int64_t>{});
    axes = a.ints("axes").value_or(std::vector<int64_t>{});
  } else {
    starts = im.const_input(node, 1, "starts").as_ints(im.context() + ": starts");
    ends = im.const_input(node, 2, "ends").as_ints(im.context() + ": ends");
    if (im.has_input(node, 3)) axes = im.const_input(node, 3, "axes").as_ints(im.context() + ": axes");
    if (im.has_input(node, 4)) steps = im.const_input(node, 4, "steps").as_ints(im.context() + ": steps");
  }
  Symbol* input = &im.input(node, 0);
  if (input->is_const()) {
    im.set_constant(node, 0, fold_slice(*input->constant, starts, ends, axes, steps, im.context()));
    return;
  }
  // Steps subsample in a pooling layout of rank 3-4 with the batch on an ONNX axis: the single
  // sample as a whole gets one back (Swin's patch merging x[:, 0::2, 0::2, :] after attention).
  Symbol restored;
  if (input->batch_outside() && std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s != 1; })) {
    restored = im.batch_on_unit_axis(*input);
    input = &restored;
  }
  Symbol& x = *input;
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  }
  if (starts.size() != ends.size() || axes.size() != starts.size()) im.fail("starts, ends and axes differ in length");
  if (!steps.empty() && steps.size() != starts.size()) im.fail("steps and starts differ in length");
  const size_t r = x.rank();
  std::vector<int64_t> crop_begin(r, 0), crop_end(r, 0), stride(r, 1);
  struct Picked {
    int64_t start = 0, step = 1, count = 0;  // count 0: the axis is not sliced
  };
  std::vector<Picked> picked(r);  // the indices each axis keeps
  bool backward = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t ax = im.onnx_axis(x, axes[k]);
    const int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) im.fail("a step of 0");
    if (ax == x.perm[0]) {
      // Exporters slice the batch axis whole: [0, INT_MAX), or [0, b) when the file fixes the
      // batch to b. Anything else depends on the batch.
      // tf2onnx writes INT32_MAX as the open end, torch INT64_MAX.
      const int64_t whole = im.declared_batch() > 0 ? im.declared_batch() : std::numeric_limits<int32_t>::max();
      if (starts[k] == 0 && ends[k] >= whole && step == 1) continue;
      im.fail(ErrorCode::kUnsupported, "slicing the batch axis (start " + std::to_string(starts[k]) + ", end " +
                                           std::to_string(ends[k]) + ", step " + std::to_string(step) +
                                           ") is not supported: only a slice that keeps all of it is");
    }
    const int64_t dim = x.dims[static_cast<size_t>(ax)];
    // ONNX: negative starts and ends count from the end, then both are clamped, to [0, dim]
    // going forward and to [0, dim - 1] / [-1, dim - 1] going backward.
    int64_t st = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t en = ends[k] < 0 && ends[k] > std::numeric_limits<int64_t>::min() / 2 ? ends[k] + dim : ends[k];
    st = step > 0 ? std::clamp<int64_t>(st, 0, dim) : std::clamp<int64_t>(st, 0, dim - 1);
    en = step > 0 ? std::clamp<int64_t>(en, 0, dim) : std::clamp<int64_t>(en, -1, dim - 1);
    if (step > 0 ? en <= st : en >= st) im.fail("the slice of axis " + std::to_string(ax) + " is empty");
    const int64_t kept = step > 0 ? (en - st - 1) / step + 1 : (st - en - 1) / -step + 1;
    picked[static_cast<size_t>(ax)] = {st, step, kept};
    if (step < 0) {
      backward = true;
      continue;
    }
    // A step keeps elements st, st + step, ...: crop to the last kept one, then subsample.
    crop_begin[static_cast<size_t>(ax)] = st;
    crop_end[static_cast<size_t>(ax)] = dim - (st + (kept - 1) * step + 1);
    stride[static_cast<size_t>(ax)] = kept > 1 ? step : 1;
  }
  if (backward) {
    // Backward (torch.flip, x[:, ::-1]): one IR Gather per sliced axis, in x's layout.
    Steps gathers;
    Symbol result = x;
    for (size_t a = 0; a < r; ++a) {
      const Picked& p = picked[a];
      if (static_cast<int>(a) == x.perm[0] || p.count == 0 || (p.step == 1 && p.count == x.dims[a])) continue;  // not sliced, or whole
      if (p.count > kMaxMadeUpParameters) im.fail("a slice of " + std::to_string(p.count) + " elements is too long");
      std::vector<int64_t> indices;
      for (int64_t i = 0; i < p.count; ++i) indices.push_back(p.start + i * p.step);
      result.dims[a] = p.count;
      gathers.emplace_back("axis" + std::to_string(a), GatherParams{im.ir_axis(x, static_cast<int64_t>(a)) - 1, std::move(indices)});
    }
    emit_steps(im, node, 0, result, x.value, std::move(gathers));
    return;
  }
  if (std::all_of(stride.begin(), stride.end(), [](int64_t s) { return s == 1; })) {
    emit_crop(im, node, 0, x, crop_begin, crop_end);
    return;
  }
  // Crop in the pool's layout, where the strided (spatial) axes are cropped without a view.
  Symbol moved = x;
  moved.perm = subsample_layout(im, x, stride);
  moved.value = im.in_layout(x, moved.perm);
  emit_crop(im, node, 0, moved, crop_begin, crop_end);
  subsample(im, node, im.tensor(node.output(0)), stride);
}

// The lengths Split gives its outputs along an axis of length `dim`: the `split` attribute
// (opset < 13) or input (opset >= 13), else `num_outputs` (opset 18, the last part may be
// smaller), else equal parts, one per output.
std::vector<int64_t> split_lengths(Importer& im, const Node_& node, Attributes& a, int64_t dim) {
  const int64_t n = node.output_size();
  const int64_t num_outputs = a.i("num_outputs", 0);
  if (num_outputs && num_outputs != n) {
    im.fail("num_outputs " + std::to_string(num_outputs) + " does not match the " + std::to_string(n) + " outputs");
  }
  std::vector<int64_t> lengths;
  if (auto s = ints_from(im, node, a, "split", 1)) {
    lengths = *s;
  } else if (num_outputs) {
    const int64_t part = (dim + n - 1) / n;
    lengths.assign(static_cast<size_t>(n), part);
    lengths.back() = dim - part * (n - 1);
  } else {
    if (dim % n) im.fail("an axis of " + std::to_string(dim) + " does not split into " + std::to_string(n) + " equal parts");
    lengths.assign(static_cast<size_t>(n), dim / n);
  }
  if (static_cast<int64_t>(lengths.size()) != n) {
    im.fail("split " + list_text(lengths) + " does not give one length to each of the " + std::to_string(n) + " outputs");
  }
  int64_t total = 0;
  for (int64_t len : lengths) {
    if (len < 1) im.fail("split " + list_text(lengths) + " for an axis of " + std::to_string(dim) + " has an empty part");
  }
  for (int64_t len : lengths) {
    if (len > dim - total) im.fail("split " + list_text(lengths) + " does not add up to the axis length " + std::to_string(dim));
    total += len;
  }
  if (total != dim) im.fail("split " + list_text(lengths) + " does not add up to the axis length " + std::to_string(dim));
  return lengths;
}

// Each output of Split is a crop of the input along the axis (folded on constants).
void lower_split(Importer& im, const Node_& node, Attributes& a) {
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> dims = x.is_const() ? x.constant->dims : x.dims;
  const int64_t axis_attr = a.i("axis", 0);
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  if (axis < 0 || axis >= r) im.fail("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(r));
  if (!x.is_const() && axis == x.perm[0]) im.fail(ErrorCode::kUnsupported, "splitting the batch axis is not supported");
  const int64_t dim = dims[static_cast<size_t>(axis)];
  const std::vector<int64_t> lengths = split_lengths(im, node, a, dim);
  int64_t offset = 0;
  for (int k = 0; k < node.output_size(); ++k) {
    const int64_t len = lengths[static_cast<size_t>(k)];
    if (!node.output(k).empty()) {
      if (x.is_const()) {
        im.set_constant(node, k, fold_slice(*x.constant, {offset}, {offset + len}, {axis}, {1}, im.context()));
      } else {
        std::vector<int64_t> begin(dims.size(), 0), end(dims.size(), 0);
        begin[static_cast<size_t>(axis)] = offset;
        end[static_cast<size_t>(axis)] = dim - offset - len;
        emit_crop(im, node, k, x, begin, end);
      }
    }
    offset += len;
  }
}

void lower_expand(Importer& im, const Node_& node, Attributes&) {
  Symbol& x = im.input(node, 0);
  const std::vector<int64_t> shape = im.const_input(node, 1, "shape").as_ints(im.context() + ": shape");
  std::vector<int64_t> want = shape;
  bool over_batch = false;
  for (auto& d : want) {
    if (d == kBatchMarker) d = 1, over_batch = true;
  }
  if (x.is_const()) {
    // PyTorch's initial RNN state with the batch fixed in the file: zeros expanded to [1, N, H].
    // Over the batch the values repeat: length 1 there, exact for readers that broadcast (as
    // ConstantOfShape over the batch size).
    Constant ones;
    ones.is_int = true;
    ones.dims = want;
    check_fold_size(ones.dims, im.context());
    ones.ints.assign(static_cast<size_t>(ones.size()), 1);
    Constant c = fold_where(ones, *x.constant, *x.constant, im.context());
    c.batch_broadcast = x.constant->batch_broadcast || over_batch;
    im.set_constant(node, 0, std::move(c));
    return;
  }
  std::vector<int64_t> have = x.dims;
  have[0] = 1;
  const std::vector<int64_t> out = broadcast_dims(have, want, im.context());
  if (out == have) {
    im.alias(node, 0, x, x.perm);
    return;
  }
  // Repeating axes of length 1 is a nearest-neighbour UpSampling of those axes over a layout whose
  // last axis is one that stays (the latest such axis in x's layout, to move the least data).
  const size_t r = x.rank();
  if (out.size() != r || out[0] != 1 || (r != 3 && r != 4)) {
    im.fail(ErrorCode::kUnsupported, "Expand to " + list_text(shape) + " copies data; only repeats of up to " + std::to_string(r - 2) +
            " non-batch axes of a rank 3 or 4 tensor are supported");
  }
  int channel = -1;
  for (size_t j = r; j-- > 1 && channel < 0;) {
    if (out[static_cast<size_t>(x.perm[j])] == have[static_cast<size_t>(x.perm[j])]) channel = x.perm[j];
  }
  if (channel < 0) im.fail(ErrorCode::kUnsupported, "Expand to " + list_text(shape) + " repeats every non-batch axis; not supported");
  Perm perm{0};
  for (int ax : x.perm) {
    if (ax != 0 && ax != channel) perm.push_back(ax);
  }
  perm.push_back(channel);
  UpSamplingParams p;
  p.rank = static_cast<int>(r) - 2;
  p.interpolation = Interpolation::kNearest;
  p.size_w = out[static_cast<size_t>(perm[r - 2])] / have[static_cast<size_t>(perm[r - 2])];
  if (p.rank == 2) p.size_h = out[static_cast<size_t>(perm[1])] / have[static_cast<size_t>(perm[1])];
  im.emit(node, 0, p, {im.in_layout(x, perm)}, perm);
}

}  // namespace

void add_shape_lowerings(LoweringTable& t) {
  t.add("Concat", lower_concat);
  t.add("Expand", lower_expand);
  t.add("Flatten", lower_flatten);
  t.add("Gather", lower_gather);
  t.add("Reshape", lower_reshape);
  t.add("Slice", lower_slice);
  t.add("Split", lower_split);
  t.add("Squeeze", lower_squeeze);
  t.add("Transpose", lower_transpose);
  t.add("Unsqueeze", lower_unsqueeze);
}

}  // namespace nnd::onnx_import
