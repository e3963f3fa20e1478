// The basic-block route of the cost model (tools/cost_model/bbv_blocks.h): the code-region file,
// exp-bbv's files summed per block address, and the blocks cut as valgrind cuts them with chasing
// off (first control transfer or --vex-guest-max-insns), with their runs. Synthetic files only:
// running valgrind is compare_compilednn.sh's job, not a test's.
#include <gtest/gtest.h>

#ifdef NND_HAVE_BBV
#include <filesystem>
#include <fstream>

#include "core/util/error.h"
#include "tests/support/test_temp_dir.h"
#include "tools/cost_model/bbv_blocks.h"

namespace nnd::cost {
namespace {

namespace fs = std::filesystem;

class BbvBlocks : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = nnd::test::fresh_test_dir("nnd-bbv"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    const std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

// movaps xmm0, xmm1; addps xmm0, xmm2; jne back (a 3-instruction loop body, 8 bytes), then ret,
// then five nops.
CodeRegion loop_region() {
  return {0x1000, {0x0f, 0x28, 0xc1, 0x0f, 0x58, 0xc2, 0x75, 0xf8, 0xc3, 0x90, 0x90, 0x90, 0x90, 0x90}, "kernel: f32-test"};
}

TEST_F(BbvBlocks, RegionsRoundTrip) {
  const std::string p = (dir_ / "regions").string();
  write_code_regions(p, {loop_region(), {0xabc0, {0xc3}, "other kernel"}});
  const std::vector<CodeRegion> r = read_code_regions(p);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].address, 0x1000u);
  EXPECT_EQ(r[0].bytes, loop_region().bytes);
  EXPECT_EQ(r[0].name, "kernel: f32-test");
  EXPECT_EQ(r[1].address, 0xabc0u);
  EXPECT_EQ(r[1].name, "other kernel");
  EXPECT_THROW(read_code_regions(file("bad", "1000 3 0f28 short\n")), Error);
}

TEST_F(BbvBlocks, CountsAreSummedOverIntervalsByAddress) {
  const std::string pc = file("pc", "F:1:1000:\nF:2:1008:\nF:3:4000:memcpy\n");
  const std::string bb = file("bb", "# Thread 1\nT:1:30 :2:5 \nT:1:6 :3:99 \n");
  const auto counts = read_bbv(bb, pc);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts.at(0x1000), 36u);
  EXPECT_EQ(counts.at(0x1008), 5u);
  EXPECT_EQ(counts.at(0x4000), 99u);
  EXPECT_THROW(read_bbv(file("bb2", "T:7:1\n"), pc), Error);  // a block the pc file lacks
}

TEST_F(BbvBlocks, BlocksEndAtTheFirstBranchOrTheInstructionCap) {
  const std::vector<CodeRegion> regions = {loop_region()};
  // The loop ran 12 times (36 instructions), ret 5 times, the nops 4 times (as 2-instruction
  // blocks under a cap of 2), and a block outside every region is ignored.
  const std::map<uint64_t, uint64_t> counts = {{0x1000, 36}, {0x1008, 5}, {0x1009, 8}, {0x5000, 1000}};
  std::vector<std::string> warnings;
  const std::vector<ExecutedBlock> b = executed_blocks(regions, counts, 2, &warnings);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].offset, 0u);
  EXPECT_EQ(b[0].instructions, 2);  // the cap: movaps, addps
  EXPECT_EQ(b[0].runs, 18);
  const std::vector<ExecutedBlock> c = executed_blocks(regions, counts, 32, &warnings);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].instructions, 3);  // through the jne
  EXPECT_EQ(c[0].size, 8u);
  EXPECT_EQ(c[0].runs, 12);
  EXPECT_EQ(c[1].offset, 8u);
  EXPECT_EQ(c[1].instructions, 1);  // ret
  EXPECT_EQ(c[1].runs, 5);
  EXPECT_EQ(c[2].instructions, 5);  // five nops to the region's end
  EXPECT_EQ(c[2].size, 5u);
  // 8 instructions are not a multiple of 5: said, and rounded.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("kernel: f32-test+0x9: 8 instructions are not a multiple of the block's 5"), std::string::npos)
      << warnings[0];
  EXPECT_EQ(c[2].runs, 2);
}

}  // namespace
}  // namespace nnd::cost
#endif
