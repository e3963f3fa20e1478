// The NEON JIT as an engine under qemu-aarch64: the row is listed and detected, kernels carry the
// ISA in their names, the conv kernels multiply by element, and a layer whose kernel the NEON
// generators do not emit yet is kUnsupported (make_jit_engine) and listed by
// jit_unsupported_layers, which is what makes `engine: auto` serve the reference engine
// (daemon/registry/registry_builder.cpp). The JIT-vs-reference property tests of the layers the
// NEON generators emit are tests/jit/jit_layers*_test.cpp, built into this binary too.
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

TEST(NeonEngine, ALayerWithoutANeonKernelIsUnsupported) {
  PoolParams p;
  p.kind = PoolKind::kMax;
  p.window.kernel_h = p.window.kernel_w = 2;
  p.window.stride_h = p.window.stride_w = 2;
  const Graph g = one_node(p, {{8, 8, 5}});
  const std::vector<UnsupportedLayer> missing = jit_unsupported_layers(g);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].code, ErrorCode::kUnsupported);
  EXPECT_NE(missing[0].message.find("NEON"), std::string::npos) << missing[0].message;
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  try {
    (void)make_jit_engine(g, opt);
    FAIL() << "a max pooling compiled without a NEON window kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
  }
  // A network the generators cover entirely lists nothing.
  EXPECT_TRUE(jit_unsupported_layers(conv_relu6(3, 5)).empty());
}

TEST(NeonEngine, FastMathFallsBackToTheExactKernels) {
  ActivationParams p;
  p.activation = ActivationKind::kSigmoid;
  const Graph g = one_node(p, {{3, 21}});
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.math = MathMode::kFast;
  auto jit = make_jit_engine(g, opt);
  ASSERT_FALSE(jit->kernels().empty());
  EXPECT_EQ(jit->kernels().back().name.find("fast"), std::string::npos) << jit->kernels().back().name;
}

}  // namespace
}  // namespace nnd::jit::test
