// Testers of the Winograd F(2x2, 3x3) transforms (x86/kernels_winograd.h): f32-wino-in
// (B^T d B per tile and input channel) and f32-wino-out (A^T m A, bias, residual, activation,
// placement), each against the transform computed in float64 from its definition, over every
// channel tail, tile counts 1..5 on each axis and batches 1..3. The products between them are an
// f32-conv with 16 groups (jit_kernel_conv_test.cpp's Grouped covers that loop); the weight
// transform is checked through winograd_weights against G g G^T.
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/kernels_winograd.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

constexpr double kBT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

NND_KERNEL_TEST_SUITE(F32WinoIn);
NND_KERNEL_TEST_SUITE(F32WinoOut);

TEST_P(F32WinoIn, TilesAndChannelTails) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 1;
  for (int64_t c : tail_sweep(width(), 3)) {
    for (int64_t th = 1; th <= 3; ++th) {
      const int64_t tw = 1 + (c + th) % 5;
      const WinogradInSpec s{th, tw, c};
      const KernelUnderTest k(isa(), "f32-wino-in", [&](VecEmitter& ve) { emit_winograd_input(ve, s); });
      const int64_t ih = 2 * th + 2, iw = 2 * tw + 2, in_sample = ih * iw * c;
      const int64_t out_sample = th * tw * kWinogradPoints * c;
      Rng rng(seed++);
      for (int64_t batch = 1; batch <= 3; ++batch) {
        GuardedBuffer in(static_cast<size_t>(batch * in_sample)), out(static_cast<size_t>(batch * out_sample));
        for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(-2.0f, 2.0f);
        k.run({in.data()}, out.data(), none, batch);
        std::ostringstream what;
        what << isa_id(isa()) << " f32-wino-in tiles " << th << "x" << tw << " c " << c << " batch " << batch;
        Checker check(what.str());
        for (int64_t n = 0; n < batch; ++n) {
          for (int64_t ty = 0; ty < th; ++ty) {
            for (int64_t tx = 0; tx < tw; ++tx) {
              for (int64_t ch = 0; ch < c; ++ch) {
                auto d = [&](int a, int b) {
                  return static_cast<double>(in[static_cast<size_t>(n * in_sample + ((2 * ty + a) * iw + 2 * tx + b) * c + ch)]);
                };
                for (int i = 0; i < 4; ++i) {
                  for (int j = 0; j < 4; ++j) {
                    double v = 0;
                    for (int a = 0; a < 4; ++a)
                      for (int b = 0; b < 4; ++b) v += kBT[i][a] * d(a, b) * kBT[j][b];
                    const size_t o = static_cast<size_t>(n * out_sample + ((ty * tw + tx) * kWinogradPoints + 4 * i + j) * c + ch);
                    check.near(o, out[o], v, kTol);
                  }
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
}

struct WinoOutCase {
  int64_t th = 1, tw = 1, c = 1;
  bool bias = true, residual = false;
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
  ActivationKind act = ActivationKind::kLinear;
  int64_t border_top = 0, border_left = 0, border_right = 0, border_bottom = 0;
};

void run_wino_out(Isa isa, const WinoOutCase& w, uint32_t seed) {
  Rng rng(seed);
  WinogradOutSpec s;
  s.tiles_h = w.th;
  s.tiles_w = w.tw;
  s.c = w.c;
  s.has_bias = w.bias;
  s.act = w.act;
  s.residual = w.residual;
  s.residual_at = w.residual_at;
  const int64_t oh = 2 * w.th, ow = 2 * w.tw;
  const int64_t ph = oh + w.border_top + w.border_bottom, pw = ow + w.border_left + w.border_right;
  if (ph != oh || pw != ow) {
    s.out_place.row_floats = pw * w.c;
    s.out_place.sample_floats = ph * pw * w.c;
    s.out_place.offset_floats = (w.border_top * pw + w.border_left) * w.c;
  }
  const std::vector<float> bias = rng.vec(w.c);
  s.bias_off = 0;
  const GuardedBuffer weights = guarded_weights(w.bias ? bias : std::vector<float>{});
  const KernelUnderTest k(isa, "f32-wino-out", [&](VecEmitter& ve) { emit_winograd_output(ve, s); });
  const int64_t in_sample = w.th * w.tw * kWinogradPoints * w.c, res_sample = oh * ow * w.c, out_sample = ph * pw * w.c;
  for (int64_t batch = 1; batch <= 3; ++batch) {
    GuardedBuffer in(static_cast<size_t>(batch * in_sample)), res(static_cast<size_t>(batch * res_sample));
    GuardedBuffer out(static_cast<size_t>(batch * out_sample));
    for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(-2.0f, 2.0f);
    if (w.residual) {
      for (size_t i = 0; i < res.size(); ++i) res[i] = rng.uniform(-2.0f, 2.0f);
    }
    std::vector<const void*> ins{in.data()};
    if (w.residual) ins.push_back(res.data());
    k.run(ins, out.data(), weights, batch);
    std::ostringstream what;
    what << isa_id(isa) << " f32-wino-out tiles " << w.th << "x" << w.tw << " c " << w.c << " bias " << w.bias
         << " residual " << w.residual
         << (w.residual_at == ResidualAt::kAfterActivation ? " after act" : "") << " act " << activation_name(w.act) << " border " << w.border_top << ","
         << w.border_bottom << "," << w.border_left << "," << w.border_right << " batch " << batch;
    Checker check(what.str());
    std::vector<bool> written(out.size(), false);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t ty = 0; ty < w.th; ++ty) {
        for (int64_t tx = 0; tx < w.tw; ++tx) {
          for (int64_t ch = 0; ch < w.c; ++ch) {
            auto m = [&](int a, int b) {
              return static_cast<double>(
                  in[static_cast<size_t>(n * in_sample + ((ty * w.tw + tx) * kWinogradPoints + 4 * a + b) * w.c + ch)]);
            };
            for (int u = 0; u < 2; ++u) {
              for (int v = 0; v < 2; ++v) {
                double y = 0;
                for (int a = 0; a < 4; ++a)
                  for (int b = 0; b < 4; ++b) y += kAT[u][a] * m(a, b) * kAT[v][b];
                const int64_t py = 2 * ty + u, px = 2 * tx + v;
                if (w.bias) y += bias[static_cast<size_t>(ch)];
                const double r = w.residual ? res[static_cast<size_t>(n * res_sample + (py * ow + px) * w.c + ch)] : 0.0;
                y = fused_epilogue_ref(w.act, y, w.residual, r, w.residual_at);
                const size_t o = static_cast<size_t>(n * out_sample + ((py + w.border_top) * pw + px + w.border_left) * w.c + ch);
                written[o] = true;
                check.near(o, out[o], y, kTol);
              }
            }
          }
        }
      }
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (!written[i]) check.untouched(i, out[i]);
    }
    check.guards(out, "output");
    check.guards(in, "input");
    check.guards(weights, "bias");
    if (!check.ok()) return;
  }
}

TEST_P(F32WinoOut, TilesAndChannelTails) {
  uint32_t seed = 100;
  for (int64_t c : tail_sweep(width(), 3)) {
    for (int64_t th = 1; th <= 3; ++th) {
      WinoOutCase w;
      w.th = th;
      w.tw = 1 + (c + 2 * th) % 5;
      w.c = c;
      w.bias = (c + th) % 3 != 0;
      w.residual = th == 2;
      if (c % 2 == 1) w.residual_at = ResidualAt::kAfterActivation;
      w.act = fused_acts()[static_cast<size_t>((c + th) % 3)];
      run_wino_out(isa(), w, seed++);
    }
  }
}

TEST_P(F32WinoOut, OutPlacement) {
  Rng pick(7);
  for (uint32_t seed = 200; seed < 200u + static_cast<uint32_t>(random_cases(12)); ++seed) {
    WinoOutCase w;
    w.th = pick.range(1, 4);
    w.tw = pick.range(1, 4);
    w.c = pick.range(1, 2 * width() + 1);
    w.border_top = pick.range(0, 2);
    w.border_bottom = pick.range(0, 2);
    w.border_left = pick.range(1, 2);
    w.border_right = pick.range(0, 2);
    w.act = fused_acts()[seed % 3];
    run_wino_out(isa(), w, seed);
  }
}

// winograd_weights: filter p * cout + co of group p holds (G g G^T)[p / 4][p % 4].
TEST(F32WinoWeights, MatchesGgGt) {
  Rng rng(9);
  for (int64_t cin : {1, 3}) {
    for (int64_t cout : {1, 5}) {
      const std::vector<float> g = rng.vec(9 * cin * cout);
      const std::vector<float> u = winograd_weights(g, cin, cout);
      ASSERT_EQ(u.size(), static_cast<size_t>(cin * kWinogradPoints * cout));
      for (int64_t ci = 0; ci < cin; ++ci) {
        for (int64_t co = 0; co < cout; ++co) {
          for (int p = 0; p < kWinogradPoints; ++p) {
            double v = 0;
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b)
                v += kG[p / 4][a] * g[static_cast<size_t>(((a * 3 + b) * cin + ci) * cout + co)] * kG[p % 4][b];
            EXPECT_NEAR(u[static_cast<size_t>(ci * kWinogradPoints * cout + p * cout + co)], v, 1e-6)
                << "cin " << cin << " cout " << cout << " ci " << ci << " co " << co << " point " << p;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
