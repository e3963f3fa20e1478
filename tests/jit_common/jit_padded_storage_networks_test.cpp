// Padded storage on the real robot networks: which buffers get a border, per network and ISA,
// pinned to what the graph-based prediction chose before padded storage was decided on the
// kernel plans. Lowering only (no code generation), so every ISA is checked on every machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/io/model_file.h"
#include "core/jit/lower/lower.h"
#include "core/passes/pass.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/support/required_files.h"

namespace nnd::jit::test {
namespace {

namespace fs = std::filesystem;

// "<buffer name> <h>x<w>x<c> border t,b,l,r fill f" for every bordered buffer, in plan order.
std::string bordered_buffers(const Graph& loaded, Isa isa) {
  Graph g = loaded;
  infer_shapes(g);
  passes::make_default_pipeline().run(g);
  LowerContext cx(g, isa, MathMode::kExact);
  lower_graph(cx);
  std::ostringstream o;
  for (const PlanBuffer& b : cx.buffers) {
    if (!b.placed) continue;
    const PaddedStore& p = *b.placed;
    o << b.name << " " << p.h << "x" << p.w << "x" << p.c << " border " << p.top << "," << p.bottom << "," << p.left
      << "," << p.right << " fill " << p.fill << "\n";
  }
  return o.str();
}

// The number of bordered buffers per network, as the graph-based prediction chose them (the same
// for the Keras and ONNX files and on every ISA: planar and Winograd convolutions take a bordered
// input as the direct ones do). The buffers themselves are the same on every ISA.
TEST(PaddedStorageNetworks, BorderedBuffersAsBefore) {
  const std::map<std::string, int> expected{
      {"ball-penalty-multihead", 3}, {"bop", 7}, {"field-boundary", 12}, {"referee-gesture", 12}};
  for (const auto& [net, count] : expected) {
    for (const char* ext : {".h5", ".onnx"}) {
      const fs::path p = fs::path(NND_SHARED_MODELS_DIR) / (net + ext);
      if (!::nnd::test::require_file(p)) continue;
      const Graph g = load_model(p.string());
      const std::string first = bordered_buffers(g, all_isas().front());
      EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), count) << net << ext << ":\n" << first;
      for (Isa isa : all_isas()) EXPECT_EQ(bordered_buffers(g, isa), first) << net << ext << " " << isa_id(isa);
    }
  }
}

}  // namespace
}  // namespace nnd::jit::test
