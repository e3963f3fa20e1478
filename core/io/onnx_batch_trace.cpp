#include "core/io/onnx_batch_trace.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "core/io/onnx_import.h"
#include "core/io/onnx_ops.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

using Node_ = onnx::NodeProto;

[[noreturn]] void refuse(const Importer& im, const std::string& why) {
  throw BatchTraceRefusal(ErrorCode::kUnsupported, im.context() + ": with its free batch read one sample at a time, " + why);
}

const onnx::AttributeProto* attr(const Node_& n, const char* name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t attr_i(const Node_& n, const char* name, int64_t fallback) {
  const auto* a = attr(n, name);
  return a ? a->i() : fallback;
}

bool has(const Node_& n, int k) { return k < n.input_size() && !n.input(k).empty(); }

const Symbol& sym(const Importer& im, const std::string& name) {
  const Symbol* s = im.symbol(name);
  if (!s) im.fail(ErrorCode::kInternal, "internal: tensor '" + name + "' has no symbol");
  return *s;
}

bool dynamic(const Importer& im, const Node_& n, int k) { return has(n, k) && !sym(im, n.input(k)).is_const(); }

// The ONNX dims as the batch-of-one reading has them.
std::vector<int64_t> dims_of(const Symbol& s) {
  std::vector<int64_t> d = s.is_const() ? s.constant->dims : s.dims;
  std::replace(d.begin(), d.end(), kBatchMarker, int64_t{1});
  return d;
}

// Integers of a constant input, the batch marker read as 1 (the batch-of-one value).
Constant as_one(const Constant& c) {
  Constant k = c;
  if (k.is_int) std::replace(k.ints.begin(), k.ints.end(), kBatchMarker, int64_t{1});
  return k;
}

// A list attribute, else the constant input `k` (the opset moved axes, pads, splits to inputs).
std::optional<std::vector<int64_t>> ints_of(const Importer& im, const Node_& n, const char* name, int k) {
  if (const auto* a = attr(n, name)) return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  if (!has(n, k)) return std::nullopt;
  const Symbol& s = sym(im, n.input(k));
  if (!s.is_const()) im.fail(ErrorCode::kUnsupported, std::string(name) + " must be a constant");
  return as_one(*s.constant).as_ints(im.context() + ": " + name);
}

int64_t product(const std::vector<int64_t>& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to && k < d.size(); ++k) p *= d[k];
  return p;
}

int64_t normal(const Importer& im, int64_t axis, size_t rank) {
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  if (a < 0 || a >= static_cast<int64_t>(rank)) im.fail("axis " + std::to_string(axis) + " is out of range");
  return a;
}

bool any(const Constant& flags) {
  return std::any_of(flags.ints.begin(), flags.ints.end(), [](int64_t v) { return v != 0; });
}

Constant zeros(const std::vector<int64_t>& dims) {
  Constant c;
  c.is_int = true;
  c.dims = dims;
  c.ints.assign(static_cast<size_t>(product(dims, 0, dims.size())), 0);
  return c;
}

const std::set<std::string> kUnary = {"Relu",     "Sigmoid",  "Tanh",      "LeakyRelu", "Elu",     "Selu",
                                      "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Gelu",    "Erf",
                                      "Exp",      "Log",      "Sqrt",      "Abs",       "Neg",     "Reciprocal",
                                      "Clip",     "Cast",     "Identity",  "Dropout",   "Floor",   "Ceil",
                                      "Mish",     "ThresholdedRelu", "Not", "Round",    "Sign"};
const std::set<std::string> kBroadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean",
                                          "Equal", "Where", "PRelu", "Mod"};
// Operators that read ONNX axis 0 as the batch and never combine two of its rows.
const std::set<std::string> kRowsApart = {"Conv",      "ConvTranspose",    "BatchNormalization", "AveragePool",
                                          "MaxPool",   "GlobalAveragePool", "GlobalMaxPool",     "QLinearConv",
                                          "ConvInteger", "Resize",         "Upsample",           "InstanceNormalization",
                                          "LRN"};
// Element-wise with per-tensor or per-axis parameters (a scale per channel of `axis`).
const std::set<std::string> kQuantize = {"QuantizeLinear", "DequantizeLinear"};

}  // namespace

void BatchTrace::input(const std::string& name, int axis) { pos_[name] = BatchPos{axis, 1}; }

bool BatchTrace::scaled(const std::string& name) const {
  auto it = scaled_.find(name);
  if (it == scaled_.end()) return false;
  const auto& rep = it->second.repeats_on;
  return any(it->second.times_n) || std::any_of(rep.begin(), rep.end(), [](bool b) { return b; });
}

Constant BatchTrace::times_n(const Importer& im, const std::string& name) const {
  if (auto it = scaled_.find(name); it != scaled_.end()) return it->second.times_n;
  // Not from the batch marker: a file may store that very number (INT64_MIN + 1 as the end of a
  // reversing Slice); only Shape and Size of computed tensors start a multiple of the batch size.
  return zeros(sym(im, name).constant->dims);
}

std::vector<bool> BatchTrace::repeats_on(const Importer& im, const std::string& name) const {
  if (auto it = scaled_.find(name); it != scaled_.end()) return it->second.repeats_on;
  return std::vector<bool>(sym(im, name).constant->dims.size(), false);
}

BatchPos BatchTrace::pos(const Importer& im, const std::string& name) const {
  auto it = pos_.find(name);
  if (it == pos_.end()) im.fail(ErrorCode::kInternal, "internal: no batch position for '" + name + "'");
  return it->second;
}

BatchPos BatchTrace::broadcast(const Importer& im, const std::vector<std::string>& inputs, size_t rank) const {
  std::optional<BatchPos> p;
  int64_t length = 0;
  std::string first;
  for (const std::string& name : inputs) {
    if (name.empty() || sym(im, name).is_const()) continue;
    BatchPos q = pos(im, name);
    const std::vector<int64_t> d = dims_of(sym(im, name));
    const int64_t l = d[static_cast<size_t>(q.axis)];
    q.axis += static_cast<int>(rank - d.size());
    if (!p) {
      p = q, length = l, first = name;
    } else if (q.axis != p->axis || q.inner != p->inner || l != length) {
      refuse(im, "operands '" + first + "' and '" + name + "' carry the batch on different axes or merged with different data");
    }
  }
  if (!p) im.fail(ErrorCode::kInternal, "internal: an element-wise node without a computed operand");
  for (const std::string& name : inputs) {
    if (name.empty() || !sym(im, name).is_const()) continue;
    const std::vector<int64_t> d = dims_of(sym(im, name));
    const int64_t axis = p->axis - static_cast<int64_t>(rank - d.size());
    if (axis < 0) continue;
    const int64_t l = d[static_cast<size_t>(axis)];
    if (l == 1 || (repeats_on(im, name)[static_cast<size_t>(axis)] && l == length)) continue;
    refuse(im, "the constant '" + name + "' has length " + std::to_string(l) + " on the axis where the other operand has " +
               std::to_string(length) + " times the batch size");
  }
  return *p;
}

void BatchTrace::node(const Importer& im, const Node_& node) {
  const std::string& op = node.op_type();
  if (op == "Shape" || op == "Size") {
    const Symbol& x = sym(im, node.input(0));
    if (x.is_const()) {
      const std::vector<bool> rep = repeats_on(im, node.input(0));
      if (std::find(rep.begin(), rep.end(), true) != rep.end()) {
        refuse(im, "the shape of a constant repeated over the batch depends on the batch size");
      }
      return;
    }
    const BatchPos p = pos(im, node.input(0));
    Scaled s;
    if (op == "Size") {
      s.times_n = zeros({});
      s.times_n.ints = {1};
    } else {
      const int64_t r = static_cast<int64_t>(x.rank());
      int64_t start = attr_i(node, "start", 0), end = attr_i(node, "end", r);
      if (start < 0) start += r;
      if (end < 0) end += r;
      start = std::clamp<int64_t>(start, 0, r);
      end = std::clamp<int64_t>(end, start, r);
      s.times_n = zeros({end - start});
      for (int64_t k = start; k < end; ++k) s.times_n.ints[static_cast<size_t>(k - start)] = k == p.axis;
    }
    s.repeats_on.assign(s.times_n.dims.size(), false);
    scaled_[node.output(0)] = std::move(s);
    return;
  }
  bool computed = false;
  for (int k = 0; k < node.input_size(); ++k) computed = computed || dynamic(im, node, k);
  if (computed) {
    dynamic_node(im, node);
  } else {
    constant_node(im, node);
  }
}

void BatchTrace::constant_node(const Importer& im, const Node_& node) {
  const std::string& op = node.op_type();
  bool depends = false;
  for (int k = 0; k < node.input_size(); ++k) {
    if (!has(node, k)) continue;
    const std::string& in = node.input(k);
    depends = depends || scaled(in) || any(times_n(im, in));
  }
  if (!depends) return;  // numbers that do not depend on the batch size
  for (int k = 1; k < node.output_size(); ++k) {
    if (!node.output(k).empty() && im.readers(node.output(k)) > 0) refuse(im, "'" + op + "' with several outputs is computed from the batch size");
  }
  const Symbol& out = sym(im, node.output(0));
  if (!out.is_const()) refuse(im, "'" + op + "' turns numbers computed from the batch size into a tensor");
  const std::vector<int64_t> out_dims = out.constant->dims;
  const std::string ctx = im.context();
  auto flags = [&](int k) { return times_n(im, node.input(k)); };
  auto values = [&](int k) { return as_one(*sym(im, node.input(k)).constant); };
  auto only_first = [&](int first_param) {
    for (int k = first_param; k < node.input_size(); ++k) {
      if (has(node, k) && (any(flags(k)) || scaled(node.input(k)))) refuse(im, "'" + op + "' takes a parameter computed from the batch size");
    }
  };
  Scaled r;
  r.repeats_on.assign(out_dims.size(), false);
  const bool repeated = [&] {
    const auto rep = repeats_on(im, node.input(0));
    return std::any_of(rep.begin(), rep.end(), [](bool b) { return b; });
  }();
  if (op == "Identity" || op == "Cast" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten") {
    only_first(1);
    if (repeated && op != "Identity" && op != "Cast") refuse(im, "'" + op + "' of a constant repeated over the batch is not followed");
    r.times_n = flags(0);
    r.times_n.dims = out_dims;
    if (repeated) r.repeats_on = repeats_on(im, node.input(0));
    if (op == "Cast" && out.constant->is_int) {
      const Constant& in = *sym(im, node.input(0)).constant;
      for (size_t i = 0; !in.is_int && i < r.times_n.ints.size(); ++i) {
        if (r.times_n.ints[i] && in.reals[i] != std::floor(in.reals[i])) {
          refuse(im, "a fraction of the batch size is cast to an integer");
        }
      }
    }
  } else if (repeated) {
    refuse(im, "'" + op + "' of a constant repeated over the batch is not followed");
  } else if (op == "Gather") {
    only_first(1);
    r.times_n = fold_gather(flags(0), values(1), attr_i(node, "axis", 0), ctx);
  } else if (op == "Slice") {
    only_first(1);
    std::vector<int64_t> starts, ends, axes, steps;
    if (attr(node, "starts")) {
      starts = *ints_of(im, node, "starts", 99);
      ends = *ints_of(im, node, "ends", 99);
      axes = ints_of(im, node, "axes", 99).value_or(std::vector<int64_t>{});
    } else {
      starts = values(1).as_ints(ctx);
      ends = values(2).as_ints(ctx);
      if (has(node, 3)) axes = values(3).as_ints(ctx);
      if (has(node, 4)) steps = values(4).as_ints(ctx);
    }
    r.times_n = fold_slice(flags(0), starts, ends, axes, steps, ctx);
  } else if (op == "Concat") {
    std::vector<Constant> parts;
    for (int k = 0; k < node.input_size(); ++k) parts.push_back(flags(k));
    std::vector<const Constant*> ptrs;
    for (const Constant& c : parts) ptrs.push_back(&c);
    r.times_n = fold_concat(ptrs, attr_i(node, "axis", 0), ctx);
  } else if (op == "Transpose") {
    const auto* p = attr(node, "perm");
    r.times_n = fold_transpose(flags(0), p ? std::vector<int64_t>(p->ints().begin(), p->ints().end()) : std::vector<int64_t>{}, ctx);
  } else if (op == "Mul") {
    r.times_n = fold_binary(ConstOp::kAdd, flags(0), flags(1), ctx);
    if (std::any_of(r.times_n.ints.begin(), r.times_n.ints.end(), [](int64_t v) { return v > 1; })) {
      refuse(im, "the batch size is multiplied by itself");
    }
  } else if (op == "Add" || op == "Sub" || op == "Max" || op == "Min" || op == "Sum") {
    if (node.input_size() != 2) refuse(im, "'" + op + "' of more than two numbers computed from the batch size is not followed");
    if (any(fold_binary(ConstOp::kSub, flags(0), flags(1), ctx))) {
      refuse(im, "'" + op + "' of a multiple of the batch size and a number that is not one depends on the batch size");
    }
    r.times_n = fold_binary(ConstOp::kMax, flags(0), flags(1), ctx);
  } else if (op == "Div") {
    const Constant d = fold_binary(ConstOp::kSub, flags(0), flags(1), ctx);
    if (std::any_of(d.ints.begin(), d.ints.end(), [](int64_t v) { return v < 0; })) refuse(im, "a number is divided by the batch size");
    const Constant x = values(0), y = values(1);
    if (x.is_int && y.is_int) {
      // c * N / k is (c / k) * N for every N only when k divides c.
      const Constant rest = fold_binary(ConstOp::kFmod, x, y, ctx);
      for (size_t i = 0; i < d.ints.size(); ++i) {
        if (d.ints[i] && rest.ints[rest.ints.size() == 1 ? 0 : i] != 0) {
          refuse(im, "a multiple of the batch size is divided by a number that does not divide it evenly");
        }
      }
    }
    r.times_n = d;
  } else if (op == "Equal") {
    // c * N equals c' * N for every N when c equals c'; a multiple of the batch size (at least N)
    // equals no number below 1 (PyTorch's Expand compares shapes with -1).
    const Constant d = fold_binary(ConstOp::kSub, flags(0), flags(1), ctx);
    const Constant x = values(0), y = values(1);
    const auto at = [](const Constant& c, size_t i) { return c.ints[c.ints.size() == 1 ? 0 : i]; };
    for (size_t i = 0; i < d.ints.size(); ++i) {
      if (!d.ints[i]) continue;
      const int64_t plain = d.ints[i] > 0 ? at(y, i) : at(x, i);
      if (!x.is_int || !y.is_int || plain >= 1) refuse(im, "comparing a multiple of the batch size with a number depends on the batch size");
    }
    r.times_n = zeros(out_dims);
  } else if (op == "Where") {
    if (any(flags(0))) refuse(im, "'Where' chooses by a condition on the batch size");
    r.times_n = fold_where(values(0), flags(1), flags(2), ctx);
  } else if (op == "ConstantOfShape" || op == "Expand") {
    // Values repeated over a shape that holds the batch size: the result has length c * N on
    // that axis and the same values all along it.
    const int shape_input = op == "Expand" ? 1 : 0;
    if (op == "Expand" && any(flags(0))) refuse(im, "numbers computed from the batch size are expanded");
    const Constant f = flags(shape_input);
    r.times_n = zeros(out_dims);
    for (size_t k = 0; k < f.ints.size(); ++k) r.repeats_on[out_dims.size() - f.ints.size() + k] = f.ints[k] != 0;
  } else {
    refuse(im, "'" + op + "' is computed from the batch size");
  }
  if (r.times_n.dims != out_dims || r.times_n.ints.size() != static_cast<size_t>(product(out_dims, 0, out_dims.size()))) {
    im.fail(ErrorCode::kInternal, "internal: the batch flags of '" + node.output(0) + "' do not match its shape");
  }
  scaled_[node.output(0)] = std::move(r);
  if (!scaled(node.output(0))) scaled_.erase(node.output(0));
}

void BatchTrace::dynamic_node(const Importer& im, const Node_& node) {
  const std::string& op = node.op_type();
  const std::string& out0 = node.output(0);
  const auto set_all = [&](BatchPos p) {
    for (const auto& o : node.output()) {
      if (!o.empty()) pos_[o] = p;
    }
  };
  const auto params_plain = [&](int first) {
    for (int k = first; k < node.input_size(); ++k) {
      if (!has(node, k)) continue;
      if (dynamic(im, node, k)) refuse(im, "input " + std::to_string(k) + " of '" + op + "' is computed from the model input");
      if (scaled(node.input(k)) || any(times_n(im, node.input(k)))) {
        refuse(im, "input " + std::to_string(k) + " of '" + op + "' is computed from the batch size");
      }
    }
  };
  // Numbers computed from the batch size are shapes, read where a shape is read (followed below);
  // anywhere else (added to a tensor, a pad width, a table) they would differ per batch size.
  for (int k = 0; k < node.input_size(); ++k) {
    if (!has(node, k) || dynamic(im, node, k) || !any(times_n(im, node.input(k)))) continue;
    const bool shape = ((op == "Reshape" || op == "Expand") && k == 1) || (op == "Slice" && k == 2) ||
                       ((op == "Resize" || op == "Upsample") && k == node.input_size() - 1);
    if (!shape) refuse(im, "input " + std::to_string(k) + " ('" + node.input(k) + "') of '" + op + "' is computed from the batch size");
  }
  const Symbol& x0 = sym(im, node.input(0));
  const std::vector<int64_t> d0 = dims_of(x0);
  const size_t r0 = d0.size();
  const auto out_rank = [&]() { return dims_of(sym(im, out0)).size(); };
  const auto first_dynamic = [&]() -> BatchPos {
    if (x0.is_const()) refuse(im, "'" + op + "' with a constant first input and a computed one is not followed");
    return pos(im, node.input(0));
  };

  if (kUnary.count(op)) {
    params_plain(1);
    set_all(first_dynamic());
  } else if (kQuantize.count(op)) {
    const BatchPos p = first_dynamic();
    params_plain(1);
    const std::vector<int64_t> scale = dims_of(sym(im, node.input(1)));
    if (!scale.empty() && scale[0] > 1 && normal(im, attr_i(node, "axis", 1), r0) == p.axis) {
      refuse(im, op + " has a scale per element of the axis that carries the batch");
    }
    pos_[out0] = p;
  } else if (kBroadcast.count(op)) {
    std::vector<std::string> ins(node.input().begin(), node.input().end());
    set_all(broadcast(im, ins, out_rank()));
  } else if (kRowsApart.count(op)) {
    const BatchPos p = first_dynamic();
    if (p.axis != 0) refuse(im, "'" + op + "' reads axis 0 as the batch, which here is axis " + std::to_string(p.axis));
    if (op == "Resize" || op == "Upsample") {
      for (int k = 1; k < node.input_size(); ++k) {
        if (dynamic(im, node, k)) refuse(im, "a computed Resize parameter is not followed");
        const Constant f = has(node, k) ? times_n(im, node.input(k)) : Constant{};
        for (size_t i = 1; i < f.ints.size(); ++i) {  // sizes [N, C, H, W]: the batch size only as N
          if (f.ints[i]) refuse(im, "the Resize sizes hold the batch size on axis " + std::to_string(i));
        }
      }
    } else {
      params_plain(1);
    }
    pos_[out0] = p;
  } else if (op == "Transpose") {
    const BatchPos p = first_dynamic();
    std::vector<int64_t> perm;
    if (const auto* a = attr(node, "perm")) perm.assign(a->ints().begin(), a->ints().end());
    for (size_t k = 0; perm.empty() && k < r0; ++k) perm.push_back(static_cast<int64_t>(r0 - 1 - k));
    const auto it = std::find(perm.begin(), perm.end(), p.axis);
    if (it == perm.end()) im.fail("perm does not name every axis");
    pos_[out0] = BatchPos{static_cast<int>(it - perm.begin()), p.inner};
  } else if (op == "Reshape") {
    const BatchPos p = first_dynamic();
    if (!has(node, 1)) refuse(im, "a Reshape without a shape input is not followed");
    if (dynamic(im, node, 1)) refuse(im, "a computed target shape is not followed");
    const Constant target = *sym(im, node.input(1)).constant;
    const Constant flags = times_n(im, node.input(1));
    const bool allowzero = attr_i(node, "allowzero", 0) != 0;
    const std::vector<int64_t> out = dims_of(sym(im, out0));
    std::vector<int> batch_axes;
    int unknown = -1;
    for (size_t k = 0; k < target.ints.size(); ++k) {
      const int64_t t = target.ints[k];
      if (flags.ints[k] || (t == 0 && !allowzero && static_cast<int>(k) == p.axis)) batch_axes.push_back(static_cast<int>(k));
      if (t == -1) unknown = static_cast<int>(k);
    }
    if (batch_axes.empty() && unknown >= 0) batch_axes.push_back(unknown);
    if (batch_axes.empty()) {
      refuse(im, "the Reshape to the fixed shape " + list_text(target.ints) + " has no room for a batch other than 1");
    }
    if (batch_axes.size() > 1) refuse(im, "the target shape " + list_text(target.ints) + " holds the batch size on more than one axis");
    const int b = batch_axes[0];
    // The batch's stride in the flattened tensor must be the one of a whole part of axis b.
    const int64_t stride = p.inner * product(d0, static_cast<size_t>(p.axis) + 1, r0);
    const int64_t below = product(out, static_cast<size_t>(b) + 1, out.size());
    if (stride % below != 0 || out[static_cast<size_t>(b)] % (stride / below) != 0) {
      refuse(im, "the Reshape of " + list_text(d0) + " (batch on axis " + std::to_string(p.axis) + ") to " + list_text(target.ints) +
                 " moves data across samples");
    }
    pos_[out0] = BatchPos{b, stride / below};
  } else if (op == "Flatten") {
    const BatchPos p = first_dynamic();
    const int64_t axis = normal(im, attr_i(node, "axis", 1), r0 + 1);
    if (p.axis < axis) pos_[out0] = BatchPos{0, p.inner * product(d0, static_cast<size_t>(p.axis) + 1, static_cast<size_t>(axis))};
    else pos_[out0] = BatchPos{1, p.inner * product(d0, static_cast<size_t>(p.axis) + 1, r0)};
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    const BatchPos p = first_dynamic();
    params_plain(1);
    std::vector<int64_t> axes = ints_of(im, node, "axes", 1).value_or(std::vector<int64_t>{});
    const size_t ro = out_rank();
    int axis = p.axis;
    if (op == "Squeeze") {
      if (axes.empty()) {  // every axis of length 1
        for (size_t k = 0; k < r0; ++k) {
          if (d0[k] == 1) axes.push_back(static_cast<int64_t>(k));
        }
      }
      int shift = 0;
      for (int64_t& a : axes) {
        a = normal(im, a, r0);
        if (a == p.axis) refuse(im, "Squeeze removes the axis that carries the batch");
        if (a < p.axis) ++shift;
      }
      axis -= shift;
    } else {
      for (int64_t& a : axes) a = normal(im, a, ro);
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) {
        if (a <= axis) ++axis;
      }
    }
    pos_[out0] = BatchPos{axis, p.inner};
  } else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    const BatchPos p = first_dynamic();
    const int64_t axis = normal(im, attr_i(node, "axis", im.opset() >= 13 ? -1 : 1), r0);
    if (im.opset() >= 13 ? axis == p.axis : axis <= p.axis) refuse(im, op + " runs over the axis that carries the batch");
    pos_[out0] = p;
  } else if (op == "LayerNormalization") {
    const BatchPos p = first_dynamic();
    params_plain(1);
    if (normal(im, attr_i(node, "axis", -1), r0) <= p.axis) refuse(im, "LayerNormalization runs over the axis that carries the batch");
    set_all(p);
  } else if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    const BatchPos p = first_dynamic();
    params_plain(1);
    std::vector<int64_t> axes;
    if (op == "ArgMax" || op == "ArgMin") axes = {attr_i(node, "axis", 0)};
    else axes = ints_of(im, node, "axes", 1).value_or(std::vector<int64_t>{});
    if (axes.empty() && attr_i(node, "noop_with_empty_axes", 0) == 0) refuse(im, op + " over every axis combines the samples");
    int shift = 0;
    for (int64_t a : axes) {
      const int64_t n = normal(im, a, r0);
      if (n == p.axis) refuse(im, op + " runs over the axis that carries the batch");
      if (n < p.axis) ++shift;
    }
    pos_[out0] = BatchPos{attr_i(node, "keepdims", 1) ? p.axis : p.axis - shift, p.inner};
  } else if (op == "Slice") {
    const BatchPos p = first_dynamic();
    std::vector<int64_t> starts, ends, axes, steps;
    Constant end_flags;
    if (attr(node, "starts")) {
      starts = *ints_of(im, node, "starts", 99);
      ends = *ints_of(im, node, "ends", 99);
      axes = ints_of(im, node, "axes", 99).value_or(std::vector<int64_t>{});
    } else {
      for (int k : {1, 3, 4}) {
        if (has(node, k) && (dynamic(im, node, k) || any(times_n(im, node.input(k))))) refuse(im, "a Slice parameter is computed from the batch size");
      }
      if (dynamic(im, node, 2)) refuse(im, "a computed Slice end is not followed");
      starts = as_one(*sym(im, node.input(1)).constant).as_ints(im.context());
      ends = as_one(*sym(im, node.input(2)).constant).as_ints(im.context());
      end_flags = times_n(im, node.input(2));
      if (has(node, 3)) axes = *ints_of(im, node, "axes", 3);
      if (has(node, 4)) steps = *ints_of(im, node, "steps", 4);
    }
    for (size_t k = 0; k < starts.size(); ++k) {
      const int64_t a = normal(im, axes.empty() ? static_cast<int64_t>(k) : axes[k], r0);
      const bool end_scaled = k < end_flags.ints.size() && end_flags.ints[k];
      if (a != p.axis) {
        if (end_scaled) refuse(im, "a Slice end computed from the batch size is used on another axis");
        continue;
      }
      const int64_t step = steps.empty() ? 1 : steps[k];
      const bool whole = starts[k] == 0 && step == 1 && (ends[k] >= std::numeric_limits<int32_t>::max() || (end_scaled && ends[k] >= d0[static_cast<size_t>(a)]));
      if (!whole) refuse(im, "the Slice cuts the axis that carries the batch");
    }
    pos_[out0] = p;
  } else if (op == "Split") {
    const BatchPos p = first_dynamic();
    params_plain(1);
    if (normal(im, attr_i(node, "axis", 0), r0) == p.axis) refuse(im, "Split cuts the axis that carries the batch");
    set_all(p);
  } else if (op == "Gather") {
    const int64_t axis = normal(im, attr_i(node, "axis", 0), r0);
    if (dynamic(im, node, 0)) {
      const BatchPos p = pos(im, node.input(0));
      params_plain(1);
      if (axis == p.axis) refuse(im, "Gather picks along the axis that carries the batch");
      const int64_t idx_rank = static_cast<int64_t>(dims_of(sym(im, node.input(1))).size());
      pos_[out0] = BatchPos{static_cast<int>(p.axis < axis ? p.axis : p.axis + idx_rank - 1), p.inner};
    } else {  // a table looked up by computed indices (embeddings)
      if (scaled(node.input(0))) refuse(im, "a table computed from the batch size is looked up");
      const BatchPos q = pos(im, node.input(1));
      pos_[out0] = BatchPos{static_cast<int>(axis + q.axis), q.inner};
    }
  } else if (op == "Concat") {
    const size_t rank = out_rank();
    const int64_t axis = normal(im, attr_i(node, "axis", 0), rank);
    std::vector<std::string> ins(node.input().begin(), node.input().end());
    const BatchPos p = broadcast(im, ins, rank);
    if (axis == p.axis) refuse(im, "Concat joins along the axis that carries the batch");
    for (const std::string& in : ins) {  // Concat does not broadcast: a constant needs the whole batch length
      if (in.empty() || !sym(im, in).is_const()) continue;
      if (!repeats_on(im, in)[static_cast<size_t>(p.axis)]) {
        refuse(im, "the constant '" + in + "' is joined to a tensor of any batch size with a length fixed in the file");
      }
    }
    pos_[out0] = p;
  } else if (op == "Pad") {
    const BatchPos p = first_dynamic();
    const auto pads = ints_of(im, node, "pads", 1);
    if (has(node, 3)) refuse(im, "Pad with an axes input is not followed");
    if (pads && pads->size() == 2 * r0 && ((*pads)[static_cast<size_t>(p.axis)] != 0 || (*pads)[static_cast<size_t>(p.axis) + r0] != 0)) {
      refuse(im, "Pad pads the axis that carries the batch");
    }
    pos_[out0] = p;
  } else if (op == "Expand") {
    const BatchPos p = first_dynamic();
    if (dynamic(im, node, 1)) refuse(im, "a computed Expand shape is not followed");
    const size_t rank = out_rank();
    const int axis = p.axis + static_cast<int>(rank - r0);
    const Constant flags = times_n(im, node.input(1));
    const std::vector<int64_t> shape = as_one(*sym(im, node.input(1)).constant).as_ints(im.context());
    const int64_t at = axis - static_cast<int64_t>(rank - shape.size());
    if (at >= 0 && shape[static_cast<size_t>(at)] != 1 && !(flags.ints[static_cast<size_t>(at)] && shape[static_cast<size_t>(at)] == d0[static_cast<size_t>(p.axis)])) {
      refuse(im, "Expand repeats the axis that carries the batch");
    }
    for (size_t k = 0; k < flags.ints.size(); ++k) {
      if (flags.ints[k] && static_cast<int64_t>(k) != at) refuse(im, "Expand repeats another axis by the batch size");
    }
    pos_[out0] = BatchPos{axis, p.inner};
  } else if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const int ia = 0, ib = op == "QLinearMatMul" ? 3 : 1;
    for (int k = 0; k < node.input_size(); ++k) {
      if (k != ia && k != ib && dynamic(im, node, k)) refuse(im, "a computed quantization parameter is not followed");
    }
    const std::vector<int64_t> da = dims_of(sym(im, node.input(ia))), db = dims_of(sym(im, node.input(ib)));
    if (da.size() < 2 || db.size() < 2) refuse(im, "a MatMul with a vector operand is not followed");
    const size_t rank = std::max(da.size(), db.size());
    enum Role { kStack, kRows, kInner, kCols };
    struct Side {
      bool computed;
      Role role;
      int axis;  // aligned to the result's rank
      BatchPos p;
      int64_t length;
    };
    const auto side = [&](int k, const std::vector<int64_t>& d, bool is_a) {
      Side s{dynamic(im, node, k), kStack, 0, {}, 0};
      if (!s.computed) return s;
      s.p = pos(im, node.input(k));
      s.length = d[static_cast<size_t>(s.p.axis)];
      const int r = static_cast<int>(d.size());
      s.role = s.p.axis < r - 2 ? kStack : s.p.axis == r - 2 ? (is_a ? kRows : kInner) : (is_a ? kInner : kCols);
      s.axis = s.p.axis + static_cast<int>(rank - d.size());
      return s;
    };
    const Side a = side(ia, da, true), b = side(ib, db, false);
    const auto stack_ok = [&](const Side& s, const std::vector<int64_t>& other) {
      const int64_t at = s.axis - static_cast<int64_t>(rank - other.size());
      return at < 0 || other[static_cast<size_t>(at)] == 1;
    };
    if (a.computed && b.computed) {
      if (a.role != kStack || b.role != kStack || a.axis != b.axis || a.p.inner != b.p.inner || a.length != b.length) {
        refuse(im, "the MatMul multiplies the samples of the batch with each other");
      }
      pos_[out0] = BatchPos{a.axis, a.p.inner};
    } else {
      const Side& s = a.computed ? a : b;
      const std::vector<int64_t>& other = a.computed ? db : da;
      if (s.role == kInner) refuse(im, "the MatMul sums over the axis that carries the batch");
      if (s.role == kStack && !stack_ok(s, other)) refuse(im, "the constant operand has a stack length fixed in the file where the other has the batch");
      pos_[out0] = BatchPos{s.role == kStack ? s.axis : s.role == kRows ? static_cast<int>(rank) - 2 : static_cast<int>(rank) - 1, s.p.inner};
    }
  } else if (op == "Gemm") {
    const BatchPos p = first_dynamic();
    if (dynamic(im, node, 1) || dynamic(im, node, 2)) refuse(im, "a Gemm with a computed B or C is not followed");
    if (p.axis != (attr_i(node, "transA", 0) ? 1 : 0)) refuse(im, "the Gemm sums over the axis that carries the batch");
    if (has(node, 2)) {
      const std::vector<int64_t> dc = dims_of(sym(im, node.input(2)));
      if (dc.size() == 2 && dc[0] != 1) refuse(im, "the Gemm's C has rows fixed in the file where A has the batch");
    }
    pos_[out0] = BatchPos{0, p.inner};
  } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
    const bool batch_major = attr_i(node, "layout", 0) != 0;
    const BatchPos p = first_dynamic();
    if (p.axis != (batch_major ? 0 : 1)) refuse(im, op + " reads its batch from another axis than the one that carries it");
    for (int k = 1; k < node.input_size(); ++k) {
      if (!dynamic(im, node, k)) continue;
      const BatchPos q = pos(im, node.input(k));
      if (k < 5 || q.axis != (batch_major ? 0 : 1) || q.inner != p.inner) refuse(im, "input " + std::to_string(k) + " of " + op + " is not followed");
    }
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty()) continue;
      pos_[node.output(k)] = BatchPos{batch_major ? 0 : (k == 0 ? 2 : 1), p.inner};
    }
  } else {
    refuse(im, "nnd cannot tell whether '" + op + "' keeps the samples apart");
  }
}

void BatchTrace::pattern(const Importer& im, const onnx::GraphProto& graph, const Pattern& p, size_t lowered) {
  const Node_& last = graph.node(p.nodes[lowered - 1]);
  const Symbol& x = sym(im, p.input);
  if (x.is_const()) return;
  const BatchPos bp = pos(im, p.input);
  if (p.kind == PatternKind::kLayerNorm) {
    const Node_& mean = graph.node(p.mean);
    const std::vector<int64_t> axes = ints_of(im, mean, "axes", 1).value_or(std::vector<int64_t>{});
    if (axes.empty()) refuse(im, "the LayerNorm's mean runs over every axis");
    for (int64_t a : axes) {
      if (normal(im, a, x.rank()) == bp.axis) refuse(im, "the LayerNorm runs over the axis that carries the batch");
    }
  }
  pos_[last.output(0)] = bp;
}

int BatchTrace::output_axis(const Importer& im, const std::string& name) const {
  const BatchPos p = pos(im, name);
  const std::vector<int64_t> d = dims_of(sym(im, name));
  if (p.inner != 1 || d[static_cast<size_t>(p.axis)] != 1) {
    refuse(im, "the output holds the batch merged with other data on axis " + std::to_string(p.axis) + " (length " +
               std::to_string(d[static_cast<size_t>(p.axis)]) + " times the batch size); nnd serves a batch on an axis of its own");
  }
  return p.axis;
}

}  // namespace nnd::onnx_import
