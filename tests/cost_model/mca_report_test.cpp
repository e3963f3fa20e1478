// The llvm-mca report parser on a captured LLVM 14 report (data/mca14_silvermont_two_regions.*:
// the input and `llvm-mca -mcpu=silvermont -iterations=100 -bottleneck-analysis
// -instruction-info=0`'s output), and the llvm-mc listing parser on a captured listing.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/util/error.h"
#include "tools/cost_model/disassembly.h"
#include "tools/cost_model/mca_report.h"

namespace nnd::cost {
namespace {

std::string read(const std::string& name) {
  std::ifstream f(std::string(NND_COST_TEST_DATA) + "/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(McaReport, ParsesEveryRegionOfACapturedReport) {
  const std::vector<McaRegion> r = parse_mca_report(read("mca14_silvermont_two_regions.txt"));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "chain");
  EXPECT_EQ(r[0].iterations, 100);
  EXPECT_EQ(r[0].instructions, 900);
  EXPECT_EQ(r[0].total_cycles, 1105);
  EXPECT_EQ(r[0].dispatch_width, 2);
  EXPECT_DOUBLE_EQ(r[0].block_rthroughput, 4.5);
  EXPECT_DOUBLE_EQ(r[0].cycles_per_iteration(), 11.05);
  EXPECT_DOUBLE_EQ(r[0].register_dep_pct, 72.49);
  EXPECT_DOUBLE_EQ(r[0].resource_pct, 9.05);
  ASSERT_EQ(r[0].pressure.size(), 8u);
  EXPECT_EQ(r[0].pressure[2].first, "SLMFPMultiplier");
  EXPECT_DOUBLE_EQ(r[0].pressure[2].second, 4.0);
  EXPECT_DOUBLE_EQ(r[0].pressure[0].second, 0.0);  // "-"
  EXPECT_EQ(r[0].busiest().first, "SLMFPMultiplier");
  // Two mul -> add chains of 8 cycles per iteration against a port bound of 4.5.
  EXPECT_EQ(r[0].bottleneck(), "latency: register deps");

  EXPECT_EQ(r[1].name, "ports");
  EXPECT_EQ(r[1].total_cycles, 806);
  EXPECT_DOUBLE_EQ(r[1].block_rthroughput, 8.0);
  // Four independent mulps: the multiplier, one every 2 cycles.
  EXPECT_EQ(r[1].bottleneck(), "SLMFPMultiplier 8.0/it");
}

TEST(McaReport, ATextWithoutRegionsIsAFormatError) {
  EXPECT_THROW(parse_mca_report("error: found an unsupported instruction\n"), Error);
  EXPECT_THROW(parse_mca_report("[0] Code Region - x\n\nIterations:        100\n"), Error);  // no cycles
}

TEST(LlvmMcListing, CountsTheBytesOfEachInstructionFixupsIncluded) {
  const std::string listing =
      "\t.text\n"
      "\tmovq\t%rcx, %rax                      # encoding: [0x48,0x89,0xc8]\n"
      "\tmulps\t16(%rip), %xmm0                 # encoding: [0x0f,0x59,0x05,0x10,0x00,0x00,0x00]\n"
      "\tjne\t-14                             # encoding: [0x75,A]\n"
      "                                        #   fixup A - offset: 1, value: -14-1, kind: FK_PCRel_1\n"
      "\tjne\t256                             # encoding: [0x0f,0x85,A,A,A,A]\n"
      "                                        #   fixup A - offset: 2, value: 256-4, kind: FK_PCRel_4\n";
  const auto lines = parse_llvm_mc_listing(listing);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].first, "movq\t%rcx, %rax");
  EXPECT_EQ(lines[0].second, 3u);
  EXPECT_EQ(lines[1].first, "mulps\t16(%rip), %xmm0");
  EXPECT_EQ(lines[1].second, 7u);
  EXPECT_EQ(lines[2].second, 2u);
  EXPECT_EQ(lines[3].first, "jne\t256");
  EXPECT_EQ(lines[3].second, 6u);
}

}  // namespace
}  // namespace nnd::cost
