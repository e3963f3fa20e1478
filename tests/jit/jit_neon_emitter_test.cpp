// The NEON emitter and generators on the x86 host (they are built into this test, not into the
// x86 engine): hooks are assembled into an AArch64 CodeHolder and checked against known
// encodings (the words llvm-mc assembles for the same instructions), and whole NEON kernels are
// generated and, when llvm-mc is installed, disassembled: every word must decode, and the conv
// kernels must multiply by element. Running them is tests/arm64's (under qemu-aarch64).
#include <gtest/gtest.h>

#include <asmjit/core.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/jit/arm64/emit_function.h"
#include "core/jit/arm64/neon_emitter.h"
#include "core/jit/arm64/regs_p.h"
#include "core/jit/kernel_config.h"
#include "core/jit/specs/conv.h"
#include "core/util/error.h"
#include "tests/support/neon_conv_spec.h"
#include "tests/support/test_temp_dir.h"

namespace nnd::jit::arm64 {
namespace {

std::vector<uint32_t> words(asmjit::CodeHolder& code) {
  code.flatten();
  code.resolveUnresolvedLinks();
  const asmjit::CodeBuffer& b = code.textSection()->buffer();
  std::vector<uint32_t> w(b.size() / 4);
  std::memcpy(w.data(), b.data(), w.size() * 4);
  return w;
}

// The instruction words `body` emits through a NeonEmitter.
std::vector<uint32_t> assemble(const std::function<void(NeonEmitter&)>& body) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  a64::Assembler a(&code);
  NeonEmitter ve(a, nullptr);
  body(ve);
  ve.emit_const_pool();
  return words(code);
}

using W = std::vector<uint32_t>;

TEST(NeonEmitter, LoadsAndStoresPickTheEncodingTheOffsetFits) {
  // ldr q1, [x2, #16] / ldur q1, [x2, #-16] / ldur q1, [x2, #12] / mov x16, #65536; ldr q1, [x2, x16]
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load(1, a64::x2, 16); }), (W{0x3dc00441}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load(1, a64::x2, -16); }), (W{0x3cdf0041}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load(1, a64::x2, 12); }), (W{0x3cc0c041}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load(1, a64::x2, 65536); }), (W{0xd2a00030, 0x3cf06841}));
  // str q3, [x4, #65520]: the largest scaled offset
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.store(a64::x4, 65520, 3); }), (W{0x3dbffc83}));
}

TEST(NeonEmitter, TailsMoveSingleLanes) {
  // ldr s5, [x1] / ldr d5, [x1] / ldr d5, [x1, #8]; add x16, x1, #16; ld1 {v5.s}[2], [x16]
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load_tail(5, a64::x1, 0, 1); }), (W{0xbd400025}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load_tail(5, a64::x1, 0, 2); }), (W{0xfd400025}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.load_tail(5, a64::x1, 8, 3); }),
            (W{0xfd400425, 0x91004030, 0x4d408205}));
  // str d5, [x1]; add x16, x1, #8; st1 {v5.s}[2], [x16]
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.store_tail(a64::x1, 0, 5, 3); }), (W{0xfd000025, 0x91002030, 0x4d008205}));
}

TEST(NeonEmitter, MultiplyAddByElementAndBroadcast) {
  // fmla v3.4s, v1.4s, v2.s[3] / ld1r {v4.4s}, [x2]
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.fmadd_lane(3, 1, 2, 3); }), (W{0x4fa21823}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.broadcast(4, a64::x2, 0); }), (W{0x4d40c844}));
}

TEST(NeonEmitter, BitwiseIntegerAndReductionHooks) {
  // and / orr / bic (d = ~a & b) on v1 = v2 op v3; add .4s; shl #23; fcvtns; scvtf
  EXPECT_EQ(assemble([](NeonEmitter& ve) {
              ve.and_(1, 2, 3);
              ve.or_(1, 2, 3);
              ve.andnot(1, 2, 3);
              ve.add_i32(1, 2, 3);
              ve.shl_i32(1, 2, 23);
              ve.cvt_f2i(1, 2);
              ve.cvt_i2f(1, 2);
            }),
            (W{0x4e231c41, 0x4ea31c41, 0x4e621c61, 0x4ea38441, 0x4f375441, 0x4e21a841, 0x4e21d841}));
  // faddp / fmaxp twice: every lane holds the sum / maximum
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.hsum(1, 2); }), (W{0x6e22d441, 0x6e21d421}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.hmax(1, 2); }), (W{0x6e22f441, 0x6e21f421}));
}

TEST(NeonEmitter, ImmediatesTheAddCannotEncodeGoThroughX17) {
  // add x1, x1, #4095 / sub x1, x1, #1, lsl #12 / mov x17, #4097; add x1, x1, x17
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.add_imm(a64::x1, 4095); }), (W{0x913ffc21}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.add_imm(a64::x1, -4096); }), (W{0xd1400421}));
  EXPECT_EQ(assemble([](NeonEmitter& ve) { ve.add_imm(a64::x1, 4097); }), (W{0xd2820031, 0x8b110021}));
}

TEST(NeonEmitter, ConstantsArePcRelativeAndShared) {
  // Two loads of 2.0f share one pool entry after the code: ldr q0, #12; ldr q1, #8; the pool at
  // the next 16-byte boundary.
  const W w = assemble([](NeonEmitter& ve) {
    ve.load_const(0, 2.0f);
    ve.load_const(1, 2.0f);
  });
  ASSERT_EQ(w.size(), 8u);
  EXPECT_EQ(w[0], 0x9c000080u);  // ldr q0, #16 (the pool at byte 16)
  EXPECT_EQ(w[1], 0x9c000061u);  // ldr q1, #12
  for (int i = 4; i < 8; ++i) EXPECT_EQ(w[static_cast<size_t>(i)], 0x40000000u);
}

// ---- whole kernels ----

std::vector<uint32_t> kernel_words(const KernelSpec& spec) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  const size_t size = emit_function(code, spec, nullptr);
  W w = words(code);
  w.resize(size / 4);
  return w;
}

// llvm-mc's disassembly of `w`, or "" when llvm-mc is not installed.
std::string disassemble(const W& w) {
  if (std::system("command -v llvm-mc >/dev/null 2>&1") != 0) return "";
  const std::filesystem::path dir = nnd::test::fresh_test_dir("neon-disasm");
  const std::filesystem::path in = dir / "bytes.txt", out = dir / "asm.txt";
  {
    std::ofstream f(in);
    char buf[64];
    for (uint32_t x : w) {
      std::snprintf(buf, sizeof buf, "0x%02x 0x%02x 0x%02x 0x%02x\n", x & 0xff, (x >> 8) & 0xff, (x >> 16) & 0xff, x >> 24);
      f << buf;
    }
  }
  const std::string cmd = "llvm-mc --disassemble -triple=aarch64 " + in.string() + " > " + out.string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return "llvm-mc failed";
  std::ifstream f(out);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

ConvSpec conv(int64_t h, int64_t w, int64_t cin, int64_t cout, int64_t k, bool rows) {
  return test::neon_conv_spec(h, w, cin, cout, k, rows, ActivationKind::kRelu6, 1.0f);
}

// One spec of each family of arm64/neon_kernels.h (window, fast math, layer norm, gather), with
// channel tails, residual, border and constants that take MOVZ + MOVK.
const std::vector<std::pair<std::string, KernelSpec>>& neon_family_specs() {
  static const std::vector<std::pair<std::string, KernelSpec>> specs = [] {
    WindowSpec dw;
    dw.op = WindowOp::kDepthwise;
    dw.c = 13;
    dw.out_h = 3;
    dw.out_w = 7;
    dw.kh = dw.kw = 3;
    dw.in_h = 5;
    dw.in_w = 9;
    dw.has_bias = true;
    dw.residual = true;
    dw.act = ActivationKind::kRelu6;
    dw.vmax = 2;
    dw.rows = 6;
    WindowSpec pool = dw;
    pool.op = WindowOp::kSum;
    pool.residual = false;
    pool.scale = 0.25f;
    pool.out_place = {9 * 13, 5 * 9 * 13, 10 * 13};
    FastUnarySpec fast;
    fast.count = 23;
    fast.act = ActivationKind::kGeluErf;
    LayerNormSpec ln;
    ln.block = 19;
    ln.gamma_off = 0;
    ln.beta_off = 20;
    GatherSpec gather;
    gather.taps = 3;
    gather.len = 7;
    gather.runs = 4;
    gather.zero_fill = true;
    return std::vector<std::pair<std::string, KernelSpec>>{
        {"dwconv", dw},     {"avgpool", pool},  {"fast gelu", fast}, {"softmax", FastSoftmaxSpec{2, 11}},
        {"layernorm", ln},  {"gather", gather}};
  }();
  return specs;
}

TEST(NeonKernels, EveryWordDecodes) {
  UnarySpec u8;
  u8.u8 = true;
  u8.count = 37;
  UnarySpec affine;
  affine.count = 30;
  affine.channels = 3;
  affine.scale_off = 0;
  affine.shift_off = 4;
  affine.act = ActivationKind::kHardSwish;
  PadSpec pad;
  pad.h = pad.w = 5;
  pad.c = 3;
  pad.dm = 2;
  pad.top = pad.left = 1;
  std::vector<std::pair<std::string, KernelSpec>> specs = {
      {"conv", conv(6, 7, 5, 13, 3, false)},     {"gemm", conv(4, 4, 64, 8, 1, true)},
      {"unary u8", u8},                          {"affine", affine},
      {"pad", pad},                              {"merge", MergeSpec{BinOp::kMax, 3, 9, 3.0f}},
      {"concat", ConcatSpec{3, {5, 8}}},         {"posscale", PositionScaleSpec{4, 6, 0}},
      {"helper", HelperCallSpec{0, 10, 0}},      {"prelu", ParamEltSpec{ParamOp::kPRelu, 11, 0, 0}},
  };
  specs.insert(specs.end(), neon_family_specs().begin(), neon_family_specs().end());
  for (const auto& [name, spec] : specs) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(emits(spec));
    const W w = kernel_words(spec);
    ASSERT_FALSE(w.empty());
    const std::string text = disassemble(w);
    if (text.empty()) GTEST_SKIP() << "llvm-mc is not installed: the disassembly is not checked";
    EXPECT_EQ(text.find("invalid"), std::string::npos) << text;
    EXPECT_EQ(text.find("warning"), std::string::npos) << text;
    if (name == "conv" || name == "gemm") {
      EXPECT_NE(text.find(".4s, v"), std::string::npos);
      EXPECT_NE(text.find("fmla\tv"), std::string::npos) << text;
      EXPECT_NE(text.find(".s["), std::string::npos) << "no FMLA by element:\n" << text;
    }
  }
}

// Planar and Winograd convolutions are optional forms NEON leaves to the direct convolution.
// The window kernel's loops are recorded for the cost model: the samples (per sample), then in
// each of the 3 output rows the 3 x 3 taps of every tile's channel blocks (7 pixels in tiles of 6:
// one full tile and a remainder of one, each with a full and a partial block of 13 channels).
TEST(NeonKernels, WindowLoopsAreRecordedForTheCostModel) {
  const KernelSpec& dw = neon_family_specs()[0].second;
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  LoopRecorder loops(2);
  const size_t size = emit_function(code, dw, &loops);
  const std::vector<LoopRecord> r = loops.records("dwconv");
  ASSERT_EQ(r.size(), 1u + 1u + 4u * 2u);
  EXPECT_TRUE(r[0].per_sample);
  EXPECT_EQ(r[0].trips, 2);
  EXPECT_EQ(r[0].parent, -1);
  EXPECT_EQ(r[1].trips, 3);  // output rows
  EXPECT_EQ(r[1].parent, 0);
  for (size_t i = 2; i < r.size(); ++i) {
    EXPECT_EQ(r[i].trips, 3) << i;  // kernel rows, kernel columns
    EXPECT_EQ(r[i].parent, i % 2 == 0 ? 1 : static_cast<int>(i) - 1) << i;
    EXPECT_LE(r[i].end, size);
  }
}

// Every family of neon_kernels.h records its loops, the outermost per sample of the call.
TEST(NeonKernels, EveryFamilyRecordsItsLoops) {
  for (const auto& [name, spec] : neon_family_specs()) {
    asmjit::CodeHolder code;
    code.init(asmjit::Environment(asmjit::Arch::kAArch64));
    LoopRecorder loops(3);
    emit_function(code, spec, &loops);
    const std::vector<LoopRecord> r = loops.records(name);
    ASSERT_FALSE(r.empty()) << name;
    EXPECT_TRUE(r[0].per_sample) << name;
    EXPECT_EQ(r[0].parent, -1) << name;
  }
}

TEST(NeonKernels, FamiliesWithoutAGeneratorAreDeclined) {
  EXPECT_FALSE(emits(WinogradInSpec{}));
  EXPECT_FALSE(emits(WinogradOutSpec{}));
  EXPECT_FALSE(emits(PlanarPackSpec{}));
  EXPECT_FALSE(emits(PlanarConvSpec{}));
  asmjit::CodeHolder code;
  code.init(asmjit::Environment(asmjit::Arch::kAArch64));
  EXPECT_THROW(emit_function(code, WinogradInSpec{}, nullptr), Error);
}

TEST(NeonKernels, TilesStayWithinTheRegisterFile) {
  // (V + 1) R + V <= 31 for every block width conv_blocking() picks.
  for (int64_t cout : {1, 4, 8, 12, 16, 100}) {
    const ConvBlocking b = conv_blocking(isa_traits(Isa::kNeon), cout);
    EXPECT_LE((b.vmax + 1) * b.rows + b.vmax, 31) << cout;
    EXPECT_GE(b.rows * b.vmax, 8) << cout << ": fewer accumulators than 2 FMA pipes x 4 cycles";
  }
}

}  // namespace
}  // namespace nnd::jit::arm64
