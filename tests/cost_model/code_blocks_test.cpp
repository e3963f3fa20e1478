// Cutting a kernel into blocks by its loop records, and weighting their cycles by their runs.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "tools/cost_model/code_blocks.h"

namespace nnd::cost {
namespace {

jit::LoopRecord rec(size_t b, size_t e, int parent, int64_t trips) {
  jit::LoopRecord r;
  r.begin = b;
  r.end = e;
  r.parent = parent;
  r.trips = trips;
  return r;
}

// 0..100 code: a loop [10, 80) of 6 trips holding a loop [20, 40) of 5 and a branch [50, 60) the
// plan never takes; a loop [85, 95) of 3 after it.
TEST(CodeBlocks, BlocksAreTheCodeLessTheNestedRecordsRunAsOftenAsTheirChain) {
  const std::vector<jit::LoopRecord> loops = {rec(10, 80, -1, 6), rec(20, 40, 0, 5), rec(50, 60, 0, 0),
                                              rec(85, 95, -1, 3)};
  const std::vector<CodeBlock> b = code_blocks(loops, 100);
  ASSERT_EQ(b.size(), 5u);
  using R = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(b[0].ranges, (R{{0, 10}, {80, 85}, {95, 100}}));
  EXPECT_EQ(b[0].runs, 1);
  EXPECT_EQ(b[1].ranges, (R{{10, 20}, {40, 50}, {60, 80}}));
  EXPECT_EQ(b[1].runs, 6);
  EXPECT_EQ(b[2].ranges, (R{{20, 40}}));
  EXPECT_EQ(b[2].runs, 30);
  EXPECT_EQ(b[2].depth, 2);
  EXPECT_EQ(b[3].runs, 0);
  EXPECT_EQ(b[4].runs, 3);
  // 1 x 7 + 6 x 11 + 30 x 13 + 0 x 1000 + 3 x 17
  EXPECT_DOUBLE_EQ(weighted_cycles(b, {7, 11, 13, 1000, 17}), 7 + 66 + 390 + 51);
}

TEST(CodeBlocks, ARecordOutsideItsParentIsAnError) {
  EXPECT_THROW(code_blocks({rec(10, 80, -1, 2), rec(70, 90, 0, 2)}, 100), Error);
  EXPECT_THROW(code_blocks({rec(10, 120, -1, 2)}, 100), Error);
  EXPECT_THROW(code_blocks({rec(10, 20, 1, 2), rec(0, 30, -1, 2)}, 100), Error);  // parent listed after
}

}  // namespace
}  // namespace nnd::cost
