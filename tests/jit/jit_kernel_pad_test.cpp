// Tester of the pad generator (emit_pad, x86/kernels.h): f32-pad copies (H, W, C) into a bordered
// (H+top+bottom, W+left+right, C*dm) buffer filled with a value, replicating each channel dm times;
// f32-padborder fills only the border of a buffer whose interior a producer wrote (in place).
// Data movement: compared bit for bit, across every channel tail and the fill/copy loop switch
// (more than 4 vectors per row segment loops), borders of 0..3 and batches 1..3.
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/kernels.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

void run_pad(Isa isa, const PadSpec& s, uint32_t seed) {
  Rng rng(seed);
  std::ostringstream what;
  what << isa_id(isa) << (s.border_only ? " padborder" : " pad") << " " << s.h << "x" << s.w << "x" << s.c << " dm "
       << s.dm << " t/b/l/r " << s.top << "/" << s.bottom << "/" << s.left << "/" << s.right << " value " << s.value;
  const KernelUnderTest k(isa, s.border_only ? "f32-padborder" : "f32-pad", [&](VecEmitter& ve) { emit_pad(ve, s); });
  const GuardedBuffer weights = guarded_weights({});
  const int64_t hp = s.h + s.top + s.bottom, wp = s.w + s.left + s.right, cd = s.c * s.dm;
  const int64_t in_sample = s.h * s.w * s.c, out_sample = hp * wp * cd;
  for (int64_t batch = 1; batch <= 3; ++batch) {
    GuardedBuffer in(static_cast<size_t>(batch * in_sample)), out(static_cast<size_t>(batch * out_sample));
    auto interior = [&](int64_t y, int64_t x) { return y >= s.top && y < s.top + s.h && x >= s.left && x < s.left + s.w; };
    std::vector<float> expect(out.size());
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t y = 0; y < hp; ++y) {
        for (int64_t x = 0; x < wp; ++x) {
          for (int64_t ch = 0; ch < cd; ++ch) {
            const size_t o = static_cast<size_t>(n * out_sample + (y * wp + x) * cd + ch);
            if (!interior(y, x)) {
              expect[o] = s.value;
            } else if (s.border_only) {
              out[o] = rng.uniform(-2.0f, 2.0f);  // the producer's interior: must survive as is
              expect[o] = out[o];
            } else {
              const size_t i = static_cast<size_t>(n * in_sample + ((y - s.top) * s.w + x - s.left) * s.c + ch / s.dm);
              if (std::isnan(in[i])) in[i] = rng.uniform(-2.0f, 2.0f);
              expect[o] = in[i];
            }
          }
        }
      }
    }
    // padborder runs in place: its input is the bordered buffer itself.
    const std::vector<const void*> ins{s.border_only ? static_cast<const void*>(out.data()) : in.data()};
    k.run(ins, out.data(), weights, batch);
    Checker check(what.str() + " batch " + std::to_string(batch));
    for (size_t i = 0; i < out.size(); ++i) check.exact(i, out[i], expect[i]);
    check.guards(out, "output");
    check.guards(in, "input");
    if (!check.ok()) return;
  }
}

NND_KERNEL_TEST_SUITE(F32Pad);
NND_KERNEL_TEST_SUITE(F32Padborder);

TEST_P(F32Pad, ChannelTailsAndBorders) {
  uint32_t seed = 1;
  for (int64_t c : tail_sweep(width(), 6)) {
    for (int64_t border = 0; border <= 3; ++border) {
      PadSpec s;
      s.h = 1 + (c + border) % 4;
      s.w = 1 + (c * 3 + border) % 7;
      s.c = c;
      s.top = border;
      s.bottom = (border + 1) % 3;
      s.left = (border + 2) % 4;
      s.right = border == 3 ? 0 : 1;
      s.value = border == 2 ? -std::numeric_limits<float>::infinity() : border == 1 ? 0.5f : 0.0f;
      run_pad(isa(), s, seed++);
    }
  }
}

// Depthwise multipliers: every channel stored dm times (dm across a vector width and its tails).
TEST_P(F32Pad, DepthMultiplier) {
  uint32_t seed = 100;
  for (int64_t dm : {int64_t{2}, int64_t{3}, int64_t{width() - 1}, int64_t{width()}, int64_t{width() + 1},
                     int64_t{2 * width() + 3}}) {
    if (dm < 2) continue;
    for (int64_t c : {int64_t{1}, int64_t{3}, int64_t{width() + 1}}) {
      PadSpec s;
      s.h = 3;
      s.w = 2 + c % 3;
      s.c = c;
      s.dm = dm;
      s.top = s.left = 1;
      s.bottom = s.right = c % 2;
      run_pad(isa(), s, seed++);
    }
  }
}

TEST_P(F32Padborder, ChannelTailsAndBorders) {
  uint32_t seed = 200;
  for (int64_t c : tail_sweep(width(), 6)) {
    for (int64_t border = 0; border <= 3; ++border) {
      PadSpec s;
      s.h = 1 + (c + border) % 5;
      s.w = 1 + (c * 5 + border) % 9;
      s.c = c;
      s.top = (border + 1) % 3;
      s.bottom = border;
      s.left = border;
      s.right = (border + 1) % 4;
      s.value = border == 1 ? -std::numeric_limits<float>::infinity() : 0.0f;
      s.border_only = true;
      run_pad(isa(), s, seed++);
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
