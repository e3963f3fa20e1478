// The ISAs the JIT tests of this folder run on: the build's table rows (all_isas()), each of the
// build's architecture. A build without any (an architecture whose code generator does not exist
// yet) reports it here as a skip, with the reason, instead of every suite passing on nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

TEST(JitBuild, ListsTheIsasTheTestsRunOn) {
  std::string here, absent;
  for (Isa isa : all_isas()) {
    EXPECT_EQ(isa_traits(isa).arch, kBuildArch) << isa_id(isa) << " is listed in a build for another architecture";
    (host().has(isa) ? here : absent) += std::string(" ") + isa_id(isa);
  }
  EXPECT_FALSE(here.empty()) << "this CPU runs none of the build's ISAs:" << absent;
  std::printf("[ isas ] %s: tested%s%s%s\n", arch_name(kBuildArch), here.c_str(),
              absent.empty() ? "" : "; skipped (not on this CPU):", absent.c_str());
}

}  // namespace
}  // namespace nnd::jit::test
