#include "core/io/onnx_patterns.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <unordered_map>

#include "core/io/onnx_import.h"
#include "core/util/error.h"

namespace nnd::onnx_import {
namespace {

using Node_ = onnx::NodeProto;

// The name under which messages know node `i` (as the importer names it).
std::string node_name(const onnx::GraphProto& g, int i) {
  const Node_& n = g.node(i);
  return n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
}

// Who produces and who reads each tensor of the graph.
class GraphIndex {
 public:
  explicit GraphIndex(const onnx::GraphProto& g) : g_(g) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& t : g.node(i).output()) producer_[t] = i;
      for (const auto& t : g.node(i).input()) {
        if (!t.empty()) readers_[t].push_back(i);
      }
    }
    for (const auto& o : g.output()) readers_[o.name()].push_back(kGraphOutput);
  }

  static constexpr int kGraphOutput = -2;

  const Node_& node(int i) const { return g_.node(i); }
  // The node computing `t`, or -1 for graph inputs and initializers.
  int producer(const std::string& t) const {
    auto it = producer_.find(t);
    return it == producer_.end() ? -1 : it->second;
  }
  // One entry per input slot reading `t` (kGraphOutput for a graph output).
  const std::vector<int>& readers(const std::string& t) const {
    static const std::vector<int> none;
    auto it = readers_.find(t);
    return it == readers_.end() ? none : it->second;
  }
  // The node that is the only reader of `t`, or -1.
  int sole_reader(const std::string& t) const {
    const auto& r = readers(t);
    return r.size() == 1 && r[0] >= 0 ? r[0] : -1;
  }
  // The name under which messages know node `i` (as the importer names it).
  std::string name(int i) const { return node_name(g_, i); }
  // Who else reads `t`, for messages ("node 'x'", "the graph output").
  std::string readers_text(const std::string& t) const {
    std::string s;
    for (int r : readers(t)) {
      s += s.empty() ? "" : ", ";
      s += r == kGraphOutput ? "the graph output" : "node '" + name(r) + "'";
    }
    return s.empty() ? "nothing" : s;
  }

 private:
  const onnx::GraphProto& g_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int>> readers_;
};

constexpr int kAnyInputs = -1;  // ReduceMean takes its axes as an input from opset 18

// Every operator of the patterns has one output; a node declaring none (a damaged file) is not one.
bool is_op(const Node_& n, const char* op, int inputs) {
  return n.op_type() == op && (inputs == kAnyInputs || n.input_size() == inputs) && n.output_size() == 1 &&
         (n.domain().empty() || n.domain() == "ai.onnx");
}

// A chain being matched: the nodes found so far, and the first reason it is not the pattern.
struct Chain {
  const GraphIndex& ix;
  std::vector<int> nodes;
  std::string miss;

  bool fail(std::string why) {
    if (miss.empty()) miss = std::move(why);
    return false;
  }
  // The only reader of node `from`'s output, when it is an `op` with `inputs` inputs; else fails.
  int next(int from, const char* op, int inputs = 2) {
    const std::string& t = ix.node(from).output(0);
    const int r = ix.sole_reader(t);
    if (r < 0) {
      fail("the output '" + t + "' of node '" + ix.name(from) + "' is read by " + ix.readers_text(t) +
           " (the pattern needs one " + op + " as its only reader)");
      return -1;
    }
    if (!is_op(ix.node(r), op, inputs)) {
      fail("node '" + ix.name(r) + "' (" + ix.node(r).op_type() + ") reading '" + t + "' is not the pattern's " + op);
      return -1;
    }
    nodes.push_back(r);
    return r;
  }
  // The node computing input `slot` of node `at`, when it is an `op` whose output nothing else
  // reads (unless `shared`); else fails.
  int prev(int at, int slot, const char* op, int inputs = 2, bool shared = false) {
    const std::string& t = ix.node(at).input(slot);
    const int p = ix.producer(t);
    if (p < 0 || !is_op(ix.node(p), op, inputs)) {
      fail("'" + t + "' read by node '" + ix.name(at) + "' is not computed by the pattern's " + op);
      return -1;
    }
    if (!shared && ix.sole_reader(t) != at) {
      fail("the output '" + t + "' of node '" + ix.name(p) + "' is also read by " + ix.readers_text(t));
      return -1;
    }
    nodes.push_back(p);
    return p;
  }
  // Whether input `slot` of node `n` is computed by an `op`.
  bool made_by(int n, int slot, const char* op) const {
    const int p = ix.producer(ix.node(n).input(slot));
    return p >= 0 && ix.node(p).op_type() == op;
  }
  // The input slot (0 or 1) of two-input node `n` that is not `t`, or -1 when `t` is not exactly one.
  int other_slot(int n, const std::string& t) const {
    const Node_& node = ix.node(n);
    if (node.input(0) == t && node.input(1) != t) return 1;
    if (node.input(1) == t && node.input(0) != t) return 0;
    return -1;
  }
};

// Anchored at Erf: see onnx_patterns.h for the forms.
bool match_gelu(Chain& c, int erf, Pattern& p) {
  const GraphIndex& ix = c.ix;
  c.nodes.push_back(erf);
  const int scale = c.prev(erf, 0, c.made_by(erf, 0, "Mul") ? "Mul" : "Div");
  if (scale < 0) return false;
  const Node_& s = ix.node(scale);
  // Div(x, sqrt 2), or Mul by 1/sqrt 2 on either side: x is whichever operand the outer Mul uses.
  std::vector<int> x_slots = s.op_type() == "Div" ? std::vector<int>{0} : std::vector<int>{0, 1};
  const int add = c.next(erf, "Add");
  if (add < 0) return false;
  const int one = c.other_slot(add, ix.node(erf).output(0));
  if (one < 0) return c.fail("node '" + ix.name(add) + "' does not add a second operand to erf");
  const int m1 = c.next(add, "Mul");
  if (m1 < 0) return false;
  const int o1 = c.other_slot(m1, ix.node(add).output(0));
  if (o1 < 0) return c.fail("node '" + ix.name(m1) + "' does not multiply (1 + erf) by a second operand");
  auto x_slot_of = [&](const std::string& t) {
    for (int k : x_slots) {
      if (s.input(k) == t) return k;
    }
    return -1;
  };
  int x_slot = x_slot_of(ix.node(m1).input(o1));
  Operand half;
  if (x_slot >= 0) {  // ((1 + erf) * x) * 0.5
    const int m2 = c.next(m1, "Mul");
    if (m2 < 0) return false;
    half = {m2, c.other_slot(m2, ix.node(m1).output(0))};
  } else if (const int h = ix.producer(ix.node(m1).input(o1));
             h >= 0 && is_op(ix.node(h), "Mul", 2) && ix.sole_reader(ix.node(h).output(0)) == m1 &&
             (x_slot_of(ix.node(h).input(0)) >= 0 || x_slot_of(ix.node(h).input(1)) >= 0)) {
    // (1 + erf) * (x * 0.5)
    c.nodes.push_back(h);
    const int hx = x_slot_of(ix.node(h).input(0)) >= 0 ? 0 : 1;
    x_slot = x_slot_of(ix.node(h).input(hx));
    half = {h, 1 - hx};
  } else {  // ((1 + erf) * 0.5) * x
    const int m2 = c.next(m1, "Mul");
    if (m2 < 0) return false;
    const int o2 = c.other_slot(m2, ix.node(m1).output(0));
    x_slot = o2 < 0 ? -1 : x_slot_of(ix.node(m2).input(o2));
    if (x_slot < 0) return c.fail("neither node '" + ix.name(m1) + "' nor '" + ix.name(m2) + "' multiplies by x");
    half = {m1, o1};
  }
  if (half.slot < 0) return c.fail("node '" + ix.name(c.nodes.back()) + "' multiplies by its own input");
  p.kind = PatternKind::kGelu;
  p.input = s.input(x_slot);
  const bool div = s.op_type() == "Div";
  p.fixed = {{{scale, 1 - x_slot}, div ? std::sqrt(2.0) : std::sqrt(0.5), div ? "the divisor (sqrt 2)" : "the factor (1/sqrt 2)"},
             {{add, one}, 1.0, "the 1 added to erf"},
             {half, 0.5, "the factor 0.5"}};
  return true;
}

// Anchored at Abs: Abs(x) -> Add 1 -> Div(x, .).
bool match_softsign(Chain& c, int abs, Pattern& p) {
  const GraphIndex& ix = c.ix;
  c.nodes.push_back(abs);
  const std::string& x = ix.node(abs).input(0);
  const int add = c.next(abs, "Add");
  if (add < 0) return false;
  const int one = c.other_slot(add, ix.node(abs).output(0));
  if (one < 0) return c.fail("node '" + ix.name(add) + "' does not add a second operand to |x|");
  const int div = c.next(add, "Div");
  if (div < 0) return false;
  if (ix.node(div).input(1) != ix.node(add).output(0) || ix.node(div).input(0) != x) {
    return c.fail("node '" + ix.name(div) + "' does not divide '" + x + "' by (1 + |x|)");
  }
  p.kind = PatternKind::kSoftsign;
  p.input = x;
  p.fixed = {{{add, one}, 1.0, "the 1 added to |x|"}};
  return true;
}

// Anchored at Sqrt: walks back to the two reductions, then on to the optional scale and offset.
bool match_layer_norm(Chain& c, int sqrt, Pattern& p) {
  const GraphIndex& ix = c.ix;
  c.nodes.push_back(sqrt);
  const int add = c.prev(sqrt, 0, "Add");
  if (add < 0) return false;
  // var + eps, either way round: the variance is the operand a ReduceMean computes.
  const int var_slot = c.made_by(add, 0, "ReduceMean") ? 0 : c.made_by(add, 1, "ReduceMean") ? 1 : -1;
  if (var_slot < 0) return c.fail("node '" + ix.name(add) + "' does not add epsilon to a ReduceMean");
  const int variance = c.prev(add, var_slot, "ReduceMean", kAnyInputs);
  if (variance < 0) return false;
  const bool pow = c.made_by(variance, 0, "Pow");
  const int square = c.prev(variance, 0, pow ? "Pow" : "Mul");
  if (square < 0) return false;
  const std::string& d = ix.node(square).input(0);
  if (!pow && ix.node(square).input(1) != d) return c.fail("node '" + ix.name(square) + "' does not square its input");
  const int sub = c.prev(square, 0, "Sub", 2, /*shared=*/true);  // d also feeds the division
  if (sub < 0) return false;
  const std::string& x = ix.node(sub).input(0);
  const int mean = c.prev(sub, 1, "ReduceMean", kAnyInputs);
  if (mean < 0) return false;
  if (ix.node(mean).input(0) != x) return c.fail("node '" + ix.name(mean) + "' does not average '" + x + "'");
  const int div = c.next(sqrt, "Div");
  if (div < 0) return false;
  if (ix.node(div).input(0) != d || ix.node(div).input(1) != ix.node(sqrt).output(0)) {
    return c.fail("node '" + ix.name(div) + "' does not divide '" + d + "' by the square root");
  }
  for (int r : ix.readers(d)) {
    if (r != square && r != div) return c.fail("'" + d + "' (x - mean) is also read by " + ix.readers_text(d));
  }
  p.kind = PatternKind::kLayerNorm;
  p.input = x;
  p.mean = mean;
  p.variance = variance;
  p.epsilon = {add, 1 - var_slot};
  if (pow) p.fixed = {{{square, 1}, 2.0, "the exponent 2"}};
  // The optional tail * gamma + beta (each on either side) joins when it reads only the chain;
  // lower_pattern() absorbs it when the operands are constants that fit.
  int last = div;
  const std::string& q = ix.node(div).output(0);
  if (const int r = ix.sole_reader(q); r >= 0 && is_op(ix.node(r), "Mul", 2) && c.other_slot(r, q) >= 0) {
    p.gamma = {r, c.other_slot(r, q)};
    c.nodes.push_back(r);
    last = r;
  }
  const std::string& q2 = ix.node(last).output(0);
  if (const int r = ix.sole_reader(q2); r >= 0 && is_op(ix.node(r), "Add", 2) && c.other_slot(r, q2) >= 0) {
    p.beta = {r, c.other_slot(r, q2)};
    c.nodes.push_back(r);
  }
  return true;
}

// The exporter's scope shared by all the chain's node names ("/encoder/ln/" for PyTorch's
// "/encoder/ln/ReduceMean", ...), or "" when they share none.
std::string common_scope(const GraphIndex& ix, const std::vector<int>& nodes) {
  std::string prefix = ix.node(nodes[0]).name();
  for (int n : nodes) {
    const std::string& s = ix.node(n).name();
    size_t k = 0;
    while (k < prefix.size() && k < s.size() && prefix[k] == s[k]) ++k;
    prefix.resize(k);
  }
  const size_t slash = prefix.rfind('/');
  return slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
}

}  // namespace

const char* pattern_op(PatternKind k) {
  switch (k) {
    case PatternKind::kGelu: return "Gelu";
    case PatternKind::kSoftsign: return "Softsign";
    case PatternKind::kLayerNorm: return "LayerNormalization";
  }
  return "?";
}

PatternScan find_patterns(const onnx::GraphProto& graph) {
  const GraphIndex ix(graph);
  PatternScan scan;
  std::set<int> taken;
  for (int i = 0; i < graph.node_size(); ++i) {
    const Node_& n = graph.node(i);
    bool (*match)(Chain&, int, Pattern&) = nullptr;
    const char* what = nullptr;
    if (is_op(n, "Erf", 1)) {
      match = match_gelu;
      what = "PyTorch's exact GELU x * 0.5 * (1 + erf(x / sqrt 2))";
    } else if (is_op(n, "Abs", 1)) {
      match = match_softsign;
      what = "softsign x / (1 + |x|)";
    } else if (is_op(n, "Sqrt", 1)) {
      match = match_layer_norm;
      what = "a decomposed LayerNormalization";
    } else {
      continue;
    }
    Chain c{ix, {}, {}};
    Pattern p;
    const bool found = match(c, i, p);
    for (int m : c.nodes) {
      if (taken.count(m)) c.fail("node '" + ix.name(m) + "' belongs to another pattern");
    }
    if (!found || !c.miss.empty()) {
      for (int m : c.nodes) scan.notes[m] = std::string("not lowered as ") + what + ": " + c.miss;
      continue;
    }
    std::sort(c.nodes.begin(), c.nodes.end());
    p.nodes = c.nodes;
    taken.insert(p.nodes.begin(), p.nodes.end());
    const std::string scope = common_scope(ix, p.nodes);
    p.name = scope.empty() ? std::string(pattern_op(p.kind)) + "_" + std::to_string(p.nodes.back())
                           : scope + pattern_op(p.kind);
    scan.patterns.push_back(std::move(p));
  }
  return scan;
}

// ---------------------------------------------------------------------------------------------
// Lowering a found chain, with its constants known

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The constant at `at`, when it is a single value that does not broadcast x to more axes.
std::optional<double> scalar_at(Importer& im, const onnx::GraphProto& g, Operand at, const Symbol& x) {
  const Symbol& s = im.input(g.node(at.node), at.slot);
  if (!s.is_const() || s.constant->size() != 1 || s.constant->dims.size() > x.rank()) return std::nullopt;
  return s.constant->real_at(0);
}

void check_fixed(Importer& im, const onnx::GraphProto& g, const FixedConstant& f, const Symbol& x) {
  const std::string where = f.role + " (input '" + g.node(f.at.node).input(f.at.slot) + "' of node '" +
                            node_name(g, f.at.node) + "')";
  const std::optional<double> v = scalar_at(im, g, f.at, x);
  if (!v) im.fail(where + " is not a single constant value");
  if (!(std::fabs(*v - f.value) <= 1e-6 * std::fabs(f.value))) im.fail(where + " is " + num(*v) + ", not " + num(f.value));
}

// Refuses a chain node with an attribute the pattern does not read (old-opset broadcasting, ...).
void check_no_attributes(Importer& im, const onnx::GraphProto& g, int n) {
  Attributes(g.node(n), im.context() + ": node '" + node_name(g, n) + "'").check_all_read();
}

// The sorted ONNX axes ReduceMean node `n` averages over, keeping them (keepdims 1).
std::vector<int64_t> averaged_axes(Importer& im, const onnx::GraphProto& g, int n, const Symbol& x) {
  const Node_& node = g.node(n);
  const std::string where = "node '" + node_name(g, n) + "'";
  Attributes a(node, im.context() + ": " + where);
  std::optional<std::vector<int64_t>> axes = a.ints("axes");
  if (!axes && im.has_input(node, 1)) axes = im.const_input(node, 1, "axes").as_ints(im.context() + ": axes");
  if (a.i("keepdims", 1) != 1) im.fail(where + " drops the averaged axes (keepdims 0)");
  if (a.i("noop_with_empty_axes", 0) != 0) im.fail(where + " has noop_with_empty_axes set");
  a.check_all_read();
  if (!axes || axes->empty()) im.fail(where + " averages over every axis, the batch included");
  std::vector<int64_t> out;
  for (int64_t ax : *axes) out.push_back(im.onnx_axis(x, ax));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out[0] == x.perm[0]) im.fail(where + " averages over the batch axis");
  return out;
}

// A LayerNorm gamma or beta from the constant at `at`: values along the normalised `axes` only
// (numpy broadcasting against x), flattened in the IR order of those axes. nullopt when the
// operand is computed or varies along another axis: then the node is lowered by itself.
std::optional<Weights> block_weights(Importer& im, const onnx::GraphProto& g, Operand at, const Symbol& x,
                                     const std::vector<int64_t>& axes) {
  const Symbol& s = im.input(g.node(at.node), at.slot);
  if (!s.is_const()) return std::nullopt;
  const Constant& c = *s.constant;
  const size_t r = x.rank();
  if (c.dims.size() > r) return std::nullopt;
  std::vector<int64_t> dims(r, 1), stride(r, 0);
  std::copy(c.dims.begin(), c.dims.end(), dims.begin() + static_cast<std::ptrdiff_t>(r - c.dims.size()));
  for (size_t k = r, step = 1; k-- > 0;) {
    const bool normalised = std::count(axes.begin(), axes.end(), static_cast<int64_t>(k)) > 0;
    if (dims[k] != 1 && (!normalised || dims[k] != x.dims[k])) return std::nullopt;
    stride[k] = dims[k] == 1 ? 0 : static_cast<int64_t>(step);
    step *= static_cast<size_t>(dims[k]);
  }
  std::vector<int64_t> order = axes;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return im.ir_axis(x, a) < im.ir_axis(x, b); });
  int64_t count = 1;
  for (int64_t a : order) count *= x.dims[static_cast<size_t>(a)];
  Weights w;
  w.shape = {count};
  std::vector<int64_t> idx(order.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t flat = 0;
    for (size_t k = 0; k < order.size(); ++k) flat += idx[k] * stride[static_cast<size_t>(order[k])];
    w.data.push_back(static_cast<float>(c.real_at(flat)));
    for (size_t k = order.size(); k-- > 0;) {  // row-major: the last axis in IR order runs fastest
      if (++idx[k] < x.dims[static_cast<size_t>(order[k])]) break;
      idx[k] = 0;
    }
  }
  return w;
}

size_t lower_layer_norm_chain(Importer& im, const onnx::GraphProto& g, const Pattern& p, Symbol& x) {
  const std::vector<int64_t> axes = averaged_axes(im, g, p.mean, x);
  const std::vector<int64_t> var_axes = averaged_axes(im, g, p.variance, x);
  if (var_axes != axes) {
    im.fail("node '" + node_name(g, p.variance) + "' averages over axes " + list_text(var_axes) + ", node '" +
            node_name(g, p.mean) + "' over " + list_text(axes));
  }
  const std::optional<double> eps = scalar_at(im, g, p.epsilon, x);
  if (!eps || !(*eps >= 0) || !std::isfinite(*eps)) {
    im.fail("epsilon (input '" + g.node(p.epsilon.node).input(p.epsilon.slot) + "' of node '" +
            node_name(g, p.epsilon.node) + "') is not a single finite constant >= 0");
  }
  LayerNormParams ln;
  ln.epsilon = *eps;
  for (int64_t a : axes) ln.keras_axes.push_back(im.ir_axis(x, a));
  std::sort(ln.keras_axes.begin(), ln.keras_axes.end());
  // The tail nodes are the last of p.nodes; each joins only if the one before it did.
  size_t covered = p.nodes.size() - (p.gamma.node >= 0) - (p.beta.node >= 0);
  bool absorbing = true;
  for (const auto& [at, dst] : {std::pair{p.gamma, &ln.gamma}, std::pair{p.beta, &ln.beta}}) {
    if (at.node < 0 || !absorbing) continue;
    std::optional<Weights> w = block_weights(im, g, at, x, axes);
    absorbing = w.has_value();
    if (!absorbing) continue;
    *dst = std::move(*w);
    ++covered;
  }
  const Perm perm = x.perm;  // the normalised axes stay wherever x's layout has them
  im.emit(g.node(p.nodes[covered - 1]), 0, ln, {x.value}, perm);
  return covered;
}

}  // namespace

size_t lower_pattern(Importer& im, const onnx::GraphProto& g, const Pattern& p) {
  Symbol& x = im.tensor(p.input);
  if (x.is_const()) return 0;
  for (int n : p.nodes) {
    if (n != p.mean && n != p.variance) check_no_attributes(im, g, n);
  }
  for (const FixedConstant& f : p.fixed) check_fixed(im, g, f, x);
  const Perm perm = x.perm;
  switch (p.kind) {
    case PatternKind::kGelu:
      im.emit(g.node(p.nodes.back()), 0, ActivationParams{ActivationKind::kGeluErf}, {x.value}, perm);
      return p.nodes.size();
    case PatternKind::kSoftsign:
      im.emit(g.node(p.nodes.back()), 0, ActivationParams{ActivationKind::kSoftsign}, {x.value}, perm);
      return p.nodes.size();
    case PatternKind::kLayerNorm:
      return lower_layer_norm_chain(im, g, p, x);
  }
  im.fail(ErrorCode::kInternal, "internal: unknown pattern");
}

}  // namespace nnd::onnx_import
