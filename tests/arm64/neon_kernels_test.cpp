// The NEON generators of core/jit/arm64/neon_kernels.h called one by one (each spec compiled
// alone through arm64::emit_function: the frame, the body, the constant pool), against float64 references written in this file: fast math within the
// bounds documented in generators/fast_math.h, window kernels (max / average pooling, depthwise with bias,
// activation and residual, bordered output) within 1e-5, over channel counts that leave every
// vector tail, odd strides and dilations, batches 1 to 3. Canary NaNs around every buffer catch a
// read or write outside it. Runs on the aarch64 build only (under qemu-aarch64 in the cross build).
#include <gtest/gtest.h>

#include <asmjit/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/jit/arm64/emit_function.h"
#include "core/jit/arm64/neon_kernels.h"
#include "core/jit/kernel_args.h"
#include "core/jit/kernel_config.h"

namespace nnd::jit::neon {
namespace {

constexpr uint32_t kCanaryBits = 0x7fc0dead;

float canary() {
  float f;
  std::memcpy(&f, &kCanaryBits, 4);
  return f;
}

// n floats with 32 canary floats on each side.
struct Guarded {
  explicit Guarded(size_t n, float fill = canary()) : n(n), store(n + 64, canary()) {
    std::fill(store.begin() + 32, store.begin() + 32 + static_cast<ptrdiff_t>(n), fill);
  }
  float* data() { return store.data() + 32; }
  float& operator[](size_t i) { return data()[i]; }
  bool guards_intact() const {
    for (size_t i = 0; i < 32; ++i) {
      uint32_t b0, b1;
      std::memcpy(&b0, &store[i], 4);
      std::memcpy(&b1, &store[32 + n + i], 4);
      if (b0 != kCanaryBits || b1 != kCanaryBits) return false;
    }
    return true;
  }
  size_t n;
  std::vector<float> store;
};

// One kernel spec as a callable function.
class Kernel {
 public:
  explicit Kernel(const KernelSpec& spec) {
    asmjit::CodeHolder code;
    code.init(rt_.environment());
    arm64::emit_function(code, spec, nullptr);
    if (rt_.add(&fn_, &code) != asmjit::kErrorOk) throw std::runtime_error("JitRuntime::add failed");
  }
  void run(std::vector<const void*> ins, float* out, float* weights, int64_t batch) const {
    const KernelArgs args{ins.data(), out, weights, batch, nullptr};
    fn_(&args);
  }

 private:
  asmjit::JitRuntime rt_;
  KernelFn fn_ = nullptr;
};

double scaled_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : INFINITY;
  const double e = std::fabs(got - ref) / std::max(1.0, std::fabs(ref));
  return std::isnan(e) ? INFINITY : e;
}

double relative_error(float got, double ref) {
  const double e = std::fabs(got - ref) / (std::fabs(ref) >= 1e-30 ? std::fabs(ref) : 1.0);
  return std::isnan(e) ? INFINITY : e;
}

// ---- fast math ----

double ref_act(ActivationKind k, double x, double alpha) {
  using K = ActivationKind;
  const double sig = 1 / (1 + std::exp(-x));
  const double sp = std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
  switch (k) {
    case K::kExponential: return std::exp(std::clamp(x, -87.0, 88.0));
    case K::kSigmoid: return sig;
    case K::kTanh: return std::tanh(x);
    case K::kSwish: return x * sig;
    case K::kSoftplus: return sp;
    case K::kElu: return x > 0 ? x : alpha * std::expm1(x);
    case K::kSelu: return 1.05070098735548049 * (x > 0 ? x : 1.67326324235437728 * std::expm1(x));
    case K::kGeluTanh: return x / (1 + std::exp(-2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case K::kGeluErf: return std::max(x, 0.0) - std::fabs(x) * std::erfc(std::fabs(x) / std::sqrt(2.0)) / 2;
    case K::kMish: return x * std::tanh(sp);
    default: return NAN;
  }
}

struct FastCase {
  ActivationKind act;
  double bound;
};

TEST(NeonFastMath, UnaryWithinTheDocumentedBounds) {
  using K = ActivationKind;
  const std::vector<FastCase> cases{{K::kExponential, 2e-6}, {K::kSigmoid, 2e-6}, {K::kTanh, 2e-6},
                                    {K::kSwish, 2e-6},       {K::kSoftplus, 2e-6}, {K::kElu, 2e-6},
                                    {K::kSelu, 2e-6},        {K::kMish, 2e-6},     {K::kGeluTanh, 2e-5},
                                    {K::kGeluErf, 2e-5}};
  for (const FastCase& c : cases) {
    for (int64_t count : {1, 3, 4, 7, 2001}) {
      FastUnarySpec s;
      s.count = count;
      s.act = c.act;
      s.alpha = 0.7f;
      const Kernel k(s);
      for (int64_t batch : {1, 3}) {
        const size_t n = static_cast<size_t>(count * batch);
        Guarded in(n), out(n);
        for (size_t i = 0; i < n; ++i) in[i] = -30.0f + 60.0f * static_cast<float>(i) / static_cast<float>(n);
        if (n > 4) {
          in[0] = 0.0f;
          in[1] = -1e-20f;
          in[2] = 1e-3f;
        }
        k.run({in.data()}, out.data(), nullptr, batch);
        double worst = 0;
        float at = 0;
        for (size_t i = 0; i < n; ++i) {
          const double e = relative_error(out[i], ref_act(c.act, in[i], 0.7));
          if (e > worst) worst = e, at = in[i];
        }
        EXPECT_LE(worst, c.bound) << activation_name(c.act) << " count " << count << " batch " << batch << " at x = " << at;
        EXPECT_TRUE(out.guards_intact() && in.guards_intact()) << activation_name(c.act) << " count " << count;
      }
    }
  }
}

TEST(NeonFastMath, SoftmaxRows) {
  std::mt19937 rng(5);
  for (int64_t len : {1, 2, 3, 4, 5, 8, 13, 67}) {
    for (int64_t rows : {1, 3}) {
      const Kernel k(FastSoftmaxSpec{rows, len});
      for (int64_t batch : {1, 2}) {
        const size_t n = static_cast<size_t>(len * rows * batch);
        Guarded in(n), out(n);
        std::uniform_real_distribution<float> d(-30.0f, 30.0f);
        for (size_t i = 0; i < n; ++i) in[i] = d(rng);
        k.run({in.data()}, out.data(), nullptr, batch);
        double worst = 0;
        for (size_t r = 0; r < n / static_cast<size_t>(len); ++r) {
          double mx = -INFINITY, sum = 0;
          for (int64_t i = 0; i < len; ++i) mx = std::max(mx, double{in[r * len + i]});
          for (int64_t i = 0; i < len; ++i) sum += std::exp(in[r * len + i] - mx);
          for (int64_t i = 0; i < len; ++i) {
            worst = std::max(worst, relative_error(out[r * len + i], std::exp(in[r * len + i] - mx) / sum));
          }
        }
        EXPECT_LE(worst, 5e-6) << "len " << len << " rows " << rows << " batch " << batch;
        EXPECT_TRUE(out.guards_intact() && in.guards_intact()) << "len " << len;
      }
    }
  }
}

// ---- window kernels ----

struct WindowCase {
  WindowOp op;
  int64_t c, out_h, out_w, kh, kw, sh, sw, dh, dw;
  int vmax, rows;
  bool bias = false, residual = false, border = false;
  ActivationKind act = ActivationKind::kLinear;
  float scale = 1.0f;
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
};

void check_window(const WindowCase& wc) {
  std::mt19937 rng(static_cast<uint32_t>(wc.c * 131 + wc.out_w * 7 + wc.kh));
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  WindowSpec s;
  s.op = wc.op;
  s.c = wc.c;
  s.out_h = wc.out_h;
  s.out_w = wc.out_w;
  s.kh = wc.kh, s.kw = wc.kw, s.sh = wc.sh, s.sw = wc.sw, s.dh = wc.dh, s.dw = wc.dw;
  s.in_h = (wc.out_h - 1) * wc.sh + (wc.kh - 1) * wc.dh + 1;
  s.in_w = (wc.out_w - 1) * wc.sw + (wc.kw - 1) * wc.dw + 1 + 1;  // one column no window reads
  s.has_bias = wc.bias;
  s.act = wc.act;
  s.residual = wc.residual;
  s.residual_at = wc.residual_at;
  s.scale = wc.scale;
  s.vmax = wc.vmax;
  s.rows = wc.rows;
  const int64_t bt = wc.border ? 1 : 0, bl = wc.border ? 2 : 0;
  const int64_t prow = wc.out_w + 2 * bl, psample = (wc.out_h + 2 * bt) * prow;
  if (wc.border) s.out_place = {prow * wc.c, psample * wc.c, (bt * prow + bl) * wc.c};
  std::vector<float> kernel(static_cast<size_t>(wc.kh * wc.kw * wc.c)), bias(static_cast<size_t>(wc.c));
  for (auto& x : kernel) x = d(rng);
  for (auto& x : bias) x = d(rng);
  std::vector<float> blob;
  if (wc.op == WindowOp::kDepthwise) pack_depthwise_weights(s, 4, kernel, wc.bias ? &bias : nullptr, blob);
  Guarded weights(blob.size() + 4);
  std::copy(blob.begin(), blob.end(), weights.data());
  const Kernel k(s);
  for (int64_t batch : {1, 3}) {
    const int64_t in_n = s.in_h * s.in_w * wc.c, out_n = wc.border ? psample * wc.c : wc.out_h * wc.out_w * wc.c;
    Guarded in(static_cast<size_t>(batch * in_n)), out(static_cast<size_t>(batch * out_n), -7.0f);
    Guarded res(static_cast<size_t>(batch * out_n));
    for (size_t i = 0; i < in.n; ++i) in[i] = d(rng);
    for (size_t i = 0; i < res.n; ++i) res[i] = d(rng);
    std::vector<const void*> ins{in.data()};
    if (wc.residual) ins.push_back(res.data());
    k.run(ins, out.data(), weights.data(), batch);
    int bad = 0;
    std::string first;
    std::vector<bool> written(out.n, false);
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t y = 0; y < wc.out_h; ++y) {
        for (int64_t x = 0; x < wc.out_w; ++x) {
          for (int64_t ch = 0; ch < wc.c; ++ch) {
            double acc = wc.op == WindowOp::kMax ? -INFINITY : 0.0;
            for (int64_t ky = 0; ky < wc.kh; ++ky) {
              for (int64_t kx = 0; kx < wc.kw; ++kx) {
                const double v = in[static_cast<size_t>(n * in_n + ((y * wc.sh + ky * wc.dh) * s.in_w + x * wc.sw + kx * wc.dw) * wc.c + ch)];
                if (wc.op == WindowOp::kMax) acc = std::max(acc, v);
                else if (wc.op == WindowOp::kSum) acc += v;
                else acc += v * kernel[static_cast<size_t>((ky * wc.kw + kx) * wc.c + ch)];
              }
            }
            if (wc.op == WindowOp::kSum) acc *= wc.scale;
            if (wc.op == WindowOp::kDepthwise && wc.bias) acc += bias[static_cast<size_t>(ch)];
            const size_t o = static_cast<size_t>(
                wc.border ? n * out_n + ((y + bt) * prow + x + bl) * wc.c + ch : n * out_n + (y * wc.out_w + x) * wc.c + ch);
            const bool res_last = wc.residual_at == ResidualAt::kAfterActivation;
            if (wc.residual && !res_last) acc += res[o];
            if (wc.act == ActivationKind::kRelu) acc = std::max(acc, 0.0);
            if (wc.act == ActivationKind::kRelu6) acc = std::min(std::max(acc, 0.0), 6.0);
            if (wc.residual && res_last) acc += res[o];
            written[o] = true;
            if (scaled_error(out[o], acc) > 1e-5 && ++bad == 1) {
              first = "index " + std::to_string(o) + " got " + std::to_string(out[o]) + " want " + std::to_string(acc);
            }
          }
        }
      }
    }
    for (size_t i = 0; i < out.n; ++i) {
      if (!written[i] && out[i] != -7.0f && ++bad == 1) first = "index " + std::to_string(i) + " outside the output written";
    }
    EXPECT_EQ(bad, 0) << "op " << static_cast<int>(wc.op) << " c " << wc.c << " out " << wc.out_h << "x" << wc.out_w
                      << " k " << wc.kh << "x" << wc.kw << " s " << wc.sh << "x" << wc.sw << " d " << wc.dh << "x"
                      << wc.dw << " vmax " << wc.vmax << " rows " << wc.rows << " batch " << batch << ": " << first;
    EXPECT_TRUE(out.guards_intact() && in.guards_intact() && weights.guards_intact() && res.guards_intact());
  }
}

TEST(NeonWindow, PoolingAndDepthwiseAgainstTheReference) {
  using K = ActivationKind;
  for (int64_t c : {1, 2, 3, 4, 5, 7, 8, 13, 17, 33}) {
    for (int vmax : {1, 2, 4}) {
      const int rows = vmax == 4 ? 4 : 6;
      check_window({WindowOp::kMax, c, 3, 5, 3, 3, 2, 2, 1, 1, vmax, rows});
      check_window({WindowOp::kSum, c, 4, 3, 2, 2, 2, 2, 1, 1, vmax, rows, false, false, false, K::kLinear, 0.25f});
      check_window({WindowOp::kDepthwise, c, 5, 7, 3, 3, 1, 1, 1, 1, vmax, rows, true, false, false, K::kRelu6});
      check_window({WindowOp::kDepthwise, c, 3, 4, 3, 3, 2, 1, 2, 2, vmax, 2, false, true, false, K::kRelu});
      check_window({WindowOp::kDepthwise, c, 3, 4, 3, 3, 1, 1, 1, 1, vmax, 2, true, true, false, K::kRelu6, 1.0f,
                    ResidualAt::kAfterActivation});
      check_window({WindowOp::kDepthwise, c, 4, 9, 5, 5, 1, 2, 1, 1, vmax, rows, true, false, true, K::kLinear});
      check_window({WindowOp::kMax, c, 2, 2, 2, 2, 2, 2, 1, 1, vmax, 1, false, false, true});
    }
  }
}

// ---- layer normalisation, gather ----

TEST(NeonLayerNorm, RowsWithAndWithoutGammaBeta) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-3.0f, 5.0f);
  for (int64_t block : {1, 2, 3, 4, 5, 7, 16, 17, 67}) {
    for (int params = 0; params < 3; ++params) {
      LayerNormSpec s;
      s.groups = 3;
      s.block = block;
      s.epsilon = 1e-3f;
      Guarded weights(static_cast<size_t>(2 * block));
      for (size_t i = 0; i < weights.n; ++i) weights[i] = d(rng);
      if (params >= 1) s.gamma_off = 0;
      if (params >= 2) s.beta_off = block;
      const Kernel k(s);
      for (int64_t batch : {1, 2}) {
        const size_t n = static_cast<size_t>(batch * s.groups * block);
        Guarded in(n), out(n);
        for (size_t i = 0; i < n; ++i) in[i] = d(rng);
        k.run({in.data()}, out.data(), weights.data(), batch);
        double worst = 0;
        for (size_t r = 0; r < n / static_cast<size_t>(block); ++r) {
          double mean = 0, var = 0;
          for (int64_t i = 0; i < block; ++i) mean += in[r * block + i];
          mean /= static_cast<double>(block);
          for (int64_t i = 0; i < block; ++i) var += (in[r * block + i] - mean) * (in[r * block + i] - mean);
          var /= static_cast<double>(block);
          for (int64_t i = 0; i < block; ++i) {
            double y = (in[r * block + i] - mean) / std::sqrt(var + 1e-3);
            if (s.gamma_off >= 0) y *= weights[static_cast<size_t>(i)];
            if (s.beta_off >= 0) y += weights[static_cast<size_t>(block + i)];
            worst = std::max(worst, scaled_error(out[r * block + i], y));
          }
        }
        EXPECT_LE(worst, 1e-5) << "block " << block << " params " << params << " batch " << batch;
        EXPECT_TRUE(out.guards_intact() && in.guards_intact() && weights.guards_intact()) << "block " << block;
      }
    }
  }
}

float bits_float(int32_t v) {
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

// out[i] = sum over taps of w[t] * in[src[t] + j] per run, as the table says; zero where no run writes.
void check_gather(const GatherSpec& s, const std::vector<float>& table, const std::string& what) {
  Guarded weights(table.size() + 4);
  std::copy(table.begin(), table.end(), weights.data() + s.table_off);
  const Kernel k(s);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (int64_t batch : {1, 3}) {
    Guarded in(static_cast<size_t>(batch * s.in_count)), out(static_cast<size_t>(batch * s.out_count), s.zero_fill ? -9.0f : 0.0f);
    for (size_t i = 0; i < in.n; ++i) in[i] = d(rng);
    k.run({in.data()}, out.data(), weights.data(), batch);
    std::vector<double> want(out.n, 0.0);
    const int T = s.taps;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t r = 0; r < s.runs; ++r) {
        const float* e = table.data() + r * run_entries(T);
        int32_t dst;
        std::memcpy(&dst, &e[T], 4);
        for (int64_t j = 0; j < s.len; ++j) {
          double v = 0;
          for (int t = 0; t < T; ++t) {
            int32_t src;
            std::memcpy(&src, &e[t], 4);
            v += (T > 1 ? e[T + 1 + t] : 1.0) * in[static_cast<size_t>(n * s.in_count + src + j)];
          }
          want[static_cast<size_t>(n * s.out_count + dst + j)] = v;
        }
      }
    }
    double worst = 0;
    for (size_t i = 0; i < out.n; ++i) worst = std::max(worst, scaled_error(out[i], want[i]));
    EXPECT_LE(worst, 1e-6) << what << " batch " << batch;
    EXPECT_TRUE(out.guards_intact() && in.guards_intact() && weights.guards_intact()) << what;
  }
}

// Both orientations, full and partial blocks of 16, several matrices per sample, displacements
// past LDR's immediate range (a block of 16 rows 300 floats apart): bit for bit, guards intact.
TEST(NeonTranspose, EveryShapeBitForBit) {
  const TransposeSpec shapes[] = {{1, 3, 256}, {1, 256, 3}, {1, 2, 2},  {1, 17, 17},
                                  {3, 4, 9},   {2, 33, 5},  {1, 16, 300}, {1, 300, 16}};
  for (const TransposeSpec& s : shapes) {
    const Kernel k(s);
    Guarded weights(4);
    const int64_t count = s.outer * s.rows * s.cols;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    for (int64_t batch : {1, 3}) {
      Guarded in(static_cast<size_t>(batch * count)), out(static_cast<size_t>(batch * count));
      for (size_t i = 0; i < in.n; ++i) in[i] = d(rng);
      k.run({in.data()}, out.data(), weights.data(), batch);
      int wrong = 0;
      for (int64_t o = 0; o < batch * s.outer; ++o) {
        for (int64_t i = 0; i < s.rows; ++i) {
          for (int64_t j = 0; j < s.cols; ++j) {
            wrong += out[static_cast<size_t>((o * s.cols + j) * s.rows + i)] !=
                     in[static_cast<size_t>((o * s.rows + i) * s.cols + j)];
          }
        }
      }
      EXPECT_EQ(wrong, 0) << s.outer << " x " << s.rows << " x " << s.cols << " batch " << batch;
      EXPECT_TRUE(out.guards_intact() && in.guards_intact()) << s.rows << " x " << s.cols;
    }
  }
}

TEST(NeonGather, CopyRunsZeroFillAndWeightedTaps) {
  // One tap from index maps: a reversal (runs of 1), a crop (runs of a row), a zero-padded shift.
  for (int64_t count : {1, 5, 12, 37}) {
    std::vector<std::vector<int64_t>> maps(3);
    for (int64_t i = 0; i < count; ++i) {
      maps[0].push_back(count - 1 - i);
      maps[1].push_back(i + 3);
      maps[2].push_back(i % 6 < 2 ? -1 : i);
    }
    for (size_t m = 0; m < maps.size(); ++m) {
      GatherSpec s;
      std::vector<float> table;
      gather_from_map(maps[m], count + 3, s, table);
      check_gather(s, table, "map " + std::to_string(m) + " count " + std::to_string(count));
    }
  }
  // 2 to 4 weighted taps (resize-like): run r writes len floats at r * len from taps at r + t.
  for (int taps = 2; taps <= 4; ++taps) {
    for (int64_t len : {1, 3, 4, 9}) {
      GatherSpec s;
      s.taps = taps;
      s.len = len;
      s.runs = 5;
      s.in_count = (s.runs + taps) * len;
      s.out_count = s.runs * len + 2;
      s.zero_fill = true;
      s.table_off = 4;
      std::vector<float> table;
      for (int64_t r = 0; r < s.runs; ++r) {
        for (int t = 0; t < taps; ++t) table.push_back(bits_float(static_cast<int32_t>((r + t) * len)));
        table.push_back(bits_float(static_cast<int32_t>(r * len)));
        for (int t = 0; t < taps; ++t) table.push_back(0.25f * static_cast<float>(t + 1) - 0.1f * static_cast<float>(r));
      }
      check_gather(s, table, "taps " + std::to_string(taps) + " len " + std::to_string(len));
    }
  }
}


// ---- the product of two computed tensors ----

// f32-matmul: every column tail, full and partial column and row blocks, several matrices per
// sample, batches 1 and 3, with matmul_blocking's tile and with 1x1; float64 reference.
TEST(NeonMatmul, TilesTailsAndStacks) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 33}) {
    for (int64_t m : {1, 3, 8, 9, 20}) {
      for (int64_t k : {1, 4, 19}) {
        for (bool tiled : {true, false}) {
          MatMulSpec s;
          s.matrices = 1 + (m + k) % 3;
          s.m = m;
          s.k = k;
          s.n = n;
          const MatMulBlocking b = matmul_blocking(isa_traits(Isa::kNeon), m, n);
          s.rows = tiled ? b.rows : 1;
          s.vectors = tiled ? b.vectors : 1;
          const Kernel kernel(s);
          Guarded weights(0);
          for (int64_t batch : {1, 3}) {
            const int64_t mats = batch * s.matrices;
            Guarded a(static_cast<size_t>(mats * m * k)), bm(static_cast<size_t>(mats * k * n));
            Guarded c(static_cast<size_t>(mats * m * n));
            for (size_t i = 0; i < a.n; ++i) a[i] = d(rng);
            for (size_t i = 0; i < bm.n; ++i) bm[i] = d(rng);
            kernel.run({a.data(), bm.data()}, c.data(), weights.data(), batch);
            double worst = 0;
            for (int64_t p = 0; p < mats; ++p) {
              for (int64_t i = 0; i < m; ++i) {
                for (int64_t j = 0; j < n; ++j) {
                  double ref = 0;
                  for (int64_t t = 0; t < k; ++t) {
                    ref += static_cast<double>(a[static_cast<size_t>((p * m + i) * k + t)]) *
                           static_cast<double>(bm[static_cast<size_t>((p * k + t) * n + j)]);
                  }
                  worst = std::max(worst, scaled_error(c[static_cast<size_t>((p * m + i) * n + j)], ref));
                }
              }
            }
            const std::string what = std::to_string(s.matrices) + " x (" + std::to_string(m) + "x" + std::to_string(k) +
                                     " . " + std::to_string(k) + "x" + std::to_string(n) + ") tile " +
                                     std::to_string(s.rows) + "x" + std::to_string(s.vectors) + "v batch " +
                                     std::to_string(batch);
            EXPECT_LE(worst, 1e-5 * std::sqrt(static_cast<double>(k))) << what;
            EXPECT_TRUE(c.guards_intact() && a.guards_intact() && bm.guards_intact()) << what;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nnd::jit::neon
