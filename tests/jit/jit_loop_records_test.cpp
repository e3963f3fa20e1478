// Loop records (core/jit/loop_record.h): the loop helpers record each loop's byte range, nesting
// and count; recording changes no byte of the code; and, counted over a real conv and GEMM kernel,
// the multiplies inside the recorded regions, weighted by the recorded counts, are exactly the
// products the layer's shape implies (so every count, range and parent is right).
#include <capstone/capstone.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/jit/jit_engine.h"
#include "core/jit/kernel_module.h"
#include "core/jit/x86/emit_kernel.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/stack_frame_p.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/jit_common/kitchen_sink.h"

namespace nnd::jit::test {
namespace {

using namespace regs;

// The helper loops of JitCountedLoop.RunsTheRequestedNumberOfIterations, at a planned batch of 6.
void helper_loops(VecEmitter& ve) {
  x86::Assembler& a = ve.as();
  a.xor_(x86::eax, x86::eax);
  counted_loop(ve, kCi, 7, [&] { a.add(x86::rax, 1); });
  counted_loop(ve, slot(kOhCnt), 3, [&] { counted_loop(ve, kKh, 5, [&] { a.add(x86::rax, 10); }); });
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  count_down_loop(ve, kN, Trips::samples(2), [&] { a.add(x86::rax, 1000); });
  repeat_loop(ve, kKw, 1, [&] { a.add(x86::rax, 100000); }, [] {});  // no loop, no record
  a.mov(kN, x86::qword_ptr(kArgs, 24));
  vector_then_scalar_loop(ve, kN, 4, Trips::samples(3), [&] { a.add(x86::rax, 1); }, [&] { a.add(x86::rax, 2); });
}

TEST(JitLoopRecords, HelpersRecordRangesNestingAndCounts) {
  KernelModule plain(Isa::kSse41, false, "");
  compile_body(plain, "loops", helper_loops);
  KernelModule recorded(Isa::kSse41, false, "");
  recorded.record_loops(6);
  compile_body(recorded, "loops", helper_loops);
  const CompiledKernel& k = recorded.kernels().front();
  EXPECT_EQ(k.bytes, plain.kernels().front().bytes) << "recording changed the code";
  EXPECT_TRUE(plain.kernels().front().loops.empty());

  const std::vector<LoopRecord>& r = k.loops;
  ASSERT_EQ(r.size(), 6u);
  const int64_t trips[] = {7, 3, 5, 12, 18 / 4, 18 % 4};  // samples(2) and samples(3) at batch 6
  const int parent[] = {-1, -1, 1, -1, -1, -1};
  const bool per_sample[] = {false, false, false, true, true, true};
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].trips, trips[i]) << i;
    EXPECT_EQ(r[i].parent, parent[i]) << i;
    EXPECT_EQ(r[i].per_sample, per_sample[i]) << i;
    EXPECT_LT(r[i].begin, r[i].end) << i;
    EXPECT_LE(r[i].end, k.code_size) << i;
  }
  // The inner loop lies inside its parent, the others one after another; the count-down loops end
  // with their back edge (jnz).
  EXPECT_LE(r[1].begin, r[2].begin);
  EXPECT_LE(r[2].end, r[1].end);
  for (size_t i : {1, 3, 4, 5}) EXPECT_LE(r[i - (i == 3 ? 2 : 1)].end, r[i].begin) << i;
  for (size_t i : {0, 2, 3, 5}) {
    const uint8_t op = k.bytes[r[i].end - 2];
    EXPECT_EQ(op, 0x75) << "record " << i << " does not end with a short jnz";
  }
}

TEST(JitLoopRecords, AnUnclosedRegionIsAnError) {
  LoopRecorder r(1);
  r.open(0, 3, false);
  EXPECT_THROW(r.records("k"), Error);
  LoopRecorder twice(1);
  twice.close(4);
  EXPECT_THROW(twice.records("k"), Error);
}

// How often each instruction of `k` runs per call: its innermost record's count times those of
// the records around it (1 outside every record).
std::vector<int64_t> runs_per_byte(const CompiledKernel& k) {
  std::vector<int64_t> runs(k.code_size, 1);
  for (size_t i = 0; i < k.loops.size(); ++i) {
    int64_t n = 1;
    for (int p = static_cast<int>(i); p >= 0; p = k.loops[static_cast<size_t>(p)].parent) {
      n *= k.loops[static_cast<size_t>(p)].trips;
    }
    // Records are listed parents first, so an inner record overwrites its parent's count.
    for (size_t b = k.loops[i].begin; b < k.loops[i].end; ++b) runs[b] = n;
  }
  return runs;
}

// Vector multiplies (mulps, or the FMA of avx2/avx512) executed per call, by the loop records.
int64_t recorded_multiplies(const CompiledKernel& k) {
  csh h;
  EXPECT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(h, k.bytes.data(), k.code_size, 0, 0, &insn);
  const std::vector<int64_t> runs = runs_per_byte(k);
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const std::string m = insn[i].mnemonic;
    if (m == "mulps" || m.rfind("vfmadd", 0) == 0) total += runs[insn[i].address];
  }
  cs_free(insn, n);
  cs_close(&h);
  return total;
}

int64_t network_multiplies(const Graph& g, Isa isa, int64_t batch) {
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = isa;
  JitConfig cfg;
  cfg.features = CpuFeatures{}.add(Isa::kSse41).add(Isa::kAvx2).add(Isa::kAvx512);  // compiled, never run
  cfg.record_loops_batch = batch;
  auto e = make_jit_engine(g, o, cfg);
  int64_t total = 0;
  for (const CompiledKernel& k : e->kernels()) total += recorded_multiplies(k);
  return total;
}

class JitLoopRecordsIsa : public ::testing::TestWithParam<Isa> {};

// A 3x3 valid conv, 12 -> 16 channels on 9x11 (7x9 outputs: odd, so no Winograd; 12 input
// channels, so not planar): every product is one lane of one vector multiply.
TEST_P(JitLoopRecordsIsa, ConvMultipliesMatchItsShape) {
  Rng rng(3);
  ConvParams c;
  c.filters = 16;
  c.window.kernel_h = c.window.kernel_w = 3;
  c.kernel = rng.weights({3, 3, 12, 16});
  c.bias = rng.weights({16});
  c.activation = ActivationKind::kRelu;
  const Graph g = one_node(c, {{9, 11, 12}});
  const int W = isa_traits(GetParam()).f32_lanes;
  for (int64_t batch : {1, 3, 7}) {
    EXPECT_EQ(network_multiplies(g, GetParam(), batch), batch * 7 * 9 * 3 * 3 * 12 * 16 / W) << "batch " << batch;
  }
}

// A Dense over 5 rows per sample (GEMM rows mode): full row tiles and the one remainder tile the
// planned row count takes.
TEST_P(JitLoopRecordsIsa, GemmMultipliesMatchItsShape) {
  Rng rng(4);
  DenseParams d;
  d.units = 32;
  d.kernel = rng.weights({20, 32});
  d.bias = rng.weights({32});
  const Graph g = one_node(d, {{5, 20}});
  const int W = isa_traits(GetParam()).f32_lanes;
  for (int64_t batch : {1, 2, 4}) {
    EXPECT_EQ(network_multiplies(g, GetParam(), batch), batch * 5 * 20 * 32 / W) << "batch " << batch;
  }
}

// No loop escapes the records: in every kernel of the kitchen-sink network (every kernel family,
// planar and Winograd included), each backward jump is the back edge of a record that starts at
// its target and ends right after it.
TEST_P(JitLoopRecordsIsa, EveryBackwardJumpClosesARecord) {
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = GetParam();
  JitConfig cfg;
  cfg.features = CpuFeatures{}.add(Isa::kSse41).add(Isa::kAvx2).add(Isa::kAvx512);
  cfg.record_loops_batch = 2;
  auto e = make_jit_engine(kitchen_sink(), o, cfg);
  csh h;
  ASSERT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  size_t back_edges = 0;
  for (const CompiledKernel& k : e->kernels()) {
    cs_insn* insn = nullptr;
    const size_t n = cs_disasm(h, k.bytes.data(), k.code_size, 0, 0, &insn);
    for (size_t i = 0; i < n; ++i) {
      const cs_insn& in = insn[i];
      bool jump = false;
      for (uint8_t g = 0; g < in.detail->groups_count; ++g) jump = jump || in.detail->groups[g] == X86_GRP_JUMP;
      if (!jump || in.detail->x86.op_count != 1 || in.detail->x86.operands[0].type != X86_OP_IMM) continue;
      const uint64_t target = static_cast<uint64_t>(in.detail->x86.operands[0].imm);
      if (target > in.address) continue;
      ++back_edges;
      bool closes = false;
      for (const LoopRecord& r : k.loops) closes = closes || (r.begin == target && r.end == in.address + in.size);
      EXPECT_TRUE(closes) << k.name << ": the back edge at " << in.address << " to " << target << " closes no record";
    }
    cs_free(insn, n);
  }
  cs_close(&h);
  EXPECT_GT(back_edges, 20u);
}

INSTANTIATE_TEST_SUITE_P(Isa, JitLoopRecordsIsa, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
}  // namespace nnd::jit::test
