// The ISA table (core/jit/isa.h): ids and their spellings as options, and every trait checked
// against the code its emitter actually generates (decoded with Capstone), so a row that lies about
// its ISA fails here rather than in a kernel choice. Runs without executing any generated code:
// every row is checked on every machine.
#include <asmjit/x86.h>
#include <capstone/capstone.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/jit/isa.h"
#include "core/jit/x86/vec_emitter.h"
#include "core/util/error.h"
#include "tests/jit_common/jit_test_util.h"

namespace nnd::jit::test {
namespace {

TEST(IsaTable, RowsAreInEnumeratorOrderAndIdsRoundTrip) {
  ASSERT_FALSE(all_isas().empty());
  for (size_t i = 0; i < all_isas().size(); ++i) {
    const Isa isa = all_isas()[i];
    const IsaTraits& t = isa_traits(isa);
    EXPECT_EQ(t.isa, isa);
    EXPECT_EQ(t.arch, kBuildArch) << t.id;
    EXPECT_EQ(isa_from_id(t.id), isa) << t.id;
    if (t.alias) {
      EXPECT_EQ(isa_from_id(t.alias), isa) << t.alias;
    }
    EXPECT_STREQ(isa_id(isa), t.id);
    if (i > 0) {  // increasing capability: CpuFeatures::best() takes the last one available
      EXPECT_LT(static_cast<int>(all_isas()[i - 1]), static_cast<int>(isa));
      EXPECT_GE(t.f32_lanes, isa_traits(all_isas()[i - 1]).f32_lanes) << t.id;
    }
  }
  for (const char* bad : {"", "auto", "avx9", "AVX2", "sse4.2", "avx512 ", "neon"}) {
    EXPECT_FALSE(isa_from_id(bad).has_value()) << "'" << bad << "'";
  }
}

// The spellings users type (config/SCHEMA.md, nnrun --help, README): changing them breaks configs.
TEST(IsaTable, OptionSpellingsAreTheDocumentedOnes) {
  EXPECT_EQ(isa_ids(), (std::vector<std::string>{"sse4.1", "avx2", "avx512"}));
  EXPECT_EQ(isa_choice_ids(), (std::vector<std::string>{"auto", "sse4.1", "avx2", "avx512"}));
  EXPECT_EQ(isa_choice_list(), "auto, sse4.1, avx2 or avx512");
  for (const std::string& id : isa_choice_ids()) {
    const std::optional<IsaChoice> c = parse_isa(id);
    ASSERT_TRUE(c.has_value()) << id;
    EXPECT_EQ(isa_name(*c), id);
  }
  EXPECT_TRUE(parse_isa("auto")->is_auto());
  EXPECT_EQ(parse_isa("sse4"), IsaChoice(Isa::kSse41));
  EXPECT_EQ(parse_isa("avx2"), IsaChoice(Isa::kAvx2));
  EXPECT_FALSE(parse_isa("avx3").has_value());
  EXPECT_FALSE(parse_isa("").has_value());
  EXPECT_TRUE(IsaChoice::kAuto.is_auto());
  EXPECT_FALSE(IsaChoice(Isa::kSse41).is_auto());
}

TEST(IsaTable, CpuFeaturesAreASetOfTableRows) {
  CpuFeatures f;
  EXPECT_EQ(f.to_string(), "none");
  try {
    f.best();
    ADD_FAILURE() << "expected nnd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lacks SSE4.1"), std::string::npos) << e.what();
  }
  f.add(Isa::kAvx2);
  EXPECT_TRUE(f.has(Isa::kAvx2));
  EXPECT_FALSE(f.has(Isa::kSse41));
  EXPECT_EQ(f.best(), Isa::kAvx2);
  f.add(Isa::kSse41);
  EXPECT_EQ(f.to_string(), "sse4.1 avx2");
  EXPECT_EQ(f.best(), Isa::kAvx2);
  for (Isa isa : all_isas()) f.add(isa);
  EXPECT_EQ(f.best(), all_isas().back());
  EXPECT_EQ(resolve_isa(Isa::kSse41, f), Isa::kSse41);
}

// Extension rows (AVX-VNNI, AVX-512 VNNI): the probe reports them, `isa:` does not choose them (they
// have no float code of their own), and the float kernels they would run are their base row's.
TEST(IsaTable, ExtensionRowsExtendARowWithFloatCode) {
  EXPECT_EQ(all_isa_rows(), (std::vector<Isa>{Isa::kSse41, Isa::kAvx2, Isa::kAvx512, Isa::kAvxVnni, Isa::kAvx512Vnni}));
  EXPECT_EQ(isa_traits(Isa::kAvxVnni).float_code, Isa::kAvx2);
  EXPECT_EQ(isa_traits(Isa::kAvx512Vnni).float_code, Isa::kAvx512);
  for (Isa isa : all_isas()) {
    EXPECT_EQ(isa_traits(isa).float_code, isa) << isa_id(isa);
    EXPECT_EQ(isa_traits(isa).int8_dot, Int8Dot::kPairSums16) << isa_id(isa) << ": pmaddubsw (SSSE3 and up)";
  }
  for (const char* id : {"avx-vnni", "avx512-vnni", "neon-dotprod"}) {
    EXPECT_FALSE(isa_from_id(id).has_value()) << id << ": not an `isa:` choice";
  }
  EXPECT_EQ(isa_traits(Isa::kAvxVnni).int8_dot, Int8Dot::kDot4);
  EXPECT_EQ(isa_traits(Isa::kAvx512Vnni).int8_dot, Int8Dot::kDot4);
  CpuFeatures f;
  f.add(Isa::kSse41).add(Isa::kAvx2).add(Isa::kAvx512).add(Isa::kAvx512Vnni);
  EXPECT_EQ(f.to_string(), "sse4.1 avx2 avx512 avx512-vnni");
  EXPECT_EQ(f.best(), Isa::kAvx512) << "the best row with float code";
  EXPECT_THROW(resolve_isa(IsaChoice(Isa::kAvxVnni), f), Error) << "this CPU has no AVX-VNNI";
}

// What one emitter call assembles to, decoded.
struct Decoded {
  std::vector<std::string> text;  // "mnemonic op_str" per instruction
  bool any(const std::string& needle) const {
    for (const std::string& s : text) {
      if (s.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::string s;
    for (const std::string& t : text) s += t + "; ";
    return s;
  }
};

Decoded emitted(Isa isa, const std::function<void(VecEmitter&)>& body) {
  asmjit::CodeHolder code;
  code.init(asmjit::Environment::host());
  x86::Assembler a(&code);
  std::unique_ptr<VecEmitter> ve = make_vec_emitter(isa, a);
  body(*ve);
  code.flatten();
  const asmjit::CodeBuffer& buf = code.textSection()->buffer();
  Decoded out;
  csh h;
  EXPECT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(h, buf.data(), buf.size(), 0, 0, &insn);
  size_t decoded = 0;
  for (size_t i = 0; i < n; ++i) {
    out.text.push_back(std::string(insn[i].mnemonic) + " " + insn[i].op_str);
    decoded += insn[i].size;
  }
  EXPECT_EQ(decoded, buf.size()) << "Capstone could not decode all of it";
  cs_free(insn, n);
  cs_close(&h);
  return out;
}

class IsaRow : public ::testing::TestWithParam<Isa> {};

TEST_P(IsaRow, EmitterAgreesWithItsRow) {
  const Isa isa = GetParam();
  const IsaTraits& t = isa_traits(isa);
  const x86::Mem m = x86::ptr(x86::rdi, 64);
  const std::string reg = t.f32_lanes == 4 ? "xmm" : t.f32_lanes == 8 ? "ymm" : "zmm";

  {
    asmjit::CodeHolder code;
    code.init(asmjit::Environment::host());
    x86::Assembler a(&code);
    EXPECT_EQ(make_vec_emitter(isa, a)->isa(), isa);
  }
  // f32_lanes: a full load moves a register of f32_lanes floats.
  const Decoded load = emitted(isa, [&](VecEmitter& ve) { ve.load(0, m); });
  ASSERT_EQ(load.text.size(), 1u) << load.all();
  EXPECT_TRUE(load.any(reg + "0")) << t.id << ": " << load.all();
  // vector_regs: the last register index is the last architectural register.
  const Decoded top = emitted(isa, [&](VecEmitter& ve) { ve.load(t.vector_regs - 1, m); });
  EXPECT_TRUE(top.any(reg + std::to_string(t.vector_regs - 1) + ",")) << t.id << ": " << top.all();
  // fma: fmadd() with register operands is one fused instruction.
  const Decoded fma = emitted(isa, [&](VecEmitter& ve) { ve.fmadd(0, 1, 2); });
  EXPECT_EQ(fma.any("vfmadd"), t.fma) << t.id << ": " << fma.all();
  EXPECT_EQ(fma.text.size() == 1, t.fma) << t.id << ": " << fma.all();
  // broadcast_mem_operand: fmadd_bcast() is one instruction and leaves the temporary alone.
  const Decoded bcast = emitted(isa, [&](VecEmitter& ve) { ve.fmadd_bcast(0, 1, m, 2); });
  EXPECT_EQ(bcast.text.size() == 1, t.broadcast_mem_operand) << t.id << ": " << bcast.all();
  EXPECT_EQ(bcast.any(reg + "2"), !t.broadcast_mem_operand) << t.id << ": " << bcast.all();
  // streams_weights: a product from memory costs no more instructions than one from a register.
  const Decoded from_mem = emitted(isa, [&](VecEmitter& ve) { ve.fmadd_mem(0, 1, m); });
  EXPECT_EQ(from_mem.text.size() <= fma.text.size(), t.streams_weights)
      << t.id << ": " << from_mem.all() << " vs " << fma.all();
  // tails: how a partial vector is stored.
  const Decoded tail = emitted(isa, [&](VecEmitter& ve) { ve.store_tail(m, 0, 3); });
  EXPECT_EQ(tail.any("vmaskmovps"), t.tails == TailMoves::kMaskedMoves) << t.id << ": " << tail.all();
  EXPECT_EQ(tail.any("{k"), t.tails == TailMoves::kMaskRegisters) << t.id << ": " << tail.all();
}

INSTANTIATE_TEST_SUITE_P(Isa, IsaRow, ::testing::ValuesIn(all_isas()), isa_param_name);

}  // namespace
}  // namespace nnd::jit::test
