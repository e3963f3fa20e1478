// Shared machinery of the per-generator kernel testers (tests/jit/jit_kernel_*_test.cpp), in the
// style of XNNPACK's micro-kernel testers: a tester builds one generator's spec directly, compiles
// only that kernel with KernelModule, calls it through KernelArgs on random data and compares
// with a scalar float64 reference written in the tester.
//
// Every buffer the kernel sees is a GuardedBuffer: canaries (a NaN with a recognisable payload)
// before and after it, so a write outside the output shows as a changed canary and a read
// outside an input or the weight blob pulls a NaN into the result. Outputs start as a second NaN
// pattern, so an output the kernel should have written and did not fails the comparison, and
// positions it must not write (a bordered output's border) are checked to still hold it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/jit/isa.h"
#include "core/jit/kernel_args.h"
#include "core/jit/kernel_config.h"
#include "core/jit/kernel_helpers.h"
#include "core/jit/kernel_module.h"
#include "core/jit/x86/emit_kernel.h"
#include "core/jit/specs/out_placement.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {

// Bit patterns: a canary around every buffer, and the "never written" fill of outputs and of
// input regions a spec says are not read. Both are quiet NaNs, so any arithmetic on them shows.
inline constexpr uint32_t kCanaryBits = 0x7fc0dead;
inline constexpr uint32_t kUnwrittenBits = 0x7fc0beef;

inline float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float unwritten() { return from_bits(kUnwrittenBits); }

// `n` floats, 64-byte aligned (as the engine's arena), with kGuard canary floats on each side
// (more than one zmm vector, so a full-width access past either end lands in canaries).
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  explicit GuardedBuffer(size_t n, float fill = unwritten()) : n_(n), store_(n + 2 * kGuard + 16) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(store_.data());
    start_ = static_cast<size_t>((64 - p % 64) % 64) / 4;
    std::fill(store_.begin(), store_.end(), from_bits(kCanaryBits));
    std::fill(data(), data() + n_, fill);
  }
  float* data() { return store_.data() + start_ + kGuard; }
  const float* data() const { return store_.data() + start_ + kGuard; }
  size_t size() const { return n_; }
  float& operator[](size_t i) { return data()[i]; }
  float operator[](size_t i) const { return data()[i]; }
  void assign(const std::vector<float>& v) {
    if (v.size() != n_) throw std::logic_error("GuardedBuffer::assign: size mismatch");
    std::copy(v.begin(), v.end(), data());
  }
  // Empty when both canaries are intact, otherwise where the first changed float is.
  std::string damaged_guard() const {
    const float* base = data();
    for (size_t i = 1; i <= kGuard; ++i) {
      if (bits_of(base[-static_cast<ptrdiff_t>(i)]) != kCanaryBits) return "canary " + std::to_string(i) + " floats before";
      if (bits_of(base[n_ + i - 1]) != kCanaryBits) return "canary " + std::to_string(i - 1) + " floats after the end";
    }
    return {};
  }

 private:
  size_t n_;
  std::vector<float> store_;
  size_t start_ = 0;
};

// Compiles one kernel for `isa` (its own KernelModule: the tester owns the code) and calls it.
class KernelUnderTest {
 public:
  KernelUnderTest(Isa isa, const std::string& name, const std::function<void(VecEmitter&)>& body)
      : module_(isa, false, "") {
    fn_ = compile_body(module_, name, body);
  }
  void run(const std::vector<const void*>& inputs, float* out, const GuardedBuffer& weights, int64_t batch) const {
    const KernelArgs args{inputs.data(), out, weights.data(), batch, helper_table()};
    fn_(&args);
  }

 private:
  KernelModule module_;
  KernelFn fn_ = nullptr;
};

// Packed weight blobs are built as std::vector<float> by the pack_* functions; the kernel reads
// them from a guarded copy (an empty blob still gets canaries to point at).
inline GuardedBuffer guarded_weights(const std::vector<float>& blob) {
  GuardedBuffer g(blob.size());
  g.assign(blob);
  return g;
}

// Scaled error as jit_test_util.h's jit_vs_reference: |got - ref| / max(1, |ref|), infinite for a
// NaN result where the reference is a number.
inline double scaled_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isinf(ref)) return got == ref ? 0.0 : INFINITY;
  const double e = std::fabs(static_cast<double>(got) - ref) / std::max(1.0, std::fabs(ref));
  return std::isnan(e) ? INFINITY : e;
}

// Collects the first failures of one kernel call; a case is described once, by the caller.
class Checker {
 public:
  explicit Checker(std::string what) : what_(std::move(what)) {}
  // Output index i should hold `ref` within tol (scaled error).
  void near(size_t i, float got, double ref, double tol) {
    const double e = scaled_error(got, ref);
    if (e > tol) fail("index " + std::to_string(i) + ": got " + show(got) + ", reference " + std::to_string(ref));
  }
  // Output index i should hold exactly `ref` (data movement), bit for bit.
  void exact(size_t i, float got, float ref) {
    if (bits_of(got) != bits_of(ref)) fail("index " + std::to_string(i) + ": got " + show(got) + ", expected " + show(ref));
  }
  // Output index i must not have been written.
  void untouched(size_t i, float got) {
    if (bits_of(got) != kUnwrittenBits) fail("index " + std::to_string(i) + " (outside the output) was written: " + show(got));
  }
  void guards(const GuardedBuffer& b, const std::string& name) {
    const std::string d = b.damaged_guard();
    if (!d.empty()) fail(name + ": " + d + " was written");
  }
  bool ok() const { return failures_ == 0; }
  // One gtest failure per failing case, with the first few mismatches.
  ~Checker() {
    if (failures_ > 0) ADD_FAILURE() << what_ << ": " << failures_ << " mismatches, first:\n" << first_;
  }
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

 private:
  static std::string show(float f) {
    if (std::isnan(f)) {
      const uint32_t b = bits_of(f);
      if (b == kCanaryBits) return "canary NaN";
      if (b == kUnwrittenBits) return "unwritten NaN";
      return "NaN";
    }
    return std::to_string(f);
  }
  void fail(const std::string& msg) {
    if (++failures_ <= 4) first_ += "  " + msg + "\n";
  }
  std::string what_;
  int failures_ = 0;
  std::string first_;
};

// The fused epilogue activations (act_fusable kinds) in double.
inline double fused_act_ref(ActivationKind k, double x) {
  switch (k) {
    case ActivationKind::kRelu: return std::max(x, 0.0);
    case ActivationKind::kRelu6: return std::min(std::max(x, 0.0), 6.0);
    default: return x;
  }
}

// A fused epilogue after the bias: the residual `res` (when `residual`) before or after the
// activation, as the kernel's spec says.
inline double fused_epilogue_ref(ActivationKind k, double x, bool residual, double res, ResidualAt at) {
  if (residual && at == ResidualAt::kBeforeActivation) x += res;
  x = fused_act_ref(k, x);
  if (residual && at == ResidualAt::kAfterActivation) x += res;
  return x;
}

inline const std::vector<ActivationKind>& fused_acts() {
  static const std::vector<ActivationKind> k{ActivationKind::kLinear, ActivationKind::kRelu, ActivationKind::kRelu6};
  return k;
}

inline int isa_width(Isa isa) { return isa_traits(isa).f32_lanes; }

// Channel counts k * width + t covering every tail t in 0..width-1, with k cycling over
// 0..max_vectors so every tail also meets full blocks (and partial blocks) of several sizes.
inline std::vector<int64_t> tail_sweep(int width, int max_vectors) {
  std::vector<int64_t> c;
  for (int t = 0; t < width; ++t) {
    const int k = t % (max_vectors + 1);
    const int64_t n = int64_t{k} * width + t;
    c.push_back(n == 0 ? width * (max_vectors + 1) : n);  // t = 0: whole vectors, one more block
  }
  return c;
}

// Number of random shapes a sweep draws: n by default, n * NND_KERNEL_CASES when set (a longer
// search, like NND_RANDOM_NETWORKS for whole networks).
inline int random_cases(int n) {
  static const int scale = [] {
    const char* e = std::getenv("NND_KERNEL_CASES");
    return e ? std::max(1, std::atoi(e)) : 1;
  }();
  return n * scale;
}

// Values around a tile size R: R-1, R, R+1, 2R+1 and 1 (distinct, >= 1).
inline std::vector<int64_t> tile_edges(int64_t R) {
  std::vector<int64_t> v{1, R - 1, R, R + 1, 2 * R + 1};
  v.erase(std::remove_if(v.begin(), v.end(), [](int64_t x) { return x < 1; }), v.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Runs a one-input, one-output kernel over `batch * count` random floats in [lo, hi) for batches
// 1..3 and checks output i against ref(i % count, input i): within `tol` (scaled error), or bit
// for bit when tol is 0.
template <typename Ref>
inline void check_unary_kernel(Isa isa, const std::string& what, const std::function<void(VecEmitter&)>& body,
                               const GuardedBuffer& weights, int64_t count, float lo, float hi, uint32_t seed,
                               Ref&& ref, double tol) {
  const KernelUnderTest k(isa, what, body);
  Rng rng(seed);
  for (int64_t batch = 1; batch <= 3; ++batch) {
    GuardedBuffer in(static_cast<size_t>(batch * count)), out(static_cast<size_t>(batch * count));
    for (size_t i = 0; i < in.size(); ++i) in[i] = rng.uniform(lo, hi);
    k.run({in.data()}, out.data(), weights, batch);
    Checker check(std::string(isa_id(isa)) + " " + what + " count " + std::to_string(count) + " batch " +
                  std::to_string(batch));
    for (size_t i = 0; i < out.size(); ++i) {
      const double r = ref(static_cast<int64_t>(i) % count, in[i]);
      if (tol == 0) check.exact(i, out[i], static_cast<float>(r));
      else check.near(i, out[i], r, tol);
    }
    check.guards(out, "output");
    check.guards(in, "input");
    if (!check.ok()) return;
  }
}

// ---- spatial kernels (conv, window): the case, bordered outputs, checking ----

// A spatial kernel's output of (h, w, c) per sample, written dense or, with a border, into the
// interior of a bordered buffer (OutPlacement). Positions are computed from the border here, not
// from the spec's placement, so a wrong placement shows.
struct BorderedOutput {
  int64_t h = 1, w = 1, c = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;

  bool placed() const { return top || bottom || left || right; }
  int64_t padded_h() const { return h + top + bottom; }
  int64_t padded_w() const { return w + left + right; }
  int64_t sample_floats() const { return padded_h() * padded_w() * c; }
  OutPlacement placement() const {
    if (!placed()) return {};
    return {padded_w() * c, sample_floats(), (top * padded_w() + left) * c};
  }
  size_t at(int64_t n, int64_t y, int64_t x, int64_t ch) const {
    return static_cast<size_t>(n * sample_floats() + ((y + top) * padded_w() + x + left) * c + ch);
  }
};

// The geometry a conv or window kernel case shares: output size, window, input rows and columns
// past the last window that must not be read, the fused epilogue, and the border of the output
// (OutPlacement) that must stay unwritten.
struct SpatialCase {
  int64_t out_h = 1, out_w = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t extra_h = 0, extra_w = 0;
  bool bias = true, residual = false;
  ResidualAt residual_at = ResidualAt::kBeforeActivation;
  ActivationKind act = ActivationKind::kLinear;
  int64_t border_top = 0, border_bottom = 0, border_left = 0, border_right = 0;
  std::vector<int64_t> batches{1, 2, 3};

  // The input rows and columns the windows read, plus the extra ones.
  int64_t in_h() const { return (out_h - 1) * sh + (kh - 1) * dh + 1 + extra_h; }
  int64_t in_w() const { return (out_w - 1) * sw + (kw - 1) * dw + 1 + extra_w; }
  // Copies the geometry into a ConvSpec or WindowSpec (the same field names): output, window and
  // the input extent.
  template <typename Spec>
  void set_geometry(Spec& s) const {
    s.out_h = out_h;
    s.out_w = out_w;
    s.kh = kh;
    s.kw = kw;
    s.sh = sh;
    s.sw = sw;
    s.dh = dh;
    s.dw = dw;
    s.in_h = in_h();
    s.in_w = in_w();
  }
  // The output, c floats per pixel, in its (possibly bordered) buffer.
  BorderedOutput output(int64_t c) const {
    return {out_h, out_w, c, border_top, border_bottom, border_left, border_right};
  }
  // f(n, oy, ox, y, x, tap) for every output position and window tap: the input pixel (y, x) it
  // reads and the tap ky * kw + kx.
  template <typename F>
  void for_each_tap(int64_t batch, F&& f) const {
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t oy = 0; oy < out_h; ++oy)
        for (int64_t ox = 0; ox < out_w; ++ox)
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) f(n, oy, ox, oy * sh + ky * dh, ox * sw + kx * dw, ky * kw + kx);
  }
  std::string describe_geometry() const {
    std::ostringstream o;
    o << "out " << out_h << "x" << out_w << " k " << kh << "x" << kw << " s " << sh << "x" << sw << " d " << dh << "x"
      << dw << " bias " << bias << " residual " << residual
      << (residual_at == ResidualAt::kAfterActivation ? " after act" : "") << " act " << activation_name(act) << " border "
      << border_top << "," << border_bottom << "," << border_left << "," << border_right;
    return o.str();
  }
};

// Checks output channels [0, channels) of every position of `o` in batch samples against
// ref(n, y, x, ch) (bit for bit when `exact`, else within kTol), and that the kernel wrote nothing
// else of `out` (border, channel-stride slack).
template <typename Ref>
inline void check_spatial_output(Checker& check, const BorderedOutput& o, int64_t channels, const GuardedBuffer& out,
                                 int64_t batch, bool exact, Ref&& ref) {
  std::vector<bool> written(out.size(), false);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t y = 0; y < o.h; ++y) {
      for (int64_t x = 0; x < o.w; ++x) {
        for (int64_t ch = 0; ch < channels; ++ch) {
          const size_t i = o.at(n, y, x, ch);
          written[i] = true;
          const double r = ref(n, y, x, ch);
          if (exact) check.exact(i, out[i], static_cast<float>(r));
          else check.near(i, out[i], r, kTol);
        }
      }
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!written[i]) check.untouched(i, out[i]);
  }
}

// Calls k on `in` (and `residual`, its second input, when non-null) into `out` for batch samples,
// then checks the output as check_spatial_output and the canaries of every buffer, as one case
// described by `what`. Returns whether the case passed.
template <typename Ref>
inline bool run_spatial_case(const KernelUnderTest& k, const std::string& what, const GuardedBuffer& in,
                             const GuardedBuffer* residual, GuardedBuffer& out, const GuardedBuffer& weights,
                             int64_t batch, const BorderedOutput& o, int64_t channels, bool exact, Ref&& ref) {
  std::vector<const void*> ins{in.data()};
  if (residual) ins.push_back(residual->data());
  k.run(ins, out.data(), weights, batch);
  Checker check(what);
  check_spatial_output(check, o, channels, out, batch, exact, ref);
  check.guards(out, "output");
  check.guards(in, "input");
  check.guards(weights, "weights");
  if (residual) check.guards(*residual, "residual");
  return check.ok();
}

// Each ISA its own test: Kernel/<Suite>.<Variant>/<isa>.
class KernelTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
  Isa isa() const { return GetParam(); }
  int width() const { return isa_width(GetParam()); }
};

#define NND_KERNEL_TEST_SUITE(Suite)                    \
  class Suite : public ::nnd::jit::test::KernelTest {}; \
  INSTANTIATE_TEST_SUITE_P(Kernel, Suite, ::testing::ValuesIn(::nnd::jit::all_isas()), \
                           ::nnd::jit::test::isa_param_name)

}  // namespace nnd::jit::test
