// Tester of the conv/GEMM generator (emit_conv, x86/kernels.h): f32-conv (spatial, unrolled
// groups and the run-time group loop) and f32-gemm (rows mode), each built from a ConvSpec packed
// by pack_conv_weights and checked against a float64 reference across every channel tail,
// partial channel blocks, tile edges, batches, strides, dilations, groups, residual, placement
// and the fused activations.
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/kernels.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

// One convolution; the input buffer is exactly what the output needs (plus `extra_*` rows and
// columns and channel-stride slack the kernel must not read).
struct ConvCase : SpatialCase {
  int64_t groups = 1, cin_g = 1, cout_g = 1;
  int64_t in_c_slack = 0, out_c_slack = 0;
  bool rows_mode = false;

  std::string describe() const {
    std::ostringstream o;
    o << (rows_mode ? "gemm " : "conv ") << describe_geometry() << " groups " << groups << " cin_g " << cin_g
      << " cout_g " << cout_g << " slack in/out " << in_c_slack << "/" << out_c_slack;
    return o.str();
  }
};

class ConvTester {
 public:
  ConvTester(Isa isa, ConvCase c, uint32_t seed) : isa_(isa), c_(std::move(c)), rng_(seed) {}

  void run() {
    const int W = isa_width(isa_);
    ConvSpec s;
    s.groups = c_.groups;
    s.cin_g = c_.cin_g;
    s.cout_g = c_.cout_g;
    s.in_c = c_.groups * c_.cin_g + c_.in_c_slack;
    s.out_c = c_.groups * c_.cout_g + c_.out_c_slack;
    c_.set_geometry(s);
    s.rows_mode = c_.rows_mode;
    s.has_bias = c_.bias;
    s.act = c_.act;
    s.residual = c_.residual;
    s.residual_at = c_.residual_at;
    const BorderedOutput o = c_.output(s.out_c);
    s.out_place = o.placement();
    s.blocking = conv_blocking(isa_traits(isa_), c_.cout_g);
    const int64_t filters = c_.groups * c_.cout_g;
    const std::vector<float> kernel = rng_.vec(c_.kh * c_.kw * c_.cin_g * filters, -0.5f, 0.5f);
    const std::vector<float> bias = rng_.vec(filters, -0.5f, 0.5f);
    std::vector<float> blob;
    pack_conv_weights(s, W, kernel, c_.bias ? &bias : nullptr, blob);
    const GuardedBuffer weights = guarded_weights(blob);
    const KernelUnderTest k(isa_, c_.rows_mode ? "f32-gemm" : "f32-conv", [&](VecEmitter& ve) { emit_conv(ve, s); });

    const int64_t in_sample = s.in_h * s.in_w * s.in_c, res_sample = c_.out_h * c_.out_w * s.out_c;
    for (int64_t batch : c_.batches) {
      GuardedBuffer in(static_cast<size_t>(batch * in_sample)), res(static_cast<size_t>(batch * res_sample));
      GuardedBuffer out(static_cast<size_t>(batch * o.sample_floats()));
      // Only what the convolution reads gets a number; the rest stays NaN, so reading it shows.
      auto in_at = [&](int64_t n, int64_t y, int64_t x, int64_t ch) {
        return static_cast<size_t>(n * in_sample + (y * s.in_w + x) * s.in_c + ch);
      };
      auto res_at = [&](int64_t n, int64_t y, int64_t x, int64_t ch) {
        return static_cast<size_t>(n * res_sample + (y * c_.out_w + x) * s.out_c + ch);
      };
      for_each_tap(batch, [&](int64_t n, int64_t, int64_t, int64_t, int64_t y, int64_t x, int64_t ci, int64_t) {
        float& v = in[in_at(n, y, x, ci)];
        if (std::isnan(v)) v = rng_.uniform(-2.0f, 2.0f);
      });
      if (c_.residual) {
        for (int64_t n = 0; n < batch; ++n)
          for (int64_t y = 0; y < c_.out_h; ++y)
            for (int64_t x = 0; x < c_.out_w; ++x)
              for (int64_t ch = 0; ch < filters; ++ch) res[res_at(n, y, x, ch)] = rng_.uniform(-2.0f, 2.0f);
      }
      std::vector<double> acc(static_cast<size_t>(batch * c_.out_h * c_.out_w * filters), 0.0);
      auto acc_at = [&](int64_t n, int64_t y, int64_t x, int64_t ch) {
        return static_cast<size_t>(((n * c_.out_h + y) * c_.out_w + x) * filters + ch);
      };
      for_each_tap(batch, [&](int64_t n, int64_t oy, int64_t ox, int64_t oc, int64_t y, int64_t x, int64_t ci,
                              int64_t tap) {
        acc[acc_at(n, oy, ox, oc)] += static_cast<double>(in[in_at(n, y, x, ci)]) *
                                      kernel[static_cast<size_t>((tap * c_.cin_g + ci % c_.cin_g) * filters + oc)];
      });
      const std::string what = std::string(isa_id(isa_)) + " " + c_.describe() + " batch " + std::to_string(batch);
      auto ref = [&](int64_t n, int64_t y, int64_t x, int64_t oc) {
        double r = acc[acc_at(n, y, x, oc)];
        if (c_.bias) r += bias[static_cast<size_t>(oc)];
        return fused_epilogue_ref(c_.act, r, c_.residual, c_.residual ? res[res_at(n, y, x, oc)] : 0.0, c_.residual_at);
      };
      const bool ok =
          run_spatial_case(k, what, in, c_.residual ? &res : nullptr, out, weights, batch, o, filters, false, ref);
      if (!ok) return;  // one report per case
    }
  }

 private:
  // Calls f(n, oy, ox, oc, y, x, ci, tap) for every product of the convolution: output position
  // and channel, the input pixel and channel it reads (ci counts from the group's first channel
  // of the buffer) and the kernel tap ky * kw + kx.
  template <typename F>
  void for_each_tap(int64_t batch, F&& f) const {
    c_.for_each_tap(batch, [&](int64_t n, int64_t oy, int64_t ox, int64_t y, int64_t x, int64_t tap) {
      for (int64_t g = 0; g < c_.groups; ++g)
        for (int64_t ci = 0; ci < c_.cin_g; ++ci)
          for (int64_t oc = 0; oc < c_.cout_g; ++oc) f(n, oy, ox, g * c_.cout_g + oc, y, x, g * c_.cin_g + ci, tap);
    });
  }

  Isa isa_;
  ConvCase c_;
  Rng rng_;
};

// The largest channel block the config gives (many channels).
int vmax_of(Isa isa) { return conv_blocking(isa_traits(isa), 1 << 16).vmax; }

NND_KERNEL_TEST_SUITE(F32Conv);
NND_KERNEL_TEST_SUITE(F32Gemm);

// Every output-channel tail, each with a different number of whole blocks before it.
TEST_P(F32Conv, SpatialChannelTails) {
  uint32_t seed = 1;
  for (int64_t cout : tail_sweep(width(), 2 * vmax_of(isa()))) {
    ConvCase c;
    c.out_h = 3;
    c.out_w = 5;
    c.kh = c.kw = 3;
    c.cin_g = 3;
    c.cout_g = cout;
    c.act = fused_acts()[static_cast<size_t>(cout % 3)];
    c.residual = cout % 2 == 1;
    if (cout % 4 == 3) c.residual_at = ResidualAt::kAfterActivation;
    c.bias = cout % 4 != 2;
    ConvTester(isa(), c, seed++).run();
  }
}

// Output widths and heights across every tile shape the planner may choose (up to 16 positions,
// spanning columns, rows and samples), with one and several channel blocks.
TEST_P(F32Conv, SpatialTileEdges) {
  uint32_t seed = 100;
  const int W = width();
  for (int64_t cout : {int64_t{W - 1}, int64_t{vmax_of(isa()) * W + 1}}) {
    for (int64_t ow = 1; ow <= 18; ++ow) {
      ConvCase c;
      c.out_h = 1 + ow % 3;
      c.out_w = ow;
      c.kh = c.kw = ow % 2 == 0 ? 1 : 3;
      c.sw = ow % 4 == 1 ? 2 : 1;
      c.cin_g = 2;
      c.cout_g = cout;
      c.act = ActivationKind::kRelu;
      c.batches = {1, 2, 3, 4, 7};
      ConvTester(isa(), c, seed++).run();
    }
    for (int64_t oh : {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{7}}) {
      ConvCase c;
      c.out_h = oh;
      c.out_w = 33;
      c.kh = 2;
      c.kw = 3;
      c.cin_g = 1;
      c.cout_g = cout;
      c.batches = {1, 3};
      ConvTester(isa(), c, seed++).run();
    }
  }
}

// Strides, dilations and kernel sizes (wide kernels take the shared or cached broadcast paths),
// with rows and columns past the last window that must not be read.
TEST_P(F32Conv, SpatialStridesDilations) {
  Rng pick(7);
  for (uint32_t seed = 200; seed < 200u + static_cast<uint32_t>(random_cases(36)); ++seed) {
    ConvCase c;
    c.kh = pick.range(1, 7);
    c.kw = pick.range(1, 7);
    c.sh = pick.range(1, 3);
    c.sw = pick.range(1, 3);
    c.dh = pick.range(1, 2);
    c.dw = pick.range(1, 2);
    c.out_h = pick.range(1, 5);
    c.out_w = pick.range(1, 13);
    c.cin_g = pick.range(1, 5);
    c.cout_g = pick.range(1, 3 * width());
    c.extra_h = pick.range(0, 2);
    c.extra_w = pick.range(0, 2);
    c.act = fused_acts()[static_cast<size_t>(pick.range(0, 2))];
    c.residual = pick.coin();
    if (pick.coin()) c.residual_at = ResidualAt::kAfterActivation;
    ConvTester(isa(), c, seed).run();
  }
}

// Output into the interior of a bordered buffer (padded_storage.h): the border stays untouched.
TEST_P(F32Conv, SpatialOutPlacement) {
  Rng pick(11);
  for (uint32_t seed = 300; seed < 300u + static_cast<uint32_t>(random_cases(16)); ++seed) {
    ConvCase c;
    c.kh = c.kw = pick.range(1, 3) * 2 - 1;
    c.sh = c.sw = pick.range(1, 2);
    c.out_h = pick.range(1, 6);
    c.out_w = pick.range(1, 11);
    c.cin_g = pick.range(1, 6);
    c.cout_g = pick.range(1, 2 * vmax_of(isa()) * width() + 3);
    c.border_top = pick.range(0, 2);
    c.border_bottom = pick.range(0, 2);
    c.border_left = pick.range(1, 3);
    c.border_right = pick.range(0, 3);
    c.act = fused_acts()[static_cast<size_t>(seed % 3)];
    ConvTester(isa(), c, seed).run();
  }
}

// Groups below 4 are unrolled; from 4 evenly packed groups one copy runs in a run-time loop
// (the Winograd products use 16). Channel-stride slack is not read (input) or written (output).
TEST_P(F32Conv, GroupedUnrolledAndLoop) {
  Rng pick(13);
  for (int64_t groups : {2, 3, 4, 5, 16}) {
    for (int rep = 0; rep < 3; ++rep) {
      ConvCase c;
      c.groups = groups;
      c.kh = c.kw = rep == 2 ? 1 : 3;
      c.out_h = pick.range(1, 4);
      c.out_w = pick.range(1, 9);
      c.cin_g = pick.range(1, width() + 1);
      c.cout_g = pick.range(1, width() * 2 + 1);
      c.in_c_slack = rep == 1 ? 3 : 0;
      c.out_c_slack = rep == 1 ? 2 : 0;
      c.residual = rep == 0;
      c.act = fused_acts()[static_cast<size_t>(rep)];
      ConvTester(isa(), c, static_cast<uint32_t>(400 + groups * 3 + rep)).run();
    }
  }
}

// GEMM rows (Dense, pointwise): row counts around the row tile R (R-1, R, R+1, 2R+1) and every
// output-channel tail, with residual and activation.
TEST_P(F32Gemm, RowsTileEdgesAndTails) {
  const int W = width();
  uint32_t seed = 500;
  for (int64_t cout : tail_sweep(W, 2 * vmax_of(isa()))) {
    const ConvBlocking b = conv_blocking(isa_traits(isa()), cout);
    for (int64_t rows : tile_edges(b.rows)) {
      ConvCase c;
      c.rows_mode = true;
      c.out_w = rows;
      c.cin_g = 1 + (rows + cout) % 19;
      c.cout_g = cout;
      c.bias = rows % 2 == 1;
      c.residual = cout % 2 == 0;
      c.act = fused_acts()[static_cast<size_t>((rows + cout) % 3)];
      c.batches = {1, 2, 3};
      ConvTester(isa(), c, seed++).run();
    }
  }
}

// GEMM over rows whose pixel stride is wider than the channels used (a Dense over a slice).
TEST_P(F32Gemm, RowsStrideSlack) {
  for (uint32_t seed = 600; seed < 606; ++seed) {
    ConvCase c;
    c.rows_mode = true;
    c.out_w = 1 + seed % 7;
    c.cin_g = 5 + (seed - 600) * 3;
    c.cout_g = width() + seed - 600;
    c.in_c_slack = 1 + seed % 3;
    c.out_c_slack = seed % 2;
    ConvTester(isa(), c, seed).run();
  }
}

}  // namespace
}  // namespace nnd::jit::test
