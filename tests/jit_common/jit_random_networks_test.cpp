// Whole random networks of the robot family: seeded generators compose the motifs of the four
// networks in ../shared/models (strided stems with BatchNormalization before or after the
// activation, separable blocks with residual adds, inception branches with (2, 1) strides and
// pools joined by Concatenate, depthwise + pointwise pairs, dilated convs, pooled or flattened
// heads with several Dense outputs, a second scalar input joined into the head, segmentation
// decoders with UpSampling2D / Conv2DTranspose and skip connections, uint8 camera input) with random sizes and channel counts. Each network runs through the whole JIT pipeline
// (graph passes, memory plan, padded storage, kernel choice) and must match the reference engine
// within 1e-5 * max(1, |ref|) on every ISA this CPU has, batch 1 to 4, some in one-sample chunks.
//
// One-layer property tests (jit_layers_test.cpp) cannot see how passes and the planner combine:
// a BatchNorm folded across an activation, a residual fused into a planar conv writing into a
// bordered buffer its reader pads, a concat placed in place by three producers. These can.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cmath>
#include <map>

#include "core/ir/dump.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

// A value under construction and its per-sample shape (the generator tracks shapes itself so that
// it can choose compatible strides, residuals and concat partners).
struct T {
  ValueId v = -1;
  int64_t h = 0, w = 0, c = 0;
};

int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, Padding pad) {
  const int64_t k_eff = (k - 1) * dilation + 1;
  return pad == Padding::kSame ? (in + stride - 1) / stride : (in - k_eff) / stride + 1;
}

class NetGen {
 public:
  explicit NetGen(uint32_t seed) : r_(seed), b_("random-net-" + std::to_string(seed)) {}

  Graph build(bool* u8_input) {
    *u8_input = r_.range(0, 4) == 0;
    dtype_ = *u8_input ? DType::kUInt8 : DType::kFloat32;  // the test feeds every input in one type
    T x = input("image", r_.range(9, 36), r_.range(9, 44), r_.range(1, 4), dtype_);
    // uint8 camera bytes: scale the stem's weights so activations stay near 1.
    x = stem(x, *u8_input ? 1.0f / 128 : 1.0f);
    features_.push_back(x);
    const int blocks = static_cast<int>(r_.range(2, 4));
    for (int i = 0; i < blocks; ++i) {
      x = block(x);
      features_.push_back(x);
    }
    return b_.finish(head(x));
  }

 private:
  // ---- layers ---------------------------------------------------------------------------------

  T input(const std::string& name, int64_t h, int64_t w, int64_t c, DType dt) {
    return {b_.input(name, {h, w, c}, dt), h, w, c};
  }

  std::string name(const char* kind) { return std::string(kind) + "_" + std::to_string(n_++); }

  Padding pad() { return r_.coin() ? Padding::kSame : Padding::kValid; }

  // Fits a window to x: valid padding falls back to same when it would leave no output.
  Window window(const T& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dil = 1) {
    Window win;
    win.kernel_h = kh;
    win.kernel_w = kw;
    win.stride_h = sh;
    win.stride_w = sw;
    win.dilation_h = win.dilation_w = dil;
    win.padding = pad();
    if (out_size(x.h, kh, sh, dil, win.padding) < 1 || out_size(x.w, kw, sw, dil, win.padding) < 1) {
      win.padding = Padding::kSame;
    }
    return win;
  }

  T shaped(ValueId v, const T& x, const Window& win, int64_t c) {
    return {v, out_size(x.h, win.kernel_h, win.stride_h, win.dilation_h, win.padding),
            out_size(x.w, win.kernel_w, win.stride_w, win.dilation_w, win.padding), c};
  }

  T conv(const T& x, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t filters, float weight_scale = 1.0f,
         int64_t dil = 1) {
    ConvParams p;
    p.window = window(x, kh, kw, sh, sw, dil);
    p.filters = filters;
    p.kernel = r_.weights({kh, kw, x.c, filters}, weight_scale * 1.5f / std::sqrt(float(kh * kw * x.c)));
    if (r_.range(0, 3) != 0) p.bias = r_.weights({filters}, 0.2f);
    if (r_.range(0, 3) == 0) p.activation = ActivationKind::kRelu;  // Conv2D(activation='relu')
    const Window win = p.window;
    return shaped(b_.node(name("conv"), std::move(p), {x.v}), x, win, filters);
  }

  T depthwise(const T& x, int64_t k, int64_t stride, int64_t dm) {
    DepthwiseConvParams p;
    p.window = window(x, k, k, stride, stride);
    p.depth_multiplier = dm;
    p.kernel = r_.weights({k, k, x.c, dm}, 1.5f / float(k));
    if (r_.coin()) p.bias = r_.weights({x.c * dm}, 0.2f);
    const Window win = p.window;
    return shaped(b_.node(name("depthwise"), std::move(p), {x.v}), x, win, x.c * dm);
  }

  T separable(const T& x, int64_t k, int64_t stride, int64_t filters) {
    SeparableConvParams p;
    p.window = window(x, k, k, stride, stride);
    p.filters = filters;
    p.depthwise_kernel = r_.weights({k, k, x.c, 1}, 1.5f / float(k));
    p.pointwise_kernel = r_.weights({1, 1, x.c, filters}, 1.5f / std::sqrt(float(x.c)));
    if (r_.range(0, 3) != 0) p.bias = r_.weights({filters}, 0.2f);
    const Window win = p.window;
    return shaped(b_.node(name("separable"), std::move(p), {x.v}), x, win, filters);
  }

  T batchnorm(const T& x) {
    BatchNormParams p;
    p.keras_axis = -1;
    p.gamma = Weights{{x.c}, r_.vec(x.c, 0.5f, 1.5f)};
    p.beta = Weights{{x.c}, r_.vec(x.c, -0.3f, 0.3f)};
    p.moving_mean = Weights{{x.c}, r_.vec(x.c, -0.3f, 0.3f)};
    p.moving_variance = Weights{{x.c}, r_.vec(x.c, 0.5f, 2.0f)};
    return {b_.node(name("batchnorm"), std::move(p), {x.v}), x.h, x.w, x.c};
  }

  // ReLU, ReLU6, LeakyReLU or Activation('relu'), as the robot networks write them.
  T activation(const T& x) {
    const int64_t kind = r_.range(0, 3);
    ValueId v;
    if (kind == 3) {
      v = b_.node(name("activation"), ActivationParams{ActivationKind::kRelu}, {x.v});
    } else {
      ReluParams p;
      if (kind == 1) p.max_value = 6.0;
      if (kind == 2) p.negative_slope = 0.1;
      v = b_.node(name("relu"), p, {x.v});
    }
    return {v, x.h, x.w, x.c};
  }

  // conv -> BN -> act (Keras' usual order) or conv -> act -> BN (the robot networks' order).
  T normalised(const T& x) { return r_.coin() ? activation(batchnorm(x)) : batchnorm(activation(x)); }

  T pool(const T& x, PoolKind kind, int64_t ph, int64_t pw) {
    PoolParams p;
    p.kind = kind;
    p.window = window(x, ph, pw, ph, pw);
    const Window win = p.window;
    return shaped(b_.node(name(kind == PoolKind::kMax ? "maxpool" : "avgpool"), p, {x.v}), x, win, x.c);
  }

  T add(const T& a, const T& b) { return {b_.node(name("add"), MergeParams{MergeOp::kAdd}, {a.v, b.v}), a.h, a.w, a.c}; }

  T concat(const std::vector<T>& parts) {
    ConcatParams p;
    p.keras_axis = -1;
    std::vector<ValueId> in;
    int64_t c = 0;
    for (const T& t : parts) {
      in.push_back(t.v);
      c += t.c;
    }
    return {b_.node(name("concat"), p, in), parts[0].h, parts[0].w, c};
  }

  int64_t channels() {
    static const int64_t kChannels[] = {4, 8, 8, 12, 16, 16, 20, 24, 32, 6};
    return kChannels[r_.range(0, 9)];
  }

  // ---- motifs ---------------------------------------------------------------------------------

  // bop / referee: a large strided kernel on few channels, then an optional 2x2 max-pool.
  T stem(const T& in, float weight_scale) {
    static const int64_t kKernels[] = {3, 5, 7};
    const int64_t k = kKernels[r_.range(0, 2)];
    const int64_t stride = in.h >= 16 && in.w >= 16 && r_.coin() ? 2 : 1;
    T x = conv(in, k, k, stride, stride, channels(), weight_scale);
    x = normalised(x);
    if (x.h >= 8 && x.w >= 8 && r_.coin()) x = pool(x, PoolKind::kMax, 2, 2);
    return x;
  }

  T block(const T& x) {
    switch (r_.range(0, 3)) {
      case 0: return separable_block(x);
      case 1: return inception_block(x);
      case 2: return depthwise_pointwise_block(x);
      default: return plain_block(x);
    }
  }

  // bop: separable conv -> BN -> (+ block input) -> ReLU, or -> ReLU -> (+ block input) (the
  // residual after the activation), or a strided one that widens.
  T separable_block(const T& x) {
    const bool residual = r_.coin();
    const int64_t stride = !residual && x.h >= 6 && x.w >= 6 && r_.coin() ? 2 : 1;
    const int64_t filters = residual ? x.c : channels();
    T y = separable(x, 3, stride, filters);
    if (residual) {
      // Same padding keeps the shape; window() may not pick it, so force the shapes to agree.
      if (y.h != x.h || y.w != x.w) return normalised(y);
      y = batchnorm(y);
      return r_.coin() ? activation(add(y, x)) : add(activation(y), x);
    }
    return normalised(y);
  }

  // field-boundary: 1x1 reductions feeding 3x3 convs strided (2, 1), beside a (2, 1) max-pool
  // with its own 1x1 conv, joined along channels.
  T inception_block(const T& x) {
    if (x.h < 4) return plain_block(x);
    const int64_t sh = 2, sw = 1;
    const auto branch = [&](int64_t reduce) {
      T b = normalised(conv(x, 1, 1, 1, 1, reduce));
      ConvParams p;
      p.window.kernel_h = p.window.kernel_w = 3;
      p.window.stride_h = sh;
      p.window.stride_w = sw;
      p.window.padding = Padding::kSame;
      p.filters = channels();
      p.kernel = r_.weights({3, 3, b.c, p.filters}, 1.5f / std::sqrt(float(9 * b.c)));
      p.bias = r_.weights({p.filters}, 0.2f);
      const int64_t f = p.filters;
      const Window win = p.window;
      return normalised(shaped(b_.node(name("conv"), std::move(p), {b.v}), b, win, f));
    };
    std::vector<T> parts{branch(4), branch(8)};
    PoolParams pp;
    pp.window.kernel_h = sh;
    pp.window.kernel_w = sw;
    pp.window.stride_h = sh;
    pp.window.stride_w = sw;
    pp.window.padding = Padding::kSame;
    const Window win = pp.window;
    const T pooled = shaped(b_.node(name("maxpool"), pp, {x.v}), x, win, x.c);
    parts.push_back(normalised(conv(pooled, 1, 1, 1, 1, channels())));
    return concat(parts);
  }

  // referee: depthwise (sometimes strided, sometimes with a depth multiplier) -> BN -> act ->
  // pointwise conv -> BN -> act.
  T depthwise_pointwise_block(const T& x) {
    const int64_t stride = x.h >= 6 && x.w >= 6 && r_.coin() ? 2 : 1;
    T y = normalised(depthwise(x, 3, stride, r_.range(0, 3) == 0 ? 2 : 1));
    return normalised(conv(y, 1, 1, 1, 1, channels()));
  }

  // ball-penalty: 3x3 conv (sometimes dilated) -> BN -> act -> optional 2x2 pool.
  T plain_block(const T& x) {
    const int64_t dil = x.h >= 7 && x.w >= 7 && r_.range(0, 3) == 0 ? 2 : 1;
    T y = normalised(conv(x, 3, 3, 1, 1, channels(), 1.0f, dil));
    if (y.h >= 2 && y.w >= 2 && r_.coin()) y = pool(y, r_.coin() ? PoolKind::kMax : PoolKind::kAverage, 2, 2);
    return y;
  }

  DenseParams dense(int64_t in, int64_t units, ActivationKind act) {
    DenseParams p;
    p.units = units;
    p.kernel = r_.weights({in, units}, 1.5f / std::sqrt(float(in)));
    p.bias = r_.weights({units}, 0.2f);
    p.activation = act;
    return p;
  }

  // A dense stack on a flat feature vector of `width` values: Dense -> BN -> ReLU -> Dense(act).
  ValueId dense_head(ValueId flat, int64_t width, ActivationKind out_act) {
    const int64_t hidden = r_.range(4, 40);
    const ValueId h = b_.node(name("dense"), dense(width, hidden, ActivationKind::kLinear), {flat});
    const T hn = normalised(T{h, 1, 1, hidden});
    return b_.node(name("dense"), dense(hidden, r_.range(1, 6), out_act), {hn.v});
  }

  // Segmentation decoders: the feature map is upsampled (UpSampling2D, nearest or bilinear, or a
  // strided Conv2DTranspose), padded or cropped to an earlier feature map of about that size and
  // concatenated with it (a skip connection), up to twice, then a 3x3 conv and a sigmoid map.
  T upsample(const T& x) {
    if (r_.coin()) {
      UpSamplingParams p;
      p.size_h = p.size_w = 2;
      p.interpolation = r_.coin() ? Interpolation::kBilinear : Interpolation::kNearest;
      return {b_.node(name("upsampling"), p, {x.v}), 2 * x.h, 2 * x.w, x.c};
    }
    ConvTransposeParams p;
    const int64_t k = r_.range(2, 3);
    p.window.kernel_h = p.window.kernel_w = k;
    p.window.stride_h = p.window.stride_w = 2;
    p.window.padding = Padding::kSame;
    p.filters = channels();
    p.kernel = r_.weights({k, k, p.filters, x.c}, 1.5f / std::sqrt(float(x.c)));
    if (r_.coin()) p.bias = r_.weights({p.filters}, 0.2f);
    if (r_.coin()) p.activation = ActivationKind::kRelu;
    const int64_t f = p.filters;
    return {b_.node(name("conv_transpose"), std::move(p), {x.v}), 2 * x.h, 2 * x.w, f};
  }

  // x grown or shrunk at the bottom and right to h x w (ZeroPadding2D / Cropping2D).
  T fit(const T& x, int64_t h, int64_t w) {
    T y = x;
    if (y.h < h || y.w < w) {
      ZeroPaddingParams p;
      p.bottom = std::max<int64_t>(0, h - y.h);
      p.right = std::max<int64_t>(0, w - y.w);
      y = {b_.node(name("zero_padding"), p, {y.v}), y.h + p.bottom, y.w + p.right, y.c};
    }
    if (y.h > h || y.w > w) {
      CroppingParams p;
      p.bottom = y.h - h;
      p.right = y.w - w;
      y = {b_.node(name("cropping"), p, {y.v}), h, w, y.c};
    }
    return y;
  }

  ValueId decoder(const T& in) {
    T x = in;
    for (int stage = 0; stage < 2; ++stage) {
      const T up = upsample(x);
      const T* skip = nullptr;  // the latest earlier map within 2 rows and columns of `up`
      for (const T& f : features_) {
        if (std::abs(f.h - up.h) <= 2 && std::abs(f.w - up.w) <= 2 && f.v != x.v) skip = &f;
      }
      x = skip ? normalised(conv(concat({fit(up, skip->h, skip->w), *skip}), 3, 3, 1, 1, channels()))
               : normalised(conv(up, 3, 3, 1, 1, channels()));
      if (!skip) break;
    }
    ConvParams p;
    p.filters = r_.range(1, 3);
    p.kernel = r_.weights({1, 1, x.c, p.filters}, 1.5f / std::sqrt(float(x.c)));
    p.bias = r_.weights({p.filters}, 0.2f);
    p.activation = ActivationKind::kSigmoid;
    return b_.node(name("conv"), std::move(p), {x.v});
  }

  std::vector<ValueId> head(const T& x) {
    switch (r_.range(0, 3)) {
      case 3: return {decoder(x)};
      case 0: {  // bop: a 1x1 conv map, linear or sigmoid
        ConvParams p;
        p.filters = r_.range(1, 6);
        p.kernel = r_.weights({1, 1, x.c, p.filters}, 1.5f / std::sqrt(float(x.c)));
        p.bias = r_.weights({p.filters}, 0.2f);
        p.activation = r_.coin() ? ActivationKind::kSigmoid : ActivationKind::kLinear;
        return {b_.node(name("conv"), std::move(p), {x.v})};
      }
      case 1: {  // referee: global pooling, a second scalar input joined in, softmax classes
        GlobalPoolParams gp;
        gp.kind = r_.coin() ? PoolKind::kAverage : PoolKind::kMax;
        const ValueId pooled = b_.node(name("globalpool"), gp, {x.v});
        ValueId flat = pooled;
        int64_t width = x.c;
        if (r_.coin()) {
          const ValueId extra = b_.input("distance", {1}, dtype_);
          ConcatParams cp;
          cp.keras_axis = -1;
          flat = b_.node(name("concat"), cp, {pooled, extra});
          width += 1;
        }
        return {dense_head(flat, width, ActivationKind::kSoftmax)};
      }
      default: {  // ball-penalty: flatten, a classifier and a regressor, concatenated
        const ValueId flat = b_.node(name("flatten"), FlattenParams{}, {x.v});
        const int64_t width = x.h * x.w * x.c;
        const ValueId cls = dense_head(flat, width, ActivationKind::kSoftmax);
        const ValueId reg = dense_head(flat, width, ActivationKind::kLinear);
        ConcatParams cp;
        cp.keras_axis = -1;
        if (r_.coin()) return {b_.node(name("concat"), cp, {cls, reg})};
        return {cls, reg};
      }
    }
  }

  Rng r_;
  GraphBuilder b_;
  DType dtype_ = DType::kFloat32;
  std::vector<T> features_;  // the stem's and every block's output, for skip connections
  int n_ = 0;
};

class JitRandomNetworks : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
};

// 150 networks per ISA take about half a second; NND_RANDOM_NETWORKS=N runs N (a longer search).
int network_count() {
  const char* env = std::getenv("NND_RANDOM_NETWORKS");
  const int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : 150;
}

TEST_P(JitRandomNetworks, RobotFamily) {
  const Isa isa = GetParam();
  std::map<std::string, int> kernel_kinds;  // which kernels the networks exercised
  int64_t layers = 0;
  int failures = 0;
  const int networks = network_count();
  for (int i = 0; i < networks; ++i) {
    const uint32_t seed = 7000 + static_cast<uint32_t>(i);
    bool u8 = false;
    const Graph g = NetGen(seed).build(&u8);
    EngineOptions opt;
    opt.engine = EngineKind::kJit;
    opt.isa = isa;
    const auto engine = make_jit_engine(g, opt);
    for (const CompiledKernel& k : engine->kernels()) {
      // "name: kind-isa": count the kind only.
      const size_t colon = k.name.rfind(": ");
      ++kernel_kinds[colon == std::string::npos ? k.name : k.name.substr(colon + 2)];
    }
    // Batch 1 to 4; every fourth network runs its batch in chunks of one sample (the smallest
    // chunk budget), as a large batch of a big network would.
    const int64_t batch = 1 + i % 4;
    const bool chunked = i % 4 == 3;
    std::string where;
    const double err = jit_vs_reference(g, isa, batch, seed, u8, &where, chunked ? 1 : 0);
    if (!(err <= kTol)) {
      // The first failing network is printed whole; it reproduces alone from its seed.
      ADD_FAILURE() << "network seed " << seed << " (" << isa_id(isa) << ", batch " << batch
                    << (chunked ? " in chunks of one sample" : "") << (u8 ? ", uint8 input" : "")
                    << "): scaled error " << err << " at " << where << "\n"
                    << (failures++ == 0 ? dump_graph(g) : std::string());
    }
    layers += static_cast<int64_t>(g.nodes.size());
  }
  std::printf("[ random networks ] %d networks (%lld layers) on %s; kernels used:", networks,
              static_cast<long long>(layers), isa_id(isa));
  for (const auto& [kind, n] : kernel_kinds) std::printf(" %s x%d", kind.c_str(), n);
  std::printf("\n");
  // The generator must keep reaching the kernels the robot networks use; a change that makes it
  // degenerate (every network tiny, no branches) fails here instead of testing less in silence.
  const auto used = [&](const std::string& part) {
    int n = 0;
    for (const auto& [kind, count] : kernel_kinds) n += kind.find(part) != std::string::npos ? count : 0;
    return n;
  };
  EXPECT_GT(used("f32-conv"), 0);
  EXPECT_GT(used("f32-dwconv"), 0);
  EXPECT_GT(used("f32-gemm"), 0);
  EXPECT_GT(used("maxpool"), 0);
  EXPECT_GT(used("u8-to-f32"), 0);
  EXPECT_GT(used("upsample"), 0);
  if (isa == Isa::kSse41) {
    EXPECT_GT(used("-sse41-planar"), 0);  // f32-conv-...-sse41-planar
  }
}

// EngineOptions::threads: every splittable kernel split (kernel_parts.h) gives the single-thread
// outputs bit for bit, on 2, 3 and 4 threads, batch 1 to 3, float and uint8 inputs.
TEST_P(JitRandomNetworks, ThreadsBitIdentical) {
  const Isa isa = GetParam();
  int split = 0;
  for (int i = 0; i < 40; ++i) {
    const uint32_t seed = 9000 + static_cast<uint32_t>(i);
    bool u8 = false;
    const Graph g = NetGen(seed).build(&u8);
    const int threads = 2 + i % 3;
    const int64_t batch = 1 + i % 3;
    int parts = 0;
    const std::string diff = threads_mismatch(g, isa, batch, seed, threads, u8, &parts);
    split += parts;
    EXPECT_EQ(diff, "") << "network seed " << seed << " (" << isa_id(isa) << ", " << threads << " threads, batch "
                        << batch << ")";
  }
  EXPECT_GT(split, 40);  // the networks do split (about 3 kernels each)
}

NND_ISA_SUITE(JitRandomNetworks);

}  // namespace
}  // namespace nnd::jit::test
