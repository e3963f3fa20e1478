// Testers of the SSE4.1 planar convolution (x86/kernels_planar.h): f32-planar-pack (NHWC, dense
// or the interior of a bordered buffer, into zero-bordered channel/phase planes; bit for bit) and
// f32-conv-planar (4 output pixels per vector, chunks of output channels, the 4x4 transpose into
// NHWC, residual, activation, placement) against a float64 reference. Output widths sweep the
// groups of 4 pixels and their remainder (1..4 stored pixels of the last group), output channels
// every chunk split plan_planar_blocking makes (4..32), strides, dilations and batches 1..3.
// The generator is SSE4.1 only (it refuses other vector widths), so only that ISA is a test.
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/kernels_planar.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

class F32PlanarPack : public KernelTest {};
class F32ConvPlanar : public KernelTest {};
INSTANTIATE_TEST_SUITE_P(Kernel, F32PlanarPack, ::testing::Values(Isa::kSse41), isa_param_name);
INSTANTIATE_TEST_SUITE_P(Kernel, F32ConvPlanar, ::testing::Values(Isa::kSse41), isa_param_name);

int64_t plane_index(const PlanarLayout& l, int64_t c, int64_t p, int64_t y, int64_t q) {
  return ((c * l.phases + p) * l.plane_h + y) * l.plane_w + q;
}

struct PlanarCase {
  int64_t c = 1, in_h = 1, in_w = 1;  // the unpadded input
  int64_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 1, left = 1, bottom = 1, right = 1;  // conv padding (zeros)
  int64_t border = 0;  // the source is the interior of a buffer with this border (not read)
  int64_t out_h() const { return (in_h + top + bottom - ((kh - 1) * dh + 1)) / sh + 1; }
  int64_t out_w() const { return (in_w + left + right - ((kw - 1) * dw + 1)) / sw + 1; }
  std::string describe() const {
    std::ostringstream o;
    o << "in " << in_h << "x" << in_w << "x" << c << " k " << kh << "x" << kw << " s " << sh << "x" << sw << " d " << dh
      << "x" << dw << " pad t/l/b/r " << top << "/" << left << "/" << bottom << "/" << right << " src border " << border;
    return o.str();
  }
};

TEST_P(F32PlanarPack, GeometryAndSourceBorders) {
  Rng pick(3);
  const GuardedBuffer none = guarded_weights({});
  for (uint32_t seed = 1; seed <= static_cast<uint32_t>(random_cases(40)); ++seed) {
    PlanarCase pc;
    pc.c = pick.range(1, 8);
    pc.in_h = pick.range(1, 9);
    pc.in_w = pick.range(1, 23);
    pc.kh = pick.range(1, 7);
    pc.kw = pick.range(2, 7);
    pc.sh = pick.range(1, 2);
    pc.sw = pick.range(1, 3);
    pc.dh = pick.range(1, 2);
    pc.dw = pick.range(1, 2);
    pc.top = pick.range(0, 3);
    pc.left = pick.range(0, 3);
    pc.bottom = pc.top + (pc.kh - 1) * pc.dh;
    pc.right = pc.left + (pc.kw - 1) * pc.dw;
    pc.border = seed % 3 == 0 ? 2 : 0;
    PlanarPackSpec s;
    s.in_h = pc.in_h;
    s.in_w = pc.in_w;
    s.top = pc.top;
    s.left = pc.left;
    s.out = planar_layout(pc.c, pc.out_h(), pc.out_w(), pc.kh, pc.kw, pc.sh, pc.sw, pc.dh, pc.dw);
    const int64_t bw = pc.in_w + 2 * pc.border, bh = pc.in_h + 2 * pc.border;
    s.src_row_floats = bw * pc.c;
    s.src_sample_floats = bh * bw * pc.c;
    s.src_offset = (pc.border * bw + pc.border) * pc.c;
    const KernelUnderTest k(isa(), "f32-planar-pack", [&](VecEmitter& ve) { emit_planar_pack(ve, s); });
    Rng rng(seed);
    for (int64_t batch = 1; batch <= 3; ++batch) {
      GuardedBuffer in(static_cast<size_t>(batch * s.src_sample_floats));
      GuardedBuffer out(static_cast<size_t>(batch * s.out.sample_floats()));
      auto src = [&](int64_t n, int64_t y, int64_t x, int64_t ch) -> float& {
        return in[static_cast<size_t>(n * s.src_sample_floats + ((y + pc.border) * bw + x + pc.border) * pc.c + ch)];
      };
      for (int64_t n = 0; n < batch; ++n)
        for (int64_t y = 0; y < pc.in_h; ++y)
          for (int64_t x = 0; x < pc.in_w; ++x)
            for (int64_t ch = 0; ch < pc.c; ++ch) src(n, y, x, ch) = rng.uniform(-2.0f, 2.0f);
      k.run({in.data()}, out.data(), none, batch);
      Checker check(std::string(isa_id(isa())) + " f32-planar-pack " + pc.describe() + " batch " + std::to_string(batch));
      const PlanarLayout& l = s.out;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t ch = 0; ch < l.c; ++ch) {
          for (int64_t p = 0; p < l.phases; ++p) {
            for (int64_t y = 0; y < l.plane_h; ++y) {
              for (int64_t q = 0; q < l.plane_w; ++q) {
                const int64_t iy = y - pc.top, ix = q * l.phases + p - pc.left;
                const bool inside = iy >= 0 && iy < pc.in_h && ix >= 0 && ix < pc.in_w;
                const size_t o = static_cast<size_t>(n * l.sample_floats() + plane_index(l, ch, p, y, q));
                check.exact(o, out[o], inside ? src(n, iy, ix, ch) : 0.0f);
              }
            }
          }
        }
      }
      check.guards(out, "output");
      check.guards(in, "input");
      if (!check.ok()) break;
    }
  }
}

struct PlanarConvCase {
  int64_t cin = 1, cout = 4, out_h = 1, out_w = 4;
  int64_t kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
  bool bias = true, residual = false;
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
  ActivationKind act = ActivationKind::kLinear;
  int64_t border_top = 0, border_left = 0, border_right = 0, border_bottom = 0;
  std::string describe() const {
    std::ostringstream o;
    o << "cin " << cin << " cout " << cout << " out " << out_h << "x" << out_w << " k " << kh << "x" << kw << " s " << sh
      << "x" << sw << " d " << dh << "x" << dw << " bias " << bias << " residual " << residual
      << (residual_at == ResidualAt::kAfterActivation ? " after act" : "") << " act "
      << activation_name(act) << " border " << border_top << "," << border_bottom << "," << border_left << ","
      << border_right;
    return o.str();
  }
};

// The planes are filled from a virtual padded image P (plane_h rows, plane_w * sw columns): plane
// (c, p) row y column q is P[y][q * sw + p][c]. Plane values no output pixel reads stay NaN.
void run_planar_conv(Isa isa, const PlanarConvCase& pc, uint32_t seed) {
  Rng rng(seed);
  PlanarConvSpec s;
  s.in = planar_layout(pc.cin, pc.out_h, pc.out_w, pc.kh, pc.kw, pc.sh, pc.sw, pc.dh, pc.dw);
  s.out_h = pc.out_h;
  s.out_w = pc.out_w;
  s.cout = pc.cout;
  s.kh = pc.kh;
  s.kw = pc.kw;
  s.sh = pc.sh;
  s.dh = pc.dh;
  s.dw = pc.dw;
  s.has_bias = pc.bias;
  s.act = pc.act;
  s.residual = pc.residual;
  s.residual_at = pc.residual_at;
  const int64_t ph = pc.out_h + pc.border_top + pc.border_bottom, pw = pc.out_w + pc.border_left + pc.border_right;
  if (ph != pc.out_h || pw != pc.out_w) {
    s.out_place.row_floats = pw * pc.cout;
    s.out_place.sample_floats = ph * pw * pc.cout;
    s.out_place.offset_floats = (pc.border_top * pw + pc.border_left) * pc.cout;
  }
  plan_planar_blocking(s);
  const std::vector<float> kernel = rng.vec(pc.kh * pc.kw * pc.cin * pc.cout, -0.5f, 0.5f);
  const std::vector<float> bias = rng.vec(pc.cout, -0.5f, 0.5f);
  std::vector<float> blob;
  pack_planar_conv_weights(s, kernel, pc.bias ? &bias : nullptr, blob);
  const GuardedBuffer weights = guarded_weights(blob);
  const KernelUnderTest k(isa, "f32-conv-planar", [&](VecEmitter& ve) { emit_planar_conv(ve, s); });
  const PlanarLayout& l = s.in;
  const int64_t res_sample = pc.out_h * pc.out_w * pc.cout, out_sample = ph * pw * pc.cout;
  for (int64_t batch = 1; batch <= 3; ++batch) {
    GuardedBuffer in(static_cast<size_t>(batch * l.sample_floats())), res(static_cast<size_t>(batch * res_sample));
    GuardedBuffer out(static_cast<size_t>(batch * out_sample));
    auto p_at = [&](int64_t n, int64_t y, int64_t x, int64_t ch) -> float& {
      return in[static_cast<size_t>(n * l.sample_floats() + plane_index(l, ch, x % pc.sw, y, x / pc.sw))];
    };
    std::vector<double> acc(static_cast<size_t>(batch * res_sample), 0.0);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t oy = 0; oy < pc.out_h; ++oy)
        for (int64_t ox = 0; ox < pc.out_w; ++ox)
          for (int64_t ky = 0; ky < pc.kh; ++ky)
            for (int64_t kx = 0; kx < pc.kw; ++kx)
              for (int64_t ci = 0; ci < pc.cin; ++ci) {
                float& v = p_at(n, oy * pc.sh + ky * pc.dh, ox * pc.sw + kx * pc.dw, ci);
                if (std::isnan(v)) v = rng.uniform(-2.0f, 2.0f);
                for (int64_t co = 0; co < pc.cout; ++co) {
                  acc[static_cast<size_t>(n * res_sample + (oy * pc.out_w + ox) * pc.cout + co)] +=
                      static_cast<double>(v) * kernel[static_cast<size_t>(((ky * pc.kw + kx) * pc.cin + ci) * pc.cout + co)];
                }
              }
    // Plane columns only the last group's extra pixels read (never stored) stay NaN too: the
    // transpose into NHWC must not carry a lane into a stored pixel.
    if (pc.residual) {
      for (size_t i = 0; i < res.size(); ++i) res[i] = rng.uniform(-2.0f, 2.0f);
    }
    std::vector<const void*> ins{in.data()};
    if (pc.residual) ins.push_back(res.data());
    k.run(ins, out.data(), weights, batch);
    Checker check(std::string(isa_id(isa)) + " f32-conv-planar " + pc.describe() + " batch " + std::to_string(batch));
    std::vector<bool> written(out.size(), false);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t y = 0; y < pc.out_h; ++y)
        for (int64_t x = 0; x < pc.out_w; ++x)
          for (int64_t co = 0; co < pc.cout; ++co) {
            const size_t j = static_cast<size_t>(n * res_sample + (y * pc.out_w + x) * pc.cout + co);
            double r = acc[j];
            if (pc.bias) r += bias[static_cast<size_t>(co)];
            r = fused_epilogue_ref(pc.act, r, pc.residual, pc.residual ? res[j] : 0.0, pc.residual_at);
            const size_t o = static_cast<size_t>(n * out_sample + ((y + pc.border_top) * pw + x + pc.border_left) * pc.cout + co);
            written[o] = true;
            check.near(o, out[o], r, kTol);
          }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!written[i]) check.untouched(i, out[i]);
    }
    check.guards(out, "output");
    check.guards(in, "input");
    check.guards(weights, "weights");
    if (pc.residual) check.guards(res, "residual");
    if (!check.ok()) return;
  }
}

// Output widths 1..13 (every remainder of the groups of four) x output channels 4..32 (every chunk
// split of plan_planar_blocking).
TEST_P(F32ConvPlanar, WidthsAndChannelChunks) {
  uint32_t seed = 100;
  for (int64_t cout = 4; cout <= 32; cout += 4) {
    for (int64_t ow = 1; ow <= 13; ow += cout % 8 == 0 ? 3 : 2) {
      PlanarConvCase pc;
      pc.cin = 1 + (cout / 4 + ow) % 4;
      pc.cout = cout;
      pc.out_h = 1 + ow % 3;
      pc.out_w = ow;
      pc.bias = ow % 3 != 1;
      pc.residual = cout % 8 == 4 && ow % 2 == 1;
      if (ow % 4 == 3) pc.residual_at = ResidualAt::kAfterActivation;
      pc.act = fused_acts()[static_cast<size_t>((cout / 4 + ow) % 3)];
      run_planar_conv(isa(), pc, seed++);
    }
  }
}

TEST_P(F32ConvPlanar, StridesDilationsPlacement) {
  Rng pick(5);
  for (uint32_t seed = 200; seed < 200u + static_cast<uint32_t>(random_cases(30)); ++seed) {
    PlanarConvCase pc;
    pc.cin = pick.range(1, 8);
    pc.cout = 4 * pick.range(1, 6);
    pc.kh = pick.range(1, 7);
    pc.kw = pick.range(1, 7);
    if (pc.kh * pc.kw < 2) pc.kw = 2;
    pc.sh = pick.range(1, 2);
    pc.sw = pick.range(1, 3);
    pc.dh = pick.range(1, 2);
    pc.dw = pick.range(1, 2);
    pc.out_h = pick.range(1, 5);
    pc.out_w = pick.range(1, 17);
    pc.act = fused_acts()[seed % 3];
    if (seed % 2 == 0) {
      pc.border_top = pick.range(0, 2);
      pc.border_bottom = pick.range(0, 2);
      pc.border_left = pick.range(1, 3);
      pc.border_right = pick.range(0, 3);
    } else {
      pc.residual = true;
    }
    run_planar_conv(isa(), pc, seed);
  }
}

}  // namespace
}  // namespace nnd::jit::test
