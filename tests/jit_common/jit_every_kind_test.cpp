// Every IR layer kind compiles on every ISA the CPU has and agrees with the reference engine: one
// node of each kind (tests/support/layer_kind_examples.h, checked complete against LayerParams by
// LayerKinds.OneExampleOfEveryKind), so a kind the JIT cannot lower fails here by name.
#include <gtest/gtest.h>

#include <string>

#include "tests/jit_common/jit_test_util.h"
#include "tests/support/layer_kind_examples.h"

namespace nnd::jit::test {
namespace {

class JitEveryKind : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override { NND_SKIP_WITHOUT(GetParam()); }
};

TEST_P(JitEveryKind, CompilesAndMatchesTheReference) {
  const auto examples = nnd::test::layer_kind_examples();
  ASSERT_EQ(examples.size(), std::variant_size_v<LayerParams>);
  for (const auto& x : examples) {
    const Graph g = nnd::test::layer_kind_graph(x);
    SCOPED_TRACE(layer_kind_name(x.params));
    if (x.jit_refuses) {
      // int8 kinds: refused by name until the JIT has integer kernels, never run approximately.
      try {
        (void)jit_vs_reference(g, GetParam(), 1, 17, false, nullptr);
        ADD_FAILURE() << "the JIT compiled an int8 layer it has no kernel for";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
        EXPECT_NE(std::string(e.what()).find("int8 is reference-only in this build"), std::string::npos) << e.what();
      }
      continue;
    }
    for (int64_t batch : {1, 3}) {
      std::string where;
      double err = INFINITY;
      try {
        err = jit_vs_reference(g, GetParam(), batch, 17, false, &where);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "does not compile or run: " << e.what();
        break;
      }
      EXPECT_LE(err, kTol) << "batch " << batch << " (" << isa_id(GetParam()) << "): " << where;
    }
  }
}

NND_ISA_SUITE(JitEveryKind);

}  // namespace
}  // namespace nnd::jit::test
