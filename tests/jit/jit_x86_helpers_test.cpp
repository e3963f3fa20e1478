// The x86 generators' checked helpers: the vector register pool, general-purpose register roles,
// the stack frame layout, the counted loops and the lane load/store, each on its own and in tiny
// kernels assembled with KernelModule and run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/jit/cpu_features.h"
#include "core/jit/kernel_module.h"
#include "core/jit/x86/emit_kernel.h"
#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/product_pipeline.h"
#include "core/jit/x86/stack_frame_p.h"
#include "core/jit/vec_reg_pool.h"
#include "core/util/error.h"

namespace nnd::jit {
namespace {

using namespace regs;

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<Isa> machine_isas() {
  const CpuFeatures f = detect_cpu_features();
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (f.has(isa)) isas.push_back(isa);
  }
  return isas;
}

// ---- vector register pool ----

TEST(JitVecRegPool, TakesTheLowestFreeRegistersInOrder) {
  VecRegPool pool(15, "test-kernel");
  VecRegs acc = pool.take_array(6, "acc");
  VecReg w = pool.take("w");
  VecReg x = pool.take("x");
  EXPECT_EQ(acc.first(), 0);
  EXPECT_EQ(acc[5], 5);
  EXPECT_EQ(acc.end(), 6);
  EXPECT_EQ(w.index(), 6);
  EXPECT_EQ(static_cast<int>(x), 7);
  EXPECT_EQ(pool.free_count(), 15 - 8);
}

TEST(JitVecRegPool, RotationHandsOutRegistersInTurn) {
  VecRegPool pool(15, "test-kernel");
  VecRegs acc = pool.take_array(4, "acc");
  VecRegs xb = pool.take_array(3, "broadcasts");
  RegRotation from_array(xb);
  std::vector<int> got;
  for (int i = 0; i < 7; ++i) got.push_back(from_array.next());
  EXPECT_EQ(got, (std::vector<int>{4, 5, 6, 4, 5, 6, 4}));
  RegRotation listed({9, 2});
  EXPECT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed.next(), 9);
  EXPECT_EQ(listed.next(), 2);
  EXPECT_EQ(listed.next(), 9);
}

TEST(JitVecRegPool, GivesRegistersBackAtTheEndOfTheirScope) {
  VecRegPool pool(15, "test-kernel");
  VecReg a = pool.take("a");
  {
    VecRegs tile = pool.take_array(4, "tile");
    EXPECT_EQ(tile.first(), 1);
    EXPECT_FALSE(pool.is_free(4));
  }
  EXPECT_TRUE(pool.is_free(4));
  VecReg b = pool.take("b");
  EXPECT_EQ(b.index(), 1);
  a.release();
  EXPECT_EQ(pool.take("c").index(), 0);  // temporary: released again at once
  EXPECT_TRUE(pool.is_free(0));
  VecReg moved = std::move(b);
  EXPECT_FALSE(pool.is_free(1));
  moved.release();
  EXPECT_TRUE(pool.is_free(1));
}

TEST(JitVecRegPool, TakingAHeldRegisterNamesBothHolders) {
  VecRegPool pool(15, "f32-conv-test");
  VecRegs acc = pool.take_array(4, "acc");
  const std::string msg = thrown_message([&] { (void)pool.take(2, "bias"); });
  EXPECT_NE(msg.find("f32-conv-test"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'acc[2]'"), std::string::npos) << msg;
  // A failed block leaves nothing half-taken.
  EXPECT_FALSE(thrown_message([&] { (void)pool.take_array(3, 3, "w"); }).empty());
  EXPECT_TRUE(pool.is_free(4));
  EXPECT_TRUE(pool.is_free(5));
}

TEST(JitVecRegPool, TakingMoreThanTheUsableRegistersFails) {
  VecRegPool pool(15, "f32-big-tile");
  VecRegs acc = pool.take_array(14, "acc");
  VecReg last = pool.take("x");
  EXPECT_EQ(last.index(), 14);
  const std::string msg = thrown_message([&] { (void)pool.take("one-too-many"); });
  EXPECT_NE(msg.find("f32-big-tile"), std::string::npos) << msg;
  EXPECT_NE(msg.find("one-too-many"), std::string::npos) << msg;
  EXPECT_FALSE(thrown_message([&] { (void)pool.take_array(20, "acc2"); }).empty());
  // The hooks' scratch register (index usable()) is never handed out.
  const std::string scratch = thrown_message([&] { (void)pool.take(15, "s"); });
  EXPECT_NE(scratch.find("scratch"), std::string::npos) << scratch;
  EXPECT_FALSE(thrown_message([&] { (void)acc[14]; }).empty());
}

TEST(JitVecRegPool, UsesTheEmittersRegisterCount) {
  for (Isa isa : machine_isas()) {
    KernelModule m(isa, false, "");
    compile_body(m, "pool", [&](VecEmitter& ve) {
      VecRegPool pool(ve, "pool");
      EXPECT_EQ(pool.usable(), ve.usable_regs());
      VecRegs all = pool.take_array(ve.usable_regs(), "all");
      EXPECT_EQ(all.end(), ve.scratch());
      EXPECT_FALSE(thrown_message([&] { (void)pool.take("more"); }).empty());
    });
  }
}

// ---- general-purpose register roles ----

TEST(JitGpRoles, AcceptsDistinctRoles) {
  GpRoles r("gather");
  EXPECT_EQ(r.role("in", kIn).id(), kIn.id());
  EXPECT_EQ(r.role("out", kOut).id(), kOut.id());
  r.clobbered_by("chunks", kChunksCounter);
  EXPECT_EQ(r.role("runs", kCi).id(), kCi.id());
}

TEST(JitGpRoles, RejectsSharedRegistersRaxRspAndClobberedRoles) {
  {
    GpRoles r("f32-gather");
    (void)r.role("in", kIn);
    const std::string msg = thrown_message([&] { (void)r.role("src", kIn); });
    EXPECT_NE(msg.find("f32-gather"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rsi"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'in'"), std::string::npos) << msg;
  }
  {
    GpRoles r("k");
    EXPECT_NE(thrown_message([&] { (void)r.role("tmp", x86::rax); }).find("scratch"), std::string::npos);
    EXPECT_FALSE(thrown_message([&] { (void)r.role("sp", x86::rsp); }).empty());
  }
  {
    GpRoles r("k");
    (void)r.role("kernel row counter", kKh);
    const std::string msg = thrown_message([&] { r.clobbered_by("chunks", kChunksCounter); });
    EXPECT_NE(msg.find("chunks"), std::string::npos) << msg;
    GpRoles r2("k");
    r2.clobbered_by("chunks", kChunksCounter);
    EXPECT_FALSE(thrown_message([&] { (void)r2.role("row", kKh); }).empty());
  }
}

// ---- stack frame ----

TEST(JitStackFrame, SlotsKeepTheirOffsetsAndTheFrameItsAlignment) {
  // The offsets the generators used before the layout computed them: the generated code depends
  // on them only through the golden hashes, so pin them here too.
  EXPECT_EQ(kInN, 0);
  EXPECT_EQ(kOutN, 8);
  EXPECT_EQ(kOhCnt, 16);
  EXPECT_EQ(kOwtCnt, 40);
  EXPECT_EQ(kBBase, 64);
  EXPECT_EQ(kResDelta, 72);
  EXPECT_EQ(kGrpW, 104);
  EXPECT_EQ(frame::kKernelFrame.used(), 112);
  EXPECT_EQ(kStackBytes, 120);
  EXPECT_EQ((8 + 8 * frame::kNumSavedGps + kStackBytes) % 16, 0);
}

TEST(JitStackFrame, LayoutRoundsSlotsAndFrame) {
  constexpr frame::Layout<3> l(std::array<frame::SlotDecl, 3>{{{"a", 4}, {"v", 64}, {"b", 8}}});
  static_assert(l.offset("a") == 0 && l.offset("v") == 8 && l.offset("b") == 72);
  static_assert(l.used() == 80 && l.bytes("v") == 64);
  EXPECT_EQ(l.size(), 88);  // 8 + 48 + 88 = 144
  constexpr frame::Layout<1> one(std::array<frame::SlotDecl, 1>{{{"x", 8}}});
  EXPECT_EQ(one.size(), 8);
}

// Every slot is writable and readable at its offset: a kernel stores a distinct value in each and
// sums them back.
TEST(JitStackFrame, EverySlotHoldsItsOwnValue) {
  KernelModule m(Isa::kSse41, false, "");
  KernelFn fn = compile_body(m, "slots", [&](VecEmitter& ve) {
    x86::Assembler& a = ve.as();
    for (size_t i = 0; i < frame::kKernelFrame.count(); ++i) {
      a.mov(slot(frame::kKernelFrame.offset_at(i)), static_cast<int>(i + 1));
    }
    a.xor_(x86::eax, x86::eax);
    for (size_t i = 0; i < frame::kKernelFrame.count(); ++i) a.add(x86::rax, slot(frame::kKernelFrame.offset_at(i)));
    a.mov(kOut, x86::qword_ptr(kArgs, 8));
    a.mov(x86::qword_ptr(kOut), x86::rax);
  });
  int64_t out[2] = {0, 0};
  KernelArgs args{nullptr, reinterpret_cast<float*>(out), nullptr, 1, nullptr};
  fn(&args);
  const auto n = static_cast<int64_t>(frame::kKernelFrame.count());
  EXPECT_EQ(out[0], n * (n + 1) / 2);
}

// ---- counted loops ----

// out[0] = sum over loops of the iterations they ran, each counted into rax by a distinct weight.
TEST(JitCountedLoop, RunsTheRequestedNumberOfIterations) {
  KernelModule m(Isa::kSse41, false, "");
  KernelFn fn = compile_body(m, "loops", [&](VecEmitter& ve) {
    x86::Assembler& a = ve.as();
    a.xor_(x86::eax, x86::eax);
    counted_loop(ve, kCi, 7, [&] { a.add(x86::rax, 1); });                  // 7
    counted_loop(ve, slot(kOhCnt), 3, [&] {                                  // 3 x 5 x 10 = 150
      counted_loop(ve, kKh, 5, [&] { a.add(x86::rax, 10); });
    });
    a.mov(kN, x86::qword_ptr(kArgs, 24));
    count_down_loop(ve, kN, Trips::samples(1), [&] { a.add(x86::rax, 1000); });  // batch x 1000
    int advances = 0;
    repeat_loop(ve, kKw, 1, [&] { a.add(x86::rax, 100000); }, [&] { ++advances; });  // once, no advance
    EXPECT_EQ(advances, 0);
    repeat_loop(ve, kKw, 4, [&] { a.add(x86::rax, 1000000); }, [&] { ++advances; });  // 4
    EXPECT_EQ(advances, 1);  // emitted once, inside the loop
    a.mov(kOut, x86::qword_ptr(kArgs, 8));
    a.mov(x86::qword_ptr(kOut), x86::rax);
  });
  int64_t out[2] = {0, 0};
  KernelArgs args{nullptr, reinterpret_cast<float*>(out), nullptr, 6, nullptr};
  fn(&args);
  EXPECT_EQ(out[0], 7 + 150 + 6000 + 100000 + 4000000);
}

// Whole steps through vector(), the rest one at a time through scalar(), none for a count of 0.
TEST(JitCountedLoop, VectorThenScalarSplitsTheCount) {
  KernelModule m(Isa::kSse41, false, "");
  KernelFn fn = compile_body(m, "vs", [&](VecEmitter& ve) {
    x86::Assembler& a = ve.as();
    a.xor_(x86::eax, x86::eax);
    a.mov(kN, x86::qword_ptr(kArgs, 24));
    vector_then_scalar_loop(ve, kN, 4, Trips::samples(1), [&] { a.add(x86::rax, 1000); }, [&] { a.add(x86::rax, 1); });
    a.mov(kOut, x86::qword_ptr(kArgs, 8));
    a.mov(x86::qword_ptr(kOut), x86::rax);
  });
  for (int64_t n : {0, 1, 3, 4, 5, 11, 12}) {
    int64_t out[2] = {-1, 0};
    KernelArgs args{nullptr, reinterpret_cast<float*>(out), nullptr, n, nullptr};
    fn(&args);
    EXPECT_EQ(out[0], n / 4 * 1000 + n % 4) << n;
  }
}

// chunks(): every float of the span exactly once, in vector-sized pieces, straight or looped.
TEST(JitCountedLoop, ChunksCoverTheSpanOnce) {
  for (int64_t count : {1, 3, 4, 7, 32, 35, 36, 37, 100, 203}) {
    for (int unroll : {1, 2, 4}) {
      KernelModule m(Isa::kSse41, false, "");
      KernelFn fn = compile_body(m, "chunks", [&](VecEmitter& ve) {
        x86::Assembler& a = ve.as();
        a.mov(kOut, x86::qword_ptr(kArgs, 8));
        ve.load_const(0, 1.0f);
        chunks(ve, count, unroll, [&](int64_t off, int lanes) {
          ve.load_lanes(1, at(kOut, off), lanes);
          ve.add(1, 1, 0);
          ve.store_lanes(at(kOut, off), 1, lanes);
        }, [&](int64_t b) { add_imm(a, kOut, b); });
        a.mov(x86::rax, x86::qword_ptr(kArgs, 8));
        a.sub(kOut, x86::rax);  // the pointer is restored: 0
        a.mov(x86::qword_ptr(x86::rax, static_cast<int32_t>(count * 4 + 8)), kOut);
      });
      std::vector<float> buf(static_cast<size_t>(count + 8), 0.0f);
      KernelArgs args{nullptr, buf.data(), nullptr, 1, nullptr};
      fn(&args);
      for (int64_t i = 0; i < count; ++i) ASSERT_EQ(buf[static_cast<size_t>(i)], 1.0f) << count << " " << i;
      int64_t restored = -1;
      std::memcpy(&restored, &buf[static_cast<size_t>(count + 2)], 8);
      EXPECT_EQ(restored, 0) << count;
    }
  }
}

TEST(JitCountedLoop, AZeroTripLoopIsAGeneratorError) {
  KernelModule m(Isa::kSse41, false, "");
  EXPECT_THROW(compile_body(m, "zero", [&](VecEmitter& ve) { counted_loop(ve, kCi, 0, [] {}); }), Error);
}

// ---- product pipeline ----

// A block of products as the kernels queue them: 4 accumulators (registers 0-3) from out[], and
// How a test queues its 6 groups' inputs: loaded into register 4, loaded into 4 and 5 in turn, or
// lane 0 of in[] broadcast into 4 and 5 in turn (ProductPipeline::broadcast, the conv tiles' form).
enum class Inputs { kOneRegister, kTwoRegisters, kTwoBroadcasts };
const char* inputs_name(Inputs i) {
  return i == Inputs::kOneRegister ? "one input" : i == Inputs::kTwoRegisters ? "two inputs" : "two broadcasts";
}

// 6 groups of 4 products, each group's input from in[] (one input register: every load waits for
// the group before), the factors from w[]. The pipeline gets `temps` temporaries from register 6
// up, the last being scratch().
void queue_products(VecEmitter& ve, ProductPipeline& p, Inputs inputs) {
  for (int g = 0; g < 6; ++g) {
    const int x = inputs == Inputs::kOneRegister ? 4 : 4 + g % 2;
    if (inputs == Inputs::kTwoBroadcasts) p.broadcast(x, at(kIn, g * 64));
    else p.input(x, [&ve, x, g] { ve.load(x, at(kIn, g * 64)); });
    for (int c = 0; c < 4; ++c) p.product(c, x, at(kW, (g * 4 + c) * 64));
  }
}

// The sums equal the products added in order (float addition per accumulator in the same order),
// for every temporary count (every shape) and every input pattern, on every ISA of the machine.
TEST(JitProductPipeline, SumsEqualTheProductsInQueueOrder) {
  const int lanes_max = 16;
  std::vector<float> in(6 * 16), w(24 * 16), init(4 * 16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.25f + static_cast<float>(i % 13) * 0.375f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = -1.5f + static_cast<float>(i % 17) * 0.1875f;
  for (size_t i = 0; i < init.size(); ++i) init[i] = static_cast<float>(i) * 0.5f;
  for (Isa isa : machine_isas()) {
    for (int temps = 1; temps <= 5; ++temps) {
      for (Inputs inputs : {Inputs::kOneRegister, Inputs::kTwoRegisters, Inputs::kTwoBroadcasts}) {
        KernelModule m(isa, false, "");
        int width = 0;
        KernelFn fn = compile_body(m, "products", [&](VecEmitter& ve) {
          width = ve.width();
          x86::Assembler& a = ve.as();
          a.mov(kIn, x86::qword_ptr(kArgs, 0));
          a.mov(kIn, x86::qword_ptr(kIn, 0));
          a.mov(kOut, x86::qword_ptr(kArgs, 8));
          a.mov(kW, x86::qword_ptr(kArgs, 16));
          for (int c = 0; c < 4; ++c) ve.load(c, at(kOut, c * 64));
          std::vector<int> t;
          for (int i = 0; i < temps - 1; ++i) t.push_back(6 + i);
          t.push_back(ve.scratch());
          ProductPipeline p(ve, t);
          queue_products(ve, p, inputs);
          p.flush();
          for (int c = 0; c < 4; ++c) ve.store(at(kOut, c * 64), c);
        });
        std::vector<float> out = init;
        const void* ins[1] = {in.data()};
        KernelArgs args{ins, out.data(), w.data(), 1, nullptr};
        fn(&args);
        for (int c = 0; c < 4; ++c) {
          for (int l = 0; l < width && l < lanes_max; ++l) {
            float expect = init[static_cast<size_t>(c * 16 + l)];
            for (int g = 0; g < 6; ++g) {
              const float x = in[static_cast<size_t>(g * 16 + (inputs == Inputs::kTwoBroadcasts ? 0 : l))];
              const float f = w[static_cast<size_t>((g * 4 + c) * 16 + l)];
              const float prod = x * f;  // SSE and FMA differ in rounding: compare with a tolerance
              expect += prod;
            }
            EXPECT_NEAR(out[static_cast<size_t>(c * 16 + l)], expect, 1e-4f)
                << isa_id(isa) << " temps " << temps << " " << inputs_name(inputs) << " acc " << c << " lane " << l;
          }
        }
      }
    }
  }
}

// The mnemonics of an SSE pipeline's listing, movups/movss/shufps into the input registers (xmm4,
// xmm5) marked " input".
std::vector<std::string> pipeline_ops(Inputs inputs) {
  KernelModule m(Isa::kSse41, true, "");
  compile_body(m, "products", [&](VecEmitter& ve) {
    ProductPipeline p(ve, std::vector<int>{6, 7, 8, ve.scratch()});
    queue_products(ve, p, inputs);
    p.flush();
  });
  std::vector<std::string> ops;
  std::string line;
  for (char ch : m.kernels().back().listing + "\n") {
    if (ch != '\n') {
      line += ch;
      continue;
    }
    const std::string op = line.substr(0, line.find(' '));
    const bool input = line.find("xmm4, ") == op.size() + 1 || line.find("xmm5, ") == op.size() + 1;
    if (op == "movups" || op == "mulps" || op == "addps" || op == "movss" || op == "shufps") ops.push_back(op + (input ? " input" : ""));
    line.clear();
  }
  return ops;
}

// How many multiplies come before the n-th (from 1) `op` in `ops`; -1 if there is none.
int muls_before(const std::vector<std::string>& ops, const std::string& op, int n) {
  int muls = 0;
  for (const std::string& o : ops) {
    if (o == op && --n == 0) return muls;
    if (o == "mulps") ++muls;
  }
  return -1;
}

// SSE's order: with 4 temporaries each addps comes 3 multiplies after its own, and the second input
// (another register) loads before the first group's last multiply; with one input register the
// load waits for that multiply.
TEST(JitProductPipeline, SseDelaysEachAddBehindLaterMultiplies) {
  for (Inputs inputs : {Inputs::kOneRegister, Inputs::kTwoRegisters}) {
    const std::vector<std::string> ops = pipeline_ops(inputs);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "mulps"), 24);
    EXPECT_EQ(muls_before(ops, "addps", 1), 3) << "the first sum waits for 3 more multiplies";
    EXPECT_EQ(muls_before(ops, "movups input", 2), inputs == Inputs::kTwoRegisters ? 3 : 4) << inputs_name(inputs);
  }
}

// A broadcast input is two instructions placed apart: the second group's scalar load (into the
// other register) two multiplies before the group's first (4), its shufps one before; none of the
// movss is followed directly by its own shufps except the first group's, which has nothing to go
// ahead of.
TEST(JitProductPipeline, SseLoadsABroadcastOneProductBeforeItsShuffle) {
  const std::vector<std::string> ops = pipeline_ops(Inputs::kTwoBroadcasts);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "movss input"), 6);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "shufps input"), 6);
  EXPECT_EQ(muls_before(ops, "movss input", 2), 2);
  EXPECT_EQ(muls_before(ops, "shufps input", 2), 3);
  for (int g = 2; g <= 6; ++g) {
    EXPECT_EQ(muls_before(ops, "movss input", g), 4 * (g - 1) - 2) << "group " << g;
    EXPECT_EQ(muls_before(ops, "shufps input", g), 4 * (g - 1) - 1) << "group " << g;
  }
}

TEST(JitProductPipeline, InputsMustNotWriteTemporaries) {
  KernelModule m(Isa::kSse41, false, "");
  EXPECT_THROW(compile_body(m, "bad", [&](VecEmitter& ve) {
    ProductPipeline p(ve, std::vector<int>{6, ve.scratch()});
    p.input(6, [] {});
  }), Error);
  EXPECT_THROW(compile_body(m, "none", [&](VecEmitter& ve) { ProductPipeline p(ve, std::vector<int>{}); }), Error);
}

// ---- lane load/store ----

TEST(JitLanes, MovesExactlyTheRequestedLanes) {
  for (Isa isa : machine_isas()) {
    KernelModule m(isa, false, "");
    int width = 0;
    std::vector<KernelFn> fns;
    compile_body(m, "width", [&](VecEmitter& ve) { width = ve.width(); });
    for (int lanes = 1; lanes <= width; ++lanes) {
      fns.push_back(compile_body(m, "lanes", [&](VecEmitter& ve) {
        x86::Assembler& a = ve.as();
        a.mov(kIn, x86::qword_ptr(kArgs, 0));
        a.mov(kIn, x86::qword_ptr(kIn, 0));
        a.mov(kOut, x86::qword_ptr(kArgs, 8));
        ve.load_lanes(0, x86::ptr(kIn), lanes);
        ve.store_lanes(x86::ptr(kOut), 0, lanes);
      }));
    }
    std::vector<float> in(static_cast<size_t>(width)), out(static_cast<size_t>(width));
    for (int i = 0; i < width; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i + 1);
    const void* ins[1] = {in.data()};
    for (int lanes = 1; lanes <= width; ++lanes) {
      std::fill(out.begin(), out.end(), -1.0f);
      KernelArgs args{ins, out.data(), nullptr, 1, nullptr};
      fns[static_cast<size_t>(lanes - 1)](&args);
      for (int i = 0; i < width; ++i) {
        EXPECT_EQ(out[static_cast<size_t>(i)], i < lanes ? in[static_cast<size_t>(i)] : -1.0f)
            << isa_id(isa) << " lanes " << lanes << " lane " << i;
      }
    }
  }
}

TEST(JitLanes, CountsOutsideOneToWidthAreGeneratorErrors) {
  for (Isa isa : machine_isas()) {
    KernelModule m(isa, false, "");
    for (int bad : {0, -1, 1000}) {
      EXPECT_THROW(compile_body(m, "bad", [&](VecEmitter& ve) { ve.load_lanes(0, x86::ptr(kIn), bad); }), Error);
      EXPECT_THROW(compile_body(m, "bad", [&](VecEmitter& ve) { ve.store_lanes(x86::ptr(kOut), 0, bad); }), Error);
    }
    EXPECT_THROW(compile_body(m, "wide", [&](VecEmitter& ve) { ve.load_lanes(0, x86::ptr(kIn), ve.width() + 1); }), Error);
  }
}

}  // namespace
}  // namespace nnd::jit
