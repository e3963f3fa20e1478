// Testers of the element-wise and data-movement generators of x86/kernels.h: emit_unary
// (f32-vact-<act>, f32-vrelu, f32-affine, u8-to-f32), emit_helper_call (f32-call-*), emit_merge
// (f32-merge), emit_concat (f32-concat) and emit_position_scale (f32-posscale). Each runs over
// every tail length of its vector loop and batches 1..3; data movement and single IEEE operations
// are compared bit for bit, everything else against float64 within kTol.
#include <gtest/gtest.h>

#include <sstream>

#include "core/jit/x86/kernels.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

// Counts per sample covering every tail of a vector loop, a loop of a few vectors and a single one.
std::vector<int64_t> counts(int W) {
  std::vector<int64_t> c = tail_sweep(W, 5);
  c.push_back(1);
  c.push_back(W);
  return c;
}

double vact_ref(ActivationKind k, double x) {
  using K = ActivationKind;
  const auto relu6 = [](double v) { return std::min(std::max(v, 0.0), 6.0); };
  switch (k) {
    case K::kLinear: return x;
    case K::kRelu: return std::max(x, 0.0);
    case K::kRelu6: return relu6(x);
    case K::kLeakyRelu: return x > 0 ? x : 0.2 * x;
    case K::kHardSigmoidK2: return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
    case K::kHardSigmoidK3: return relu6(x + 3) / 6;
    case K::kHardSwish: return x * relu6(x + 3) / 6;
    case K::kSoftsign: return x / (1 + std::fabs(x));
    case K::kReciprocal: return 1 / x;
    case K::kSqrt: return std::sqrt(x);
    case K::kAbs: return std::fabs(x);
    case K::kSigmoid: return 1 / (1 + std::exp(-x));
    case K::kTanh: return std::tanh(x);
    case K::kSoftplus: return std::log1p(std::exp(x));
    default: throw std::logic_error("vact_ref: no reference for this kind");
  }
}

NND_KERNEL_TEST_SUITE(F32Vact);
NND_KERNEL_TEST_SUITE(F32Vrelu);
NND_KERNEL_TEST_SUITE(F32Affine);
NND_KERNEL_TEST_SUITE(U8ToF32);
NND_KERNEL_TEST_SUITE(F32Call);
NND_KERNEL_TEST_SUITE(F32Merge);
NND_KERNEL_TEST_SUITE(F32Concat);
NND_KERNEL_TEST_SUITE(F32Posscale);

TEST_P(F32Vact, EveryKindEveryTail) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 1;
  for (int ki = 0; ki <= static_cast<int>(kLastActivationKind); ++ki) {
    const auto act = static_cast<ActivationKind>(ki);
    if (!unary_vectorised(act)) continue;
    // sqrt of a negative is NaN, which an unwritten output also is: positive inputs only.
    const float lo = act == ActivationKind::kSqrt ? 0.0f : -8.0f;
    for (int64_t count : counts(width())) {
      UnarySpec s;
      s.count = count;
      s.act = act;
      check_unary_kernel(isa(), std::string("f32-vact-") + activation_name(act), [&](VecEmitter& ve) { emit_unary(ve, s); },
                         none, count, lo, 8.0f, seed++, [&](int64_t, float x) { return vact_ref(act, x); }, kTol);
    }
  }
}

TEST_P(F32Vrelu, SlopeAndMax) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 100;
  for (int variant = 0; variant < 4; ++variant) {
    for (int64_t count : counts(width())) {
      UnarySpec s;
      s.count = count;
      s.relu_layer = true;
      s.negative_slope = variant & 1 ? 0.3f : 0.0f;
      s.has_max = (variant & 2) != 0;
      s.max_value = s.has_max ? 2.5f : 0.0f;
      check_unary_kernel(isa(), "f32-vrelu", [&](VecEmitter& ve) { emit_unary(ve, s); }, none, count, -8.0f, 8.0f, seed++,
                         [&](int64_t, float x) {
                           double y = std::max<double>(x, 0.0) + double{s.negative_slope} * std::min<double>(x, 0.0);
                           return s.has_max ? std::min(y, double{s.max_value}) : y;
                         },
                         kTol);
    }
  }
}

// BatchNorm: per-channel scale and shift (padded to 16 floats, as the engine stores them) and a
// vectorised activation, over positions of C channels with every channel tail.
TEST_P(F32Affine, ChannelTails) {
  Rng rng(200);
  uint32_t seed = 200;
  for (int64_t c : tail_sweep(width(), 4)) {
    for (ActivationKind act : {ActivationKind::kLinear, ActivationKind::kRelu, ActivationKind::kHardSwish}) {
      const int64_t padded = (c + 15) / 16 * 16;
      std::vector<float> scale = rng.vec(padded), shift = rng.vec(padded);
      std::vector<float> blob = scale;
      blob.insert(blob.end(), shift.begin(), shift.end());
      UnarySpec s;
      s.channels = c;
      s.count = c * (1 + c % 5);
      s.scale_off = 0;
      s.shift_off = padded;
      s.act = act;
      check_unary_kernel(isa(), "f32-affine", [&](VecEmitter& ve) { emit_unary(ve, s); }, guarded_weights(blob), s.count,
                         -4.0f, 4.0f, seed++,
                         [&](int64_t i, float x) {
                           const size_t ch = static_cast<size_t>(i % c);
                           return vact_ref(act, static_cast<double>(x) * scale[ch] + shift[ch]);
                         },
                         kTol);
    }
  }
}

// uint8 input conversion: exact, every tail, all 256 values.
TEST_P(U8ToF32, EveryTail) {
  const GuardedBuffer none = guarded_weights({});
  Rng rng(300);
  for (int64_t count : counts(width())) {
    UnarySpec s;
    s.count = count + 256;
    s.u8 = true;
    const KernelUnderTest k(isa(), "u8-to-f32", [&](VecEmitter& ve) { emit_unary(ve, s); });
    for (int64_t batch = 1; batch <= 3; ++batch) {
      const size_t n = static_cast<size_t>(batch * s.count);
      GuardedBuffer in_store((n + 3) / 4), out(n);
      auto* bytes = reinterpret_cast<uint8_t*>(in_store.data());
      for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i < 256 ? i : rng.range(0, 255));
      k.run({bytes}, out.data(), none, batch);
      Checker check(std::string(isa_id(isa())) + " u8-to-f32 count " + std::to_string(s.count) + " batch " +
                    std::to_string(batch));
      for (size_t i = 0; i < n; ++i) check.exact(i, out[i], static_cast<float>(bytes[i]));
      check.guards(out, "output");
      if (!check.ok()) return;
    }
  }
}

// Helper calls: the float64 helpers through the helper table, with the batch scaling the count.
TEST_P(F32Call, ActivationAndSoftmax) {
  uint32_t seed = 400;
  for (int64_t count : counts(width())) {
    const GuardedBuffer sig = guarded_weights(
        {static_cast<float>(HelperTag::kActivation), static_cast<float>(static_cast<int>(ActivationKind::kSigmoid)), 0, 0});
    check_unary_kernel(isa(), "f32-call-act-sigmoid",
                       [&](VecEmitter& ve) { emit_helper_call(ve, kHelperUnary, count, 0); }, sig, count, -8.0f, 8.0f,
                       seed++, [](int64_t, float x) { return vact_ref(ActivationKind::kSigmoid, x); }, kTol);
  }
  // Softmax over rows of `len`: the helper must see the whole batch's rows.
  for (int64_t len : {int64_t{1}, int64_t{3}, int64_t{width() + 1}}) {
    const int64_t count = len * 3;
    const GuardedBuffer params =
        guarded_weights({static_cast<float>(HelperTag::kSoftmax), static_cast<float>(len), 1.0f, 0.0f});
    const KernelUnderTest k(isa(), "f32-call-softmax",
                            [&](VecEmitter& ve) { emit_helper_call(ve, kHelperUnary, count, 0); });
    Rng rng(seed++);
    for (int64_t batch = 1; batch <= 3; ++batch) {
      GuardedBuffer in(static_cast<size_t>(batch * count)), out(static_cast<size_t>(batch * count));
      for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(-5.0f, 5.0f);
      k.run({in.data()}, out.data(), params, batch);
      Checker check(std::string(isa_id(isa())) + " f32-call-softmax len " + std::to_string(len) + " batch " +
                    std::to_string(batch));
      for (size_t r = 0; r < in.size() / static_cast<size_t>(len); ++r) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; ++j) mx = std::max<double>(mx, in[r * len + j]);
        for (int64_t j = 0; j < len; ++j) sum += std::exp(in[r * len + j] - mx);
        for (int64_t j = 0; j < len; ++j) {
          const size_t i = r * static_cast<size_t>(len) + static_cast<size_t>(j);
          check.near(i, out[i], std::exp(in[i] - mx) / sum, kTol);
        }
      }
      check.guards(out, "output");
      if (!check.ok()) return;
    }
  }
}

// Merges of 1..4 inputs: the same float operations in the same order, so bit for bit.
TEST_P(F32Merge, OpsInputsTails) {
  const GuardedBuffer none = guarded_weights({});
  uint32_t seed = 500;
  for (BinOp op : {BinOp::kAdd, BinOp::kSub, BinOp::kMul, BinOp::kMax, BinOp::kMin}) {
    for (int inputs = 1; inputs <= 4; ++inputs) {
      for (int64_t count : counts(width())) {
        const float div = op == BinOp::kAdd && inputs == 3 ? 3.0f : 1.0f;  // Average
        const MergeSpec spec{op, inputs, count, div};
        const KernelUnderTest k(isa(), "f32-merge", [&](VecEmitter& ve) { emit_merge(ve, spec); });
        Rng rng(seed++);
        for (int64_t batch = 1; batch <= 3; ++batch) {
          const size_t n = static_cast<size_t>(batch * count);
          std::vector<GuardedBuffer> in;
          std::vector<const void*> ptrs;
          for (int i = 0; i < inputs; ++i) in.emplace_back(n);
          for (auto& b : in) {
            for (size_t i = 0; i < n; ++i) b[i] = rng.uniform(-4.0f, 4.0f);
            ptrs.push_back(b.data());
          }
          GuardedBuffer out(n);
          k.run(ptrs, out.data(), none, batch);
          Checker check(std::string(isa_id(isa())) + " f32-merge op " + std::to_string(static_cast<int>(op)) + " inputs " +
                        std::to_string(inputs) + " count " + std::to_string(count) + " batch " + std::to_string(batch));
          for (size_t i = 0; i < n; ++i) {
            float r = in[0][i];
            for (int j = 1; j < inputs; ++j) {
              const float x = in[static_cast<size_t>(j)][i];
              switch (op) {
                case BinOp::kAdd: r = r + x; break;
                case BinOp::kSub: r = r - x; break;
                case BinOp::kMul: r = r * x; break;
                case BinOp::kMax: r = std::max(r, x); break;
                case BinOp::kMin: r = std::min(r, x); break;
              }
            }
            if (div != 1.0f) r = r / div;
            check.exact(i, out[i], r);
          }
          check.guards(out, "output");
          for (const auto& b : in) check.guards(b, "input");
          if (!check.ok()) return;
        }
      }
    }
  }
}

// Concatenation of 1..3 inputs per outer index: inner sizes across every tail and the copy loop
// (more than 4 vectors).
TEST_P(F32Concat, InnerTails) {
  const GuardedBuffer none = guarded_weights({});
  const int W = width();
  uint32_t seed = 600;
  const std::vector<std::vector<int64_t>> shapes{{1}, {W - 1 > 0 ? W - 1 : 1, 1}, {W, W + 1, 2 * W + 3},
                                                 {5 * W + 1, 3}, {6 * W, 1, 7}};
  for (const auto& inner : shapes) {
    for (int64_t outer : {1, 2, 5}) {
      const KernelUnderTest k(isa(), "f32-concat", [&](VecEmitter& ve) { emit_concat(ve, outer, inner); });
      Rng rng(seed++);
      int64_t total = 0;
      for (int64_t x : inner) total += x;
      for (int64_t batch = 1; batch <= 3; ++batch) {
        std::vector<GuardedBuffer> in;
        std::vector<const void*> ptrs;
        for (int64_t x : inner) in.emplace_back(static_cast<size_t>(batch * outer * x));
        for (auto& b : in) {
          for (size_t i = 0; i < b.size(); ++i) b[i] = rng.uniform(-4.0f, 4.0f);
          ptrs.push_back(b.data());
        }
        GuardedBuffer out(static_cast<size_t>(batch * outer * total));
        k.run(ptrs, out.data(), none, batch);
        std::ostringstream what;
        what << isa_id(isa()) << " f32-concat outer " << outer << " inner";
        for (int64_t x : inner) what << " " << x;
        Checker check(what.str() + " batch " + std::to_string(batch));
        size_t o = 0;
        for (int64_t r = 0; r < batch * outer; ++r) {
          for (size_t i = 0; i < inner.size(); ++i) {
            for (int64_t j = 0; j < inner[i]; ++j, ++o) check.exact(o, out[o], in[i][static_cast<size_t>(r * inner[i] + j)]);
          }
        }
        check.guards(out, "output");
        for (const auto& b : in) check.guards(b, "input");
        if (!check.ok()) return;
      }
    }
  }
}

// Average pooling with padding: y[n, p, c] = x[n, p, c] * map[p], every channel tail.
TEST_P(F32Posscale, ChannelTails) {
  uint32_t seed = 700;
  for (int64_t c : tail_sweep(width(), 4)) {
    const int64_t positions = 1 + c % 6;
    Rng rng(seed++);
    const std::vector<float> map = rng.vec(positions, 0.1f, 1.0f);
    check_unary_kernel(isa(), "f32-posscale", [&](VecEmitter& ve) { emit_position_scale(ve, positions, c, 0); },
                       guarded_weights(map), positions * c, -4.0f, 4.0f, seed++,
                       [&](int64_t i, float x) { return x * map[static_cast<size_t>(i / c)]; }, 0.0);
  }
}

}  // namespace
}  // namespace nnd::jit::test
