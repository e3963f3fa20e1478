// See jit_lower_extra.h. Index maps are computed here at compile time; the kernels only follow
// tables (x86/kernels_shape.cpp) or reuse the conv generator (transposed convolution).
#include "core/ir/broadcast.h"
#include "core/jit/jit_lower_extra.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <variant>

#include "core/ir/conv_geometry.h"
#include "core/ir/resize.h"
#include "core/jit/x86/kernels_shape.h"
#include "core/util/error.h"

namespace nnd::jit {

namespace {

int64_t count_of(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

struct Hwc3 {
  int64_t h, w, c;
};
Hwc3 hwc(int rank, const Dims& s) {
  if (rank == 1) return {1, s[0], s[1]};
  return {s[0], s[1], s[2]};
}

// Output axis a reads input axis perm[a] (0-based).
std::vector<int64_t> permute_map(const Dims& in, const std::vector<int>& perm, Dims* out_shape) {
  const size_t rank = in.size();
  Dims out(rank);
  for (size_t a = 0; a < rank; ++a) out[a] = in[static_cast<size_t>(perm[a])];
  std::vector<int64_t> stride(rank, 1);
  for (size_t a = rank - 1; a-- > 0;) stride[a] = stride[a + 1] * in[a + 1];
  std::vector<int64_t> map(static_cast<size_t>(count_of(in)));
  for (int64_t i = 0; i < static_cast<int64_t>(map.size()); ++i) {
    int64_t rem = i, src = 0;
    for (size_t a = rank; a-- > 0;) {
      src += (rem % out[a]) * stride[static_cast<size_t>(perm[a])];
      rem /= out[a];
    }
    map[static_cast<size_t>(i)] = src;
  }
  if (out_shape) *out_shape = out;
  return map;
}

void gather_step(LowerHooks& h, const std::vector<int64_t>& map, int64_t in_count, int src, int dst,
                 const std::string& kernel = "f32-gather") {
  GatherSpec gs;
  std::vector<float> table;
  gather_from_map(map, in_count, gs, table);
  if (!table.empty()) gs.table_off = h.add_weights(table);
  h.add_step(kernel, {src}, dst, [gs](VecEmitter& ve) { emit_gather(ve, gs); });
}

void param_step(LowerHooks& h, ParamOp op, const std::vector<float>& a, const std::vector<float>* b, int src, int dst) {
  ParamEltSpec ps;
  ps.op = op;
  ps.count = static_cast<int64_t>(a.size());
  ps.a_off = h.add_weights(a);
  ps.b_off = b ? h.add_weights(*b) : ps.a_off;
  h.add_step(op == ParamOp::kPRelu ? "f32-vprelu" : "f32-vaffine", {src}, dst,
             [ps](VecEmitter& ve) { emit_param_elt(ve, ps); });
}

void lower_conv_transpose(const Graph& g, const Node& n, const ConvTransposeParams& p, int src, int dst,
                          LowerHooks& h) {
  const Dims& in_shape = g.values[n.inputs[0]].shape;
  const Dims& out_shape = g.values[n.output].shape;
  const Hwc3 in = hwc(p.rank, in_shape), out = hwc(p.rank, out_shape);
  const Window& w = p.window;
  const auto th = transpose_window_h(w, in.h, p.rank == 1 ? -1 : p.output_padding_h);
  const auto tw = transpose_window_w(w, in.w, p.output_padding_w);
  // Forward convolution (stride 1, flipped kernel) over the zero-inserted, padded input U:
  // input pixel i sits at U position i * s + P with P = (k - 1) * d - pad_before.
  const int64_t ph = (w.kernel_h - 1) * w.dilation_h - th.pad_before;
  const int64_t pw = (w.kernel_w - 1) * w.dilation_w - tw.pad_before;
  const int64_t uh = out.h + (w.kernel_h - 1) * w.dilation_h, uw = out.w + (w.kernel_w - 1) * w.dilation_w;
  std::vector<int64_t> map(static_cast<size_t>(uh * uw * in.c), -1);
  for (int64_t ih = 0; ih < in.h; ++ih) {
    const int64_t y = ih * w.stride_h + ph;
    if (y < 0 || y >= uh) continue;
    for (int64_t iw = 0; iw < in.w; ++iw) {
      const int64_t x = iw * w.stride_w + pw;
      if (x < 0 || x >= uw) continue;
      for (int64_t c = 0; c < in.c; ++c) map[static_cast<size_t>((y * uw + x) * in.c + c)] = (ih * in.w + iw) * in.c + c;
    }
  }
  const int ub = h.new_buffer(uh * uw * in.c, n.name + ":upsampled");
  gather_step(h, map, in.h * in.w * in.c, src, ub, "f32-gather-zeroinsert");
  // Kernel (kh, kw, filters, Cin) -> flipped (kh, kw, Cin, filters).
  Weights k;
  k.shape = {w.kernel_h, w.kernel_w, in.c, p.filters};
  k.data.resize(static_cast<size_t>(count_of(k.shape)));
  for (int64_t a = 0; a < w.kernel_h; ++a) {
    for (int64_t b = 0; b < w.kernel_w; ++b) {
      for (int64_t f = 0; f < p.filters; ++f) {
        for (int64_t c = 0; c < in.c; ++c) {
          const int64_t srci = ((a * w.kernel_w + b) * p.filters + f) * in.c + c;
          const int64_t dsti = (((w.kernel_h - 1 - a) * w.kernel_w + (w.kernel_w - 1 - b)) * in.c + c) * p.filters + f;
          k.data[static_cast<size_t>(dsti)] = p.kernel.data[static_cast<size_t>(srci)];
        }
      }
    }
  }
  ConvSpec cs;
  cs.cin_g = in.c;
  cs.cout_g = p.filters;
  cs.blocking = conv_blocking(isa_traits(h.isa), p.filters);
  cs.in_h = uh;
  cs.in_w = uw;
  cs.in_c = in.c;
  cs.out_h = out.h;
  cs.out_w = out.w;
  cs.out_c = p.filters;
  cs.kh = w.kernel_h;
  cs.kw = w.kernel_w;
  cs.dh = w.dilation_h;
  cs.dw = w.dilation_w;
  cs.has_bias = !p.bias.empty();
  cs.act = act_fusable(p.activation) ? p.activation : ActivationKind::kLinear;
  h.conv_step(cs, k, p.bias, ub, dst, "f32-deconv");
  if (!act_fusable(p.activation)) h.activation(dst, p.activation, count_of(out_shape), p.filters);
}

void lower_layer_norm(const Graph& g, const Node& n, const LayerNormParams& p, int src, int dst, LowerHooks& h) {
  const Dims& shape = g.values[n.inputs[0]].shape;
  const size_t rank = shape.size();
  std::vector<bool> norm(rank, false);
  for (int a : p.axes) norm[static_cast<size_t>(a)] = true;
  std::vector<int> perm;
  for (size_t a = 0; a < rank; ++a) if (!norm[a]) perm.push_back(static_cast<int>(a));
  for (size_t a = 0; a < rank; ++a) if (norm[a]) perm.push_back(static_cast<int>(a));
  int64_t block = 1;
  for (int a : p.axes) block *= shape[static_cast<size_t>(a)];
  const int64_t count = count_of(shape);
  bool identity = true;
  for (size_t a = 0; a < rank; ++a) identity = identity && perm[a] == static_cast<int>(a);
  LayerNormSpec ls;
  ls.block = block;
  ls.groups = count / block;
  ls.epsilon = static_cast<float>(p.epsilon);
  if (!p.gamma.empty()) ls.gamma_off = h.add_weights(p.gamma.data);
  if (!p.beta.empty()) ls.beta_off = h.add_weights(p.beta.data);
  if (identity) {
    h.add_step("f32-layernorm", {src}, dst, [ls](VecEmitter& ve) { emit_layernorm(ve, ls); });
    return;
  }
  Dims pshape;
  const std::vector<int64_t> fwd = permute_map(shape, perm, &pshape);
  std::vector<int64_t> back(fwd.size());
  for (size_t i = 0; i < fwd.size(); ++i) back[static_cast<size_t>(fwd[i])] = static_cast<int64_t>(i);
  const int t0 = h.new_buffer(count, n.name + ":permuted");
  const int t1 = h.new_buffer(count, n.name + ":normalised");
  gather_step(h, fwd, count, src, t0, "f32-permute");
  h.add_step("f32-layernorm", {t0}, t1, [ls](VecEmitter& ve) { emit_layernorm(ve, ls); });
  gather_step(h, back, count, t1, dst, "f32-permute");
}

// A resize from its taps (core/ir/resize.h): nearest is an index map; linear reads four input
// positions per output position with per-position weights (f32-bilinear, a 4-tap gather).
void lower_resize(const ResizeTaps& r, int src, int dst, LowerHooks& h, const char* nearest_name) {
  const int64_t c = r.channels;
  if (r.nearest) {
    std::vector<int64_t> map(static_cast<size_t>(r.out_h * r.out_w * c));
    for (int64_t y = 0; y < r.out_h; ++y)
      for (int64_t x = 0; x < r.out_w; ++x)
        for (int64_t k = 0; k < c; ++k)
          map[static_cast<size_t>((y * r.out_w + x) * c + k)] =
              (r.h[static_cast<size_t>(y)].lo * r.in_w + r.w[static_cast<size_t>(x)].lo) * c + k;
    gather_step(h, map, r.in_h * r.in_w * c, src, dst, nearest_name);
    return;
  }
  GatherSpec gs;
  gs.in_count = r.in_h * r.in_w * c;
  gs.out_count = r.out_h * r.out_w * c;
  gs.len = c;
  gs.taps = 4;
  gs.runs = r.out_h * r.out_w;
  std::vector<float> table;
  for (int64_t oh = 0; oh < r.out_h; ++oh) {
    const ResizeTap& a = r.h[static_cast<size_t>(oh)];
    for (int64_t ow = 0; ow < r.out_w; ++ow) {
      const ResizeTap& b = r.w[static_cast<size_t>(ow)];
      const int64_t srcs[4] = {(a.lo * r.in_w + b.lo) * c, (a.lo * r.in_w + b.hi) * c, (a.hi * r.in_w + b.lo) * c,
                               (a.hi * r.in_w + b.hi) * c};
      const double wts[4] = {(1 - a.t) * (1 - b.t), (1 - a.t) * b.t, a.t * (1 - b.t), a.t * b.t};
      for (int64_t s : srcs) table.push_back(std::bit_cast<float>(static_cast<int32_t>(s)));
      table.push_back(std::bit_cast<float>(static_cast<int32_t>((oh * r.out_w + ow) * c)));
      for (double x : wts) table.push_back(static_cast<float>(x));
    }
  }
  gs.table_off = h.add_weights(table);
  h.add_step("f32-bilinear", {src}, dst, [gs](VecEmitter& ve) { emit_gather(ve, gs); });
}

}  // namespace

bool is_extra_kind(const LayerParams& p) {
  return std::holds_alternative<ConvTransposeParams>(p) || std::holds_alternative<LayerNormParams>(p) ||
         std::holds_alternative<PReluParams>(p) || std::holds_alternative<PermuteParams>(p) ||
         std::holds_alternative<RepeatVectorParams>(p) || std::holds_alternative<UpSamplingParams>(p) ||
         std::holds_alternative<ResizeParams>(p) || std::holds_alternative<GatherParams>(p) ||
         std::holds_alternative<CroppingParams>(p);
}

std::optional<std::string> extra_unsupported_reason(const Graph&, const Node&) { return std::nullopt; }

bool lower_extra_node(const Graph& g, const Node& n, const std::vector<int>& ins, int dst, LowerHooks& h) {
  const Dims& in_shape = g.values[n.inputs[0]].shape;
  const Dims& out_shape = g.values[n.output].shape;
  const int64_t in_count = count_of(in_shape), out_count = count_of(out_shape);
  return std::visit(
      [&](const auto& p) -> bool {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, ConvTransposeParams>) {
          lower_conv_transpose(g, n, p, ins[0], dst, h);
          return true;
        } else if constexpr (std::is_same_v<T, LayerNormParams>) {
          lower_layer_norm(g, n, p, ins[0], dst, h);
          return true;
        } else if constexpr (std::is_same_v<T, PReluParams>) {
          const std::vector<int64_t> map = broadcast_map(in_shape, p.alpha.shape);
          std::vector<float> a(map.size());
          for (size_t i = 0; i < map.size(); ++i) a[i] = p.alpha.data[static_cast<size_t>(map[i])];
          param_step(h, ParamOp::kPRelu, a, nullptr, ins[0], dst);
          return true;
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          if (p.axis == static_cast<int>(in_shape.size()) - 1) return false;
          int64_t inner = 1;
          for (size_t i = static_cast<size_t>(p.axis) + 1; i < in_shape.size(); ++i) inner *= in_shape[i];
          const int64_t c = in_shape[static_cast<size_t>(p.axis)];
          std::vector<float> scale(static_cast<size_t>(in_count)), shift(scale.size());
          for (int64_t i = 0; i < in_count; ++i) {
            const auto ch = static_cast<size_t>((i / inner) % c);
            const double s = static_cast<double>(p.gamma.data[ch]) /
                             std::sqrt(static_cast<double>(p.moving_variance.data[ch]) + p.epsilon);
            scale[static_cast<size_t>(i)] = static_cast<float>(s);
            shift[static_cast<size_t>(i)] =
                static_cast<float>(static_cast<double>(p.beta.data[ch]) - static_cast<double>(p.moving_mean.data[ch]) * s);
          }
          param_step(h, ParamOp::kAffine, scale, &shift, ins[0], dst);
          h.activation(dst, p.activation, in_count, in_shape.back());
          return true;
        } else if constexpr (std::is_same_v<T, PermuteParams>) {
          std::vector<int> perm;
          for (int d : p.dims) perm.push_back(d - 1);
          gather_step(h, permute_map(in_shape, perm, nullptr), in_count, ins[0], dst, "f32-permute");
          return true;
        } else if constexpr (std::is_same_v<T, RepeatVectorParams>) {
          std::vector<int64_t> map(static_cast<size_t>(out_count));
          for (int64_t i = 0; i < out_count; ++i) map[static_cast<size_t>(i)] = i % in_count;
          gather_step(h, map, in_count, ins[0], dst, "f32-repeat");
          return true;
        } else if constexpr (std::is_same_v<T, CroppingParams>) {
          const Hwc3 in = hwc(p.rank, in_shape), out = hwc(p.rank, out_shape);
          const int64_t top = p.rank == 1 ? 0 : p.top;
          std::vector<int64_t> map(static_cast<size_t>(out_count));
          for (int64_t y = 0; y < out.h; ++y)
            for (int64_t x = 0; x < out.w; ++x)
              for (int64_t c = 0; c < out.c; ++c)
                map[static_cast<size_t>((y * out.w + x) * out.c + c)] = ((y + top) * in.w + x + p.left) * in.c + c;
          gather_step(h, map, in_count, ins[0], dst, "f32-crop");
          return true;
        } else if constexpr (std::is_same_v<T, GatherParams>) {
          const auto axis = static_cast<size_t>(p.axis);
          int64_t inner = 1;
          for (size_t a = axis + 1; a < in_shape.size(); ++a) inner *= in_shape[a];
          const int64_t len = in_shape[axis], kept = out_shape[axis];
          std::vector<int64_t> map(static_cast<size_t>(out_count));
          for (int64_t i = 0; i < out_count; ++i) {
            const int64_t o = i / (kept * inner), k = i / inner % kept, j = i % inner;
            map[static_cast<size_t>(i)] = (o * len + p.indices[static_cast<size_t>(k)]) * inner + j;
          }
          gather_step(h, map, in_count, ins[0], dst, "f32-gather");
          return true;
        } else if constexpr (std::is_same_v<T, UpSamplingParams>) {
          lower_resize(resize_taps(p, in_shape), ins[0], dst, h, "f32-upsample-nearest");
          return true;
        } else if constexpr (std::is_same_v<T, ResizeParams>) {
          lower_resize(resize_taps(p, in_shape), ins[0], dst, h, "f32-resize-nearest");
          return true;
        } else if constexpr (std::is_same_v<T, MergeParams>) {
          bool bcast = false;
          for (ValueId v : n.inputs) bcast = bcast || g.values[v].shape != out_shape;
          if (!bcast) return false;
          std::vector<int> bufs;
          for (size_t i = 0; i < n.inputs.size(); ++i) {
            const Dims& s = g.values[n.inputs[i]].shape;
            if (s == out_shape) {
              bufs.push_back(ins[i]);
              continue;
            }
            const int b = h.new_buffer(out_count, n.name + ":broadcast" + std::to_string(i));
            gather_step(h, broadcast_map(out_shape, s), count_of(s), ins[i], b, "f32-broadcast");
            bufs.push_back(b);
          }
          BinOp op = BinOp::kAdd;
          float div = 1.0f;
          switch (p.op) {
            case MergeOp::kAdd: op = BinOp::kAdd; break;
            case MergeOp::kSubtract: op = BinOp::kSub; break;
            case MergeOp::kMultiply: op = BinOp::kMul; break;
            case MergeOp::kAverage: op = BinOp::kAdd; div = static_cast<float>(n.inputs.size()); break;
            case MergeOp::kMaximum: op = BinOp::kMax; break;
            case MergeOp::kMinimum: op = BinOp::kMin; break;
          }
          const int k = static_cast<int>(bufs.size());
          h.add_step("f32-merge", bufs, dst,
                     [op, k, out_count, div](VecEmitter& ve) { emit_merge(ve, op, k, out_count, div); });
          return true;
        } else {
          return false;
        }
      },
      n.params);
}

}  // namespace nnd::jit
