// A call's batch runs in chunks (JitConfig::chunk_bytes): every chunk size gives bit-identical
// outputs to one chunk, for float and uint8 inputs (the chunk offsets differ: 4 and 1 bytes per
// element), batch sizes that do and don't divide the chunk, on every ISA this CPU has.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

struct JitRun {
  std::vector<float> out;
  int64_t chunk = 0;
};

JitRun run_jit(const Graph& g, Isa isa, int64_t chunk_bytes, int64_t batch, const InputView& in) {
  EngineOptions opt;
  opt.engine = EngineKind::kJit;
  opt.isa = isa;
  JitConfig cfg;
  cfg.chunk_bytes = chunk_bytes;
  auto jit = make_jit_engine(g, opt, cfg);
  JitRun r;
  r.chunk = jit->chunk_samples();
  r.out.assign(static_cast<size_t>(batch * count_of(g.values[g.outputs[0]].shape)), NAN);
  float* out = r.out.data();
  jit->run(batch, std::span<const InputView>(&in, 1), std::span<float* const>(&out, 1));
  return r;
}

class JitBatchChunks : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }

  void check(const Graph& g, bool u8, uint32_t seed) {
    const int64_t per_sample = count_of(g.values[g.inputs[0]].shape);
    for (int64_t batch : {1, 2, 3, 5, 8, 9}) {
      Rng rng(seed + static_cast<uint32_t>(batch));
      std::vector<float> xf = rng.vec(batch * per_sample, -2.0f, 2.0f);
      std::vector<uint8_t> xu(xf.size());
      for (size_t i = 0; i < xu.size(); ++i) xu[i] = static_cast<uint8_t>(rng.range(0, 255));
      const InputView in = u8 ? InputView{DType::kUInt8, xu.data()} : InputView{DType::kFloat32, xf.data()};
      const JitRun whole = run_jit(g, GetParam(), int64_t{1} << 40, batch, in);
      ASSERT_GE(whole.chunk, 9);
      // 1 byte: one sample per chunk; the others: a few samples per chunk.
      for (int64_t bytes : {int64_t{1}, int64_t{40000}, int64_t{90000}}) {
        const JitRun part = run_jit(g, GetParam(), bytes, batch, in);
        if (bytes == 1) {
          EXPECT_EQ(part.chunk, 1);
        } else {
          EXPECT_LT(part.chunk, 9);
        }
        EXPECT_EQ(std::memcmp(part.out.data(), whole.out.data(), whole.out.size() * sizeof(float)), 0)
            << "batch " << batch << " in chunks of " << part.chunk << " (" << isa_id(GetParam()) << ")";
      }
    }
    std::string where;
    EXPECT_LE(jit_vs_reference(g, GetParam(), 7, seed, u8, &where), kTol) << where;
  }
};

Graph conv_graph(DType dtype) {
  Rng r(51);
  ConvParams p;
  p.window.kernel_h = p.window.kernel_w = 3;
  p.window.padding = Padding::kSame;
  p.filters = 12;
  p.kernel = r.weights({3, 3, 5, 12}, dtype == DType::kUInt8 ? 0.01f : 0.3f);
  p.bias = r.weights({12});
  p.activation = ActivationKind::kRelu;
  return one_node(p, {{9, 11, 5}}, dtype);
}

TEST_P(JitBatchChunks, FloatInput) { check(conv_graph(DType::kFloat32), false, 5100); }
TEST_P(JitBatchChunks, Uint8Input) { check(conv_graph(DType::kUInt8), true, 5200); }

NND_ISA_SUITE(JitBatchChunks);

}  // namespace
}  // namespace nnd::jit::test
