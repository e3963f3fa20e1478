// Tester of the window generator (emit_window, x86/kernels.h): f32-dwconv (weights packed by
// pack_depthwise_weights, bias, residual, fused activation), f32-maxpool and f32-avgpool (the sum
// with a constant factor) over an already padded input, across every channel tail, partial
// channel blocks, row tiles around R, strides, dilations, batches and out placement.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "core/jit/x86/kernels.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

struct WindowCase : SpatialCase {
  WindowOp op = WindowOp::kDepthwise;
  int64_t c = 1;
  float scale = 1.0f;

  std::string describe() const {
    std::ostringstream o;
    o << (op == WindowOp::kDepthwise ? "dwconv" : op == WindowOp::kMax ? "maxpool" : "sumpool") << " c " << c << " "
      << describe_geometry() << " scale " << scale;
    return o.str();
  }
};

// The kernel config's blocking for window kernels (kernel_config.h).
WindowBlocking window_blocking(Isa isa, WindowOp op, int64_t c) {
  return op == WindowOp::kDepthwise ? depthwise_blocking(isa_traits(isa), c) : pool_blocking(isa_traits(isa), c);
}

class WindowTester {
 public:
  WindowTester(Isa isa, WindowCase c, uint32_t seed) : isa_(isa), c_(std::move(c)), rng_(seed) {}

  void run() {
    const int W = isa_width(isa_);
    WindowSpec s;
    s.op = c_.op;
    s.c = c_.c;
    c_.set_geometry(s);
    const bool dw = c_.op == WindowOp::kDepthwise;
    s.has_bias = dw && c_.bias;
    s.act = c_.act;
    s.residual = c_.residual;
    s.residual_at = c_.residual_at;
    s.scale = c_.scale;
    const WindowBlocking b = window_blocking(isa_, c_.op, c_.c);
    s.vmax = b.vmax;
    s.rows = b.rows;
    const BorderedOutput o = c_.output(c_.c);
    s.out_place = o.placement();
    const std::vector<float> kernel = rng_.vec(c_.kh * c_.kw * c_.c, -0.5f, 0.5f);
    const std::vector<float> bias = rng_.vec(c_.c, -0.5f, 0.5f);
    std::vector<float> blob;
    if (dw) pack_depthwise_weights(s, W, kernel, s.has_bias ? &bias : nullptr, blob);
    const GuardedBuffer weights = guarded_weights(blob);
    const KernelUnderTest k(isa_, "f32-window", [&](VecEmitter& ve) { emit_window(ve, s); });

    const int64_t in_sample = s.in_h * s.in_w * c_.c, res_sample = c_.out_h * c_.out_w * c_.c;
    for (int64_t batch : c_.batches) {
      GuardedBuffer in(static_cast<size_t>(batch * in_sample)), res(static_cast<size_t>(batch * res_sample));
      GuardedBuffer out(static_cast<size_t>(batch * o.sample_floats()));
      auto in_at = [&](int64_t n, int64_t y, int64_t x, int64_t ch) {
        return static_cast<size_t>(n * in_sample + (y * s.in_w + x) * c_.c + ch);
      };
      for_each_tap(batch, [&](int64_t n, int64_t, int64_t, int64_t ch, int64_t y, int64_t x, int64_t) {
        float& v = in[in_at(n, y, x, ch)];
        if (std::isnan(v)) v = rng_.uniform(-2.0f, 2.0f);
      });
      if (c_.residual) {
        for (size_t i = 0; i < res.size(); ++i) res[i] = rng_.uniform(-2.0f, 2.0f);
      }
      const size_t outputs = static_cast<size_t>(batch * res_sample);
      std::vector<double> acc(outputs, c_.op == WindowOp::kMax ? -std::numeric_limits<double>::infinity() : 0.0);
      for_each_tap(batch, [&](int64_t n, int64_t oy, int64_t ox, int64_t ch, int64_t y, int64_t x, int64_t tap) {
        double& a = acc[static_cast<size_t>(n * res_sample + (oy * c_.out_w + ox) * c_.c + ch)];
        const double v = in[in_at(n, y, x, ch)];
        if (c_.op == WindowOp::kMax) a = std::max(a, v);
        else if (c_.op == WindowOp::kSum) a += v;
        else a += v * kernel[static_cast<size_t>(tap * c_.c + ch)];
      });
      const std::string what = std::string(isa_id(isa_)) + " " + c_.describe() + " batch " + std::to_string(batch);
      auto ref = [&](int64_t n, int64_t y, int64_t x, int64_t ch) {
        const size_t j = static_cast<size_t>(n * res_sample + (y * c_.out_w + x) * c_.c + ch);
        double r = acc[j];
        if (c_.op == WindowOp::kSum) r *= c_.scale;
        if (s.has_bias) r += bias[static_cast<size_t>(ch)];
        return fused_epilogue_ref(c_.act, r, c_.residual, c_.residual ? res[j] : 0.0, c_.residual_at);
      };
      const bool max = c_.op == WindowOp::kMax;  // a max is one of its inputs, bit for bit
      const bool ok =
          run_spatial_case(k, what, in, c_.residual ? &res : nullptr, out, weights, batch, o, c_.c, max, ref);
      if (!ok) return;
    }
  }

 private:
  // f(n, oy, ox, ch, y, x, tap) for every input value a window reads.
  template <typename F>
  void for_each_tap(int64_t batch, F&& f) const {
    c_.for_each_tap(batch, [&](int64_t n, int64_t oy, int64_t ox, int64_t y, int64_t x, int64_t tap) {
      for (int64_t ch = 0; ch < c_.c; ++ch) f(n, oy, ox, ch, y, x, tap);
    });
  }

  Isa isa_;
  WindowCase c_;
  Rng rng_;
};

NND_KERNEL_TEST_SUITE(F32Dwconv);
NND_KERNEL_TEST_SUITE(F32Maxpool);
NND_KERNEL_TEST_SUITE(F32Avgpool);

// Channel tails x output widths around the row tile, for one window op.
void tails_and_tiles(Isa isa, WindowOp op, uint32_t seed) {
  const int W = isa_width(isa), vmax_isa = window_blocking(isa, op, 1 << 16).vmax;
  for (int64_t c : tail_sweep(W, 2 * vmax_isa)) {
    const int R = window_blocking(isa, op, c).rows;
    for (int64_t ow : tile_edges(R)) {
      WindowCase w;
      w.op = op;
      w.c = c;
      w.out_h = 1 + (ow + c) % 3;
      w.out_w = ow;
      w.kh = w.kw = 3;
      w.sw = ow % 2 == 0 ? 2 : 1;
      w.bias = c % 2 == 1;
      w.residual = op == WindowOp::kDepthwise && ow % 3 == 0;
      if (c % 2 == 0) w.residual_at = ResidualAt::kAfterActivation;
      w.act = fused_acts()[static_cast<size_t>((c + ow) % 3)];
      w.scale = op == WindowOp::kSum ? 1.0f / 9.0f : 1.0f;
      WindowTester(isa, w, seed++).run();
    }
  }
}

// Strides, dilations, kernel sizes, unread rows/columns and bordered output.
void geometry(Isa isa, WindowOp op, uint32_t seed) {
  Rng pick(seed);
  for (int i = 0; i < random_cases(24); ++i) {
    WindowCase w;
    w.op = op;
    w.c = pick.range(1, 3 * isa_width(isa) + 1);
    w.kh = pick.range(1, 5);
    w.kw = pick.range(1, 5);
    w.sh = pick.range(1, 3);
    w.sw = pick.range(1, 3);
    if (op == WindowOp::kDepthwise) {
      w.dh = pick.range(1, 2);
      w.dw = pick.range(1, 2);
    }
    w.out_h = pick.range(1, 5);
    w.out_w = pick.range(1, 12);
    w.extra_h = pick.range(0, 1);
    w.extra_w = pick.range(0, 2);
    w.act = fused_acts()[static_cast<size_t>(pick.range(0, 2))];
    if (op == WindowOp::kSum) w.scale = pick.coin() ? 1.0f : 0.25f;
    if (i % 2 == 0) {
      w.border_top = pick.range(0, 2);
      w.border_bottom = pick.range(0, 1);
      w.border_left = pick.range(1, 2);
      w.border_right = pick.range(0, 2);
    } else {
      w.residual = op == WindowOp::kDepthwise;
    }
    WindowTester(isa, w, seed + 1000 + static_cast<uint32_t>(i)).run();
  }
}

TEST_P(F32Dwconv, ChannelTailsRowTiles) { tails_and_tiles(isa(), WindowOp::kDepthwise, 1); }
TEST_P(F32Dwconv, StridesDilationsPlacement) { geometry(isa(), WindowOp::kDepthwise, 2); }
TEST_P(F32Maxpool, ChannelTailsRowTiles) { tails_and_tiles(isa(), WindowOp::kMax, 3); }
TEST_P(F32Maxpool, StridesPlacement) { geometry(isa(), WindowOp::kMax, 4); }
TEST_P(F32Avgpool, ChannelTailsRowTiles) { tails_and_tiles(isa(), WindowOp::kSum, 5); }
TEST_P(F32Avgpool, StridesPlacement) { geometry(isa(), WindowOp::kSum, 6); }

}  // namespace
}  // namespace nnd::jit::test
