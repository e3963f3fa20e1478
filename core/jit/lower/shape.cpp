// Data movement as index maps computed at compile time (the kernels only follow tables,
// x86/kernels_shape.cpp): Permute, RepeatVector, Cropping, Gather, UpSampling and Resize; and the
// free layers whose output is their input's storage (Flatten, Reshape, Identity).
#include <bit>

#include "core/ir/resize.h"
#include "core/jit/lower/lower.h"

namespace nnd::jit {

std::vector<int64_t> permute_map(const Dims& in, const std::vector<int>& perm, Dims* out_shape) {
  const size_t rank = in.size();
  Dims out(rank);
  for (size_t a = 0; a < rank; ++a) out[a] = in[static_cast<size_t>(perm[a])];
  std::vector<int64_t> stride(rank, 1);
  for (size_t a = rank - 1; a-- > 0;) stride[a] = stride[a + 1] * in[a + 1];
  std::vector<int64_t> map(static_cast<size_t>(element_count(in, "")));
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

void gather_step(LowerContext& cx, const Node& n, const std::vector<int64_t>& map, int64_t in_count, int src,
                 int dst, const std::string& kernel) {
  GatherSpec gs;
  std::vector<float> table;
  gather_from_map(map, in_count, gs, table);
  if (!table.empty()) gs.table_off = cx.add_weights(table);
  cx.add(n, kernel, gs, {src}, dst);
}

namespace {

int64_t in_count_of(const LowerContext& cx, const Node& n) { return element_count(cx.in_shape(n), ""); }

// A resize from its taps (core/ir/resize.h): nearest is an index map; linear reads four input
// positions per output position with per-position weights (f32-bilinear, a 4-tap gather).
void lower_resize(LowerContext& cx, const Node& n, const ResizeTaps& r, const char* nearest_name) {
  const int dst = cx.output_buffer(n);
  const int src = cx.in_buf(n, 0);
  const int64_t c = r.channels;
  if (r.nearest) {
    std::vector<int64_t> map(static_cast<size_t>(r.out_h * r.out_w * c));
    for (int64_t y = 0; y < r.out_h; ++y)
      for (int64_t x = 0; x < r.out_w; ++x)
        for (int64_t k = 0; k < c; ++k)
          map[static_cast<size_t>((y * r.out_w + x) * c + k)] =
              (r.h[static_cast<size_t>(y)].lo * r.in_w + r.w[static_cast<size_t>(x)].lo) * c + k;
    gather_step(cx, n, map, r.in_h * r.in_w * c, src, dst, nearest_name);
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
  gs.table_off = cx.add_weights(table);
  cx.add(n, "bilinear", gs, {src}, dst);
}

}  // namespace

void lower(LowerContext& cx, const Node& n, const FlattenParams&) { cx.alias_output(n); }
void lower(LowerContext& cx, const Node& n, const ReshapeParams&) { cx.alias_output(n); }
void lower(LowerContext& cx, const Node& n, const IdentityParams&) { cx.alias_output(n); }

void lower(LowerContext& cx, const Node& n, const PermuteParams& p) {
  const int dst = cx.output_buffer(n);
  std::vector<int> perm;
  for (int d : p.dims) perm.push_back(d - 1);
  // NCHW <-> NHWC and other swaps of the last two axis groups: a transpose, without a table of
  // an entry per element.
  if (const std::optional<TransposeSpec> t = permute_as_transpose(cx.in_shape(n), perm);
      t && cx.emits(*t)) {
    cx.add(n, "transpose", *t, {cx.in_buf(n, 0)}, dst);
    return;
  }
  gather_step(cx, n, permute_map(cx.in_shape(n), perm, nullptr), in_count_of(cx, n), cx.in_buf(n, 0), dst,
              "permute");
}

void lower(LowerContext& cx, const Node& n, const RepeatVectorParams&) {
  const int dst = cx.output_buffer(n);
  const int64_t in_count = in_count_of(cx, n), out_count = cx.out_count(n);
  std::vector<int64_t> map(static_cast<size_t>(out_count));
  for (int64_t i = 0; i < out_count; ++i) map[static_cast<size_t>(i)] = i % in_count;
  gather_step(cx, n, map, in_count, cx.in_buf(n, 0), dst, "repeat");
}

void lower(LowerContext& cx, const Node& n, const CroppingParams& p) {
  const int dst = cx.output_buffer(n);
  const Hwc in = as_hwc(p.rank, cx.in_shape(n)), out = as_hwc(p.rank, cx.out_shape(n));
  const int64_t top = p.rank == 1 ? 0 : p.top;
  std::vector<int64_t> map(static_cast<size_t>(cx.out_count(n)));
  for (int64_t y = 0; y < out.h; ++y)
    for (int64_t x = 0; x < out.w; ++x)
      for (int64_t c = 0; c < out.c; ++c)
        map[static_cast<size_t>((y * out.w + x) * out.c + c)] = ((y + top) * in.w + x + p.left) * in.c + c;
  gather_step(cx, n, map, in_count_of(cx, n), cx.in_buf(n, 0), dst, "crop");
}

void lower(LowerContext& cx, const Node& n, const GatherParams& p) {
  const int dst = cx.output_buffer(n);
  const Dims& in_shape = cx.in_shape(n);
  const int64_t out_count = cx.out_count(n);
  const auto axis = static_cast<size_t>(p.axis);
  int64_t inner = 1;
  for (size_t a = axis + 1; a < in_shape.size(); ++a) inner *= in_shape[a];
  const int64_t len = in_shape[axis], kept = cx.out_shape(n)[axis];
  std::vector<int64_t> map(static_cast<size_t>(out_count));
  for (int64_t i = 0; i < out_count; ++i) {
    const int64_t o = i / (kept * inner), k = i / inner % kept, j = i % inner;
    map[static_cast<size_t>(i)] = (o * len + p.indices[static_cast<size_t>(k)]) * inner + j;
  }
  gather_step(cx, n, map, in_count_of(cx, n), cx.in_buf(n, 0), dst, "gather");
}

void lower(LowerContext& cx, const Node& n, const UpSamplingParams& p) {
  lower_resize(cx, n, resize_taps(p, cx.in_shape(n)), "upsample-nearest");
}

void lower(LowerContext& cx, const Node& n, const ResizeParams& p) {
  lower_resize(cx, n, resize_taps(p, cx.in_shape(n)), "resize-nearest");
}

// A constant: every sample the same floats, copied from the weight blob; its input (for the batch
// only) is not read.
void lower(LowerContext& cx, const Node& n, const ConstantParams& p) {
  const int dst = cx.output_buffer(n);
  ConstantFillSpec s;
  s.count = cx.out_count(n);
  s.weights_off = cx.add_weights(p.value.data);
  cx.add(n, "const", s, {}, dst);
}

}  // namespace nnd::jit
