// The NEON JIT as an engine under qemu-aarch64: the row is listed and detected, kernels carry the
// ISA in their names, the conv kernels multiply by element, and the window, layer norm, gather and
// fast-math families are NEON kernels. (What the JIT does not compile is kUnsupported on every
// architecture: ExpandRecurrent.LeavesLayersOverTheStepLimitToTheReferenceEngine.) The
// JIT-vs-reference property tests of every layer kind run for NEON from tests/jit_common.
#include <gtest/gtest.h>

#include <string>

#include "core/jit/cpu_features.h"
#include "core/jit/jit_engine.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

TEST(NeonEngine, TheRowIsListedAndDetected) {
  ASSERT_EQ(all_isas(), std::vector<Isa>{Isa::kNeon});
  EXPECT_EQ(isa_from_id("neon"), Isa::kNeon);
  EXPECT_FALSE(isa_from_id("avx2").has_value());
  EXPECT_TRUE(detect_cpu_features().has(Isa::kNeon));
}

Graph conv_relu6(int64_t cin, int64_t filters) {
  Rng r(5);
  ConvParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.padding = Padding::kSame;
  p.filters = filters;
  p.kernel = r.weights({3, 3, cin, filters}, 0.3f);
  p.bias = r.weights({filters});
  p.activation = ActivationKind::kRelu6;
  return one_node(p, {{9, 11, cin}});
}

TEST(NeonEngine, ConvKernelsAreNamedNeonAndMultiplyByElement) {
  const Graph g = conv_relu6(8, 16);
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.isa = Isa::kNeon;
  JitConfig config;
  config.keep_listing = true;
  auto jit = make_jit_engine(g, opt, config);
  EXPECT_EQ(jit->name(), "jit-neon");
  bool conv = false;
  for (const CompiledKernel& k : jit->kernels()) {
    EXPECT_NE(k.name.find("-neon"), std::string::npos) << k.name;
    if (k.name.find("f32-conv-bias+relu6") == std::string::npos) continue;
    conv = true;
    // AsmJit's listing: "fmla v0.4s, v20.4s, v24.s[1]".
    EXPECT_NE(k.listing.find(".s["), std::string::npos) << k.listing;
  }
  EXPECT_TRUE(conv);
  EXPECT_LE(jit_vs_reference(g, Isa::kNeon, 3, 1), kTol);
}

// The families of arm64/neon_kernels.h are NEON kernels of the engine: pooling, depthwise, layer
// normalisation, a Permute (the gather generator) and fast math compile to kernels named for NEON, nothing is
// listed as unsupported, and each matches the reference engine.
TEST(NeonEngine, WindowLayerNormGatherAndFastMathAreNeonKernels) {
  Rng r(8);
  PoolParams pool;
  pool.kind = PoolKind::kMax;
  pool.window.kernel_h = pool.window.kernel_w = 2;
  pool.window.stride_h = pool.window.stride_w = 2;
  DepthwiseConvParams dw;
  dw.window.kernel_h = dw.window.kernel_w = 3;
  dw.kernel = r.weights({3, 3, 5, 1});
  dw.bias = r.weights({5});
  LayerNormParams ln;
  ln.keras_axes = {3};  // the channels of (4, 3, 5)
  ln.gamma = r.weights({5});
  ln.beta = r.weights({5});
  PermuteParams perm;
  perm.dims = {2, 1, 3};
  ActivationParams sig;
  sig.activation = ActivationKind::kSigmoid;
  struct Case {
    Graph g;
    const char* family;
    MathMode math;
  };
  const Case cases[] = {{one_node(pool, {{8, 8, 5}}), "f32-maxpool", MathMode::kExact},
                        {one_node(dw, {{7, 6, 5}}), "f32-dwconv", MathMode::kExact},
                        {one_node(ln, {{4, 3, 5}}), "f32-layernorm", MathMode::kExact},
                        {one_node(perm, {{4, 3, 5}}), "permute", MathMode::kExact},
                        {one_node(sig, {{3, 21}}), "f32-fast-sigmoid", MathMode::kFast}};
  for (const Case& c : cases) {
    EXPECT_TRUE(jit_unsupported_layers(c.g).empty()) << c.family;
    EngineOptions opt;
    opt.engine = EngineKind::kJit;
    opt.math = c.math;
    auto jit = make_jit_engine(c.g, opt);
    int found = 0;
    for (const CompiledKernel& k : jit->kernels()) {
      EXPECT_NE(k.name.find("-neon"), std::string::npos) << k.name;
      found += k.name.find(c.family) != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(found, 1) << c.family << " kernel, first kernel: " << jit->kernels().front().name;
    if (c.math == MathMode::kExact) {
      EXPECT_LE(jit_vs_reference(c.g, Isa::kNeon, 3, 2), kTol) << c.family;
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
