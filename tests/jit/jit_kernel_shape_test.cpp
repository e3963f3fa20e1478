// Testers of the data-movement and normalisation generators (x86/kernels_shape.h): f32-gather
// (index maps through gather_from_map: permutations, crops, repeats, zero-inserted maps; and a
// weighted two-tap table), f32-transpose (both orientations, full and partial blocks, several
// matrices per sample) and permute_as_transpose, f32-vparam (PReLU and per-element affine) and f32-layernorm, over every
// tail length, runs of 1..many vectors and batches 1..3.
#include <gtest/gtest.h>

#include <bit>
#include <sstream>

#include "core/jit/x86/kernels_shape.h"
#include "tests/jit/kernel_tester.h"

namespace nnd::jit::test {
namespace {

NND_KERNEL_TEST_SUITE(F32Gather);
NND_KERNEL_TEST_SUITE(F32Transpose);
NND_KERNEL_TEST_SUITE(F32Vparam);
NND_KERNEL_TEST_SUITE(F32Layernorm);

// Runs a gather kernel and checks output i of every sample against expect(sample input, i)
// (NaN-free inputs; bit for bit when tol is 0).
void run_gather(Isa isa, const GatherSpec& s, const std::vector<float>& table, const std::string& what, uint32_t seed,
                const std::function<double(const float*, int64_t)>& expect, double tol) {
  const GuardedBuffer weights = guarded_weights(table);
  const KernelUnderTest k(isa, "f32-gather", [&](VecEmitter& ve) { emit_gather(ve, s); });
  Rng rng(seed);
  for (int64_t batch = 1; batch <= 3; ++batch) {
    GuardedBuffer in(static_cast<size_t>(batch * s.in_count)), out(static_cast<size_t>(batch * s.out_count));
    for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(-2.0f, 2.0f);
    k.run({in.data()}, out.data(), weights, batch);
    Checker check(std::string(isa_id(isa)) + " f32-gather " + what + " len " + std::to_string(s.len) + " runs " +
                  std::to_string(s.runs) + " batch " + std::to_string(batch));
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t i = 0; i < s.out_count; ++i) {
        const size_t o = static_cast<size_t>(n * s.out_count + i);
        const double r = expect(in.data() + n * s.in_count, i);
        if (tol == 0) check.exact(o, out[o], static_cast<float>(r));
        else check.near(o, out[o], r, tol);
      }
    }
    check.guards(out, "output");
    check.guards(in, "input");
    check.guards(weights, "table");
    if (!check.ok()) return;
  }
}

void run_map(Isa isa, const std::vector<int64_t>& map, int64_t in_count, const std::string& what, uint32_t seed) {
  GatherSpec s;
  std::vector<float> table;
  gather_from_map(map, in_count, s, table);
  run_gather(isa, s, table, what, seed,
             [&](const float* in, int64_t i) { return map[static_cast<size_t>(i)] < 0 ? 0.0 : in[map[static_cast<size_t>(i)]]; },
             0.0);
}

// Both orientations (rows <= cols: strided reads; rows > cols: strided writes), blocks of 16 full,
// partial and both, one and several matrices per sample: bit for bit, nothing else written.
TEST_P(F32Transpose, EveryShapeBitForBit) {
  uint32_t seed = 1;
  const TransposeSpec shapes[] = {{1, 3, 256}, {1, 256, 3}, {1, 2, 2}, {1, 16, 40}, {1, 40, 16}, {1, 17, 17},
                                  {1, 35, 50}, {1, 50, 35}, {3, 4, 9}, {2, 33, 5}, {1, 1000, 2}, {1, 2, 1000}};
  for (const TransposeSpec& s : shapes) {
    const KernelUnderTest k(isa(), "f32-transpose", [&](VecEmitter& ve) { emit_transpose(ve, s); });
    const GuardedBuffer none = guarded_weights({});
    const int64_t count = s.outer * s.rows * s.cols;
    Rng rng(seed++);
    for (int64_t batch = 1; batch <= 3; ++batch) {
      GuardedBuffer in(static_cast<size_t>(batch * count)), out(static_cast<size_t>(batch * count));
      for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(-2.0f, 2.0f);
      k.run({in.data()}, out.data(), none, batch);
      std::ostringstream what;
      what << isa_id(isa()) << " f32-transpose " << s.outer << " x " << s.rows << " x " << s.cols << " batch " << batch;
      Checker check(what.str());
      for (int64_t o = 0; o < batch * s.outer; ++o) {
        for (int64_t i = 0; i < s.rows; ++i) {
          for (int64_t j = 0; j < s.cols; ++j) {
            const size_t at_out = static_cast<size_t>((o * s.cols + j) * s.rows + i);
            check.exact(at_out, out[at_out], in[static_cast<size_t>((o * s.rows + i) * s.cols + j)]);
          }
        }
      }
      check.guards(out, "output");
      check.guards(in, "input");
      if (!check.ok()) break;
    }
  }
}

// Which permutations of a sample's axes are transposes, and of what.
TEST(PermuteAsTranspose, SwapsOfTheLastTwoAxisGroups) {
  const auto t = [](const std::vector<int64_t>& shape, const std::vector<int>& perm) {
    const std::optional<TransposeSpec> r = permute_as_transpose(shape, perm);
    return r ? std::to_string(r->outer) + "x" + std::to_string(r->rows) + "x" + std::to_string(r->cols) : "-";
  };
  EXPECT_EQ(t({3, 16, 20}, {1, 2, 0}), "1x3x320") << "NCHW -> NHWC";
  EXPECT_EQ(t({16, 20, 3}, {2, 0, 1}), "1x320x3") << "NHWC -> NCHW";
  EXPECT_EQ(t({5, 7}, {1, 0}), "1x5x7");
  EXPECT_EQ(t({2, 5, 7}, {0, 2, 1}), "2x5x7") << "a leading axis stays: several matrices";
  EXPECT_EQ(t({2, 3, 4, 5}, {0, 3, 1, 2}), "2x12x5");
  EXPECT_EQ(t({2, 3, 4, 5}, {2, 3, 0, 1}), "1x6x20");
  EXPECT_EQ(t({2, 3, 4}, {0, 1, 2}), "-") << "the identity";
  EXPECT_EQ(t({2, 3, 4}, {1, 0, 2}), "-") << "the last axis stays: runs, the gather's";
  EXPECT_EQ(t({2, 3, 4}, {2, 1, 0}), "-") << "a reversal is no swap of two groups";
  EXPECT_EQ(t({1, 3, 4}, {1, 2, 0}), "-") << "a group of one element: a copy";
  EXPECT_EQ(t({3, 4}, {1}), "-") << "a permutation of another rank";
}

// Index maps of the shape layers, sized so runs cover every tail and several vectors.
TEST_P(F32Gather, IndexMaps) {
  uint32_t seed = 1;
  for (int64_t c : tail_sweep(width(), 4)) {
    // Permute (H, W, C) -> (W, H, C): runs of C.
    const int64_t h = 3, w = 2 + c % 3;
    std::vector<int64_t> perm;
    for (int64_t x = 0; x < w; ++x)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t ch = 0; ch < c; ++ch) perm.push_back((y * w + x) * c + ch);
    run_map(isa(), perm, h * w * c, "permute c " + std::to_string(c), seed++);
    // Crop one pixel off each side, and zero-insert (a stride-2 transposed convolution's input).
    std::vector<int64_t> crop, zeros;
    for (int64_t y = 1; y + 1 < h; ++y)
      for (int64_t x = 1; x + 1 < w; ++x)
        for (int64_t ch = 0; ch < c; ++ch) crop.push_back((y * w + x) * c + ch);
    if (!crop.empty()) run_map(isa(), crop, h * w * c, "crop c " + std::to_string(c), seed++);
    for (int64_t y = 0; y < 2 * h - 1; ++y)
      for (int64_t x = 0; x < 2 * w - 1; ++x)
        for (int64_t ch = 0; ch < c; ++ch) zeros.push_back(y % 2 || x % 2 ? -1 : ((y / 2) * w + x / 2) * c + ch);
    run_map(isa(), zeros, h * w * c, "zero-insert c " + std::to_string(c), seed++);
    // RepeatVector of a whole row of c floats, 3 times.
    std::vector<int64_t> rep;
    for (int r = 0; r < 3; ++r)
      for (int64_t ch = 0; ch < c; ++ch) rep.push_back(ch);
    run_map(isa(), rep, c, "repeat c " + std::to_string(c), seed++);
  }
}

// Two taps per run with float weights (bilinear upsampling): out = w0 * in[src0 + j] + w1 * in[src1 + j].
TEST_P(F32Gather, WeightedTaps) {
  uint32_t seed = 100;
  Rng rng(99);
  for (int64_t len : tail_sweep(width(), 5)) {
    GatherSpec s;
    s.taps = 2;
    s.len = len;
    s.in_count = 4 * len;
    s.runs = 3;
    s.out_count = s.runs * len;
    std::vector<float> table;
    std::vector<std::array<int64_t, 2>> srcs;
    std::vector<std::array<float, 2>> ws;
    for (int64_t r = 0; r < s.runs; ++r) {
      const std::array<int64_t, 2> src{rng.range(0, 3) * len, rng.range(0, 3) * len};
      const std::array<float, 2> w{rng.uniform(0.0f, 1.0f), rng.uniform(0.0f, 1.0f)};
      table.push_back(std::bit_cast<float>(static_cast<int32_t>(src[0])));
      table.push_back(std::bit_cast<float>(static_cast<int32_t>(src[1])));
      table.push_back(std::bit_cast<float>(static_cast<int32_t>(r * len)));
      table.push_back(w[0]);
      table.push_back(w[1]);
      srcs.push_back(src);
      ws.push_back(w);
    }
    run_gather(isa(), s, table, "2 taps", seed++,
               [&](const float* in, int64_t i) {
                 const size_t r = static_cast<size_t>(i / len);
                 const int64_t j = i % len;
                 return double{ws[r][0]} * in[srcs[r][0] + j] + double{ws[r][1]} * in[srcs[r][1] + j];
               },
               kTol);
  }
}

TEST_P(F32Vparam, PReluAndAffine) {
  uint32_t seed = 200;
  Rng rng(7);
  for (ParamOp op : {ParamOp::kPRelu, ParamOp::kAffine}) {
    for (int64_t count : tail_sweep(width(), 5)) {
      const std::vector<float> a = rng.vec(count), b = rng.vec(count);
      std::vector<float> blob = a;
      blob.insert(blob.end(), b.begin(), b.end());
      ParamEltSpec s;
      s.op = op;
      s.count = count;
      s.a_off = 0;
      s.b_off = count;
      const std::string what = op == ParamOp::kPRelu ? "f32-vparam-prelu" : "f32-vparam-affine";
      check_unary_kernel(
          isa(), what, [&](VecEmitter& ve) { emit_param_elt(ve, s); }, guarded_weights(blob), count, -4.0f, 4.0f, seed++,
          [&](int64_t i, float x) {
            const float ai = a[static_cast<size_t>(i)];
            if (op == ParamOp::kPRelu) return static_cast<double>(x > 0 ? x : ai * x);
            return static_cast<double>(x) * ai + b[static_cast<size_t>(i)];
          },
          op == ParamOp::kPRelu ? 0.0 : kTol);
    }
  }
}

TEST_P(F32Layernorm, BlocksAndTails) {
  uint32_t seed = 300;
  Rng rng(8);
  for (int64_t block : tail_sweep(width(), 6)) {
    for (int variant = 0; variant < 3; ++variant) {
      LayerNormSpec s;
      s.groups = 1 + variant;
      s.block = block;
      s.epsilon = variant == 2 ? 1e-5f : 1e-3f;
      const std::vector<float> gamma = rng.vec(block, 0.5f, 1.5f), beta = rng.vec(block);
      std::vector<float> blob;
      if (variant != 1) {  // variant 1: no gamma, no beta
        s.gamma_off = 0;
        s.beta_off = block;
        blob = gamma;
        blob.insert(blob.end(), beta.begin(), beta.end());
      }
      const GuardedBuffer weights = guarded_weights(blob);
      const KernelUnderTest k(isa(), "f32-layernorm", [&](VecEmitter& ve) { emit_layernorm(ve, s); });
      Rng data(seed++);
      for (int64_t batch = 1; batch <= 3; ++batch) {
        const size_t n = static_cast<size_t>(batch * s.groups * block);
        GuardedBuffer in(n), out(n);
        for (size_t i = 0; i < n; ++i) in[i] = data.uniform(-3.0f, 3.0f);
        k.run({in.data()}, out.data(), weights, batch);
        std::ostringstream what;
        what << isa_id(isa()) << " f32-layernorm groups " << s.groups << " block " << block << " affine "
             << (variant != 1) << " batch " << batch;
        Checker check(what.str());
        for (size_t r = 0; r < n / static_cast<size_t>(block); ++r) {
          const float* x = in.data() + r * static_cast<size_t>(block);
          double mean = 0, var = 0;
          for (int64_t j = 0; j < block; ++j) mean += x[j];
          mean /= static_cast<double>(block);
          for (int64_t j = 0; j < block; ++j) var += (x[j] - mean) * (x[j] - mean);
          var /= static_cast<double>(block);
          for (int64_t j = 0; j < block; ++j) {
            double y = (x[j] - mean) / std::sqrt(var + s.epsilon);
            if (variant != 1) y = y * gamma[static_cast<size_t>(j)] + beta[static_cast<size_t>(j)];
            const size_t o = r * static_cast<size_t>(block) + static_cast<size_t>(j);
            check.near(o, out[o], y, kTol);
          }
        }
        check.guards(out, "output");
        check.guards(in, "input");
        check.guards(weights, "gamma/beta");
        if (!check.ok()) break;
      }
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
