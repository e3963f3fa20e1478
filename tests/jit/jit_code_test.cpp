// Properties of the generated code itself: ISA selection, the SSE4.1 path free of VEX/EVEX
// (decoded with Capstone), determinism, the dump switch and perf map, errors for what is not compiled, and
// re-entrant runs.
#include <capstone/capstone.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include "core/io/keras_hdf5.h"
#include "core/util/error.h"
#include "tests/jit_common/jit_test_util.h"
#include "tests/jit_common/kitchen_sink.h"

namespace nnd::jit::test {
namespace {

std::unique_ptr<JitEngine> compile(const Graph& g, Isa isa, JitConfig cfg = {}) {
  EngineOptions o;
  o.engine = EngineKind::kJit;
  o.isa = isa;
  return make_jit_engine(g, o, cfg);
}

TEST(JitCpu, AutoPicksTheBestAndMissingIsaIsAnError) {
  const CpuFeatures f = host();
  ASSERT_TRUE(f.has(Isa::kSse41)) << "the JIT needs SSE4.1";
  EXPECT_EQ(resolve_isa(IsaChoice::kAuto, f), f.best());
  CpuFeatures atom;
  atom.add(Isa::kSse41);
  atom.brand = "Atom";
  EXPECT_EQ(resolve_isa(IsaChoice::kAuto, atom), Isa::kSse41);
  try {
    resolve_isa(Isa::kAvx2, atom);
    FAIL() << "expected nnd::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'avx2' requested"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ErrorCode::kIsaUnavailable);
  }
  try {
    resolve_isa(IsaChoice::kAuto, CpuFeatures{});
    FAIL() << "expected nnd::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIsaUnavailable) << e.what();
  }
  JitConfig cfg;
  cfg.features = atom;
  EngineOptions o;
  o.engine = EngineKind::kJit;
  EXPECT_EQ(make_jit_engine(kitchen_sink(), o, cfg)->isa(), Isa::kSse41);
  // The engine reports the ISA the (forced) CPU lacks with the same code: `engine: auto` in the
  // daemon falls back on it.
  o.isa = Isa::kAvx512;
  try {
    make_jit_engine(kitchen_sink(), o, cfg);
    FAIL() << "expected nnd::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIsaUnavailable) << e.what();
  }
  std::printf("[ cpu ] %s: %s -> auto = %s\n", f.brand.c_str(), f.to_string().c_str(), isa_id(f.best()));
  // Under qemu -cpu Denverton (the robot's Atom family) ctest sets this: auto must pick SSE4.1.
  if (const char* want = std::getenv("NND_EXPECT_AUTO_ISA")) {
    EXPECT_STREQ(isa_id(f.best()), want);
    EngineOptions auto_opt;
    auto_opt.engine = EngineKind::kJit;
    EXPECT_STREQ(make_jit_engine(kitchen_sink(), auto_opt)->name().c_str(), (std::string("jit-") + want).c_str());
  }
}

// Counts instructions whose encoding starts (after legacy/REX prefixes) with a VEX (C4/C5) or
// EVEX (62) prefix, or that Capstone puts in an AVX/AVX2/AVX-512/FMA group.
struct VexCount {
  size_t instructions = 0, vex = 0;
  std::string first;
};

VexCount count_vex(const std::vector<uint8_t>& bytes, size_t size, bool require_full_decode = true) {
  VexCount out;
  csh h;
  EXPECT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(h, bytes.data(), size, 0, 0, &insn);
  size_t decoded = 0;
  for (size_t i = 0; i < n; ++i) {
    const cs_insn& in = insn[i];
    decoded += in.size;
    size_t p = 0;
    while (p < in.size && (in.bytes[p] == 0x66 || in.bytes[p] == 0xF2 || in.bytes[p] == 0xF3 ||
                           in.bytes[p] == 0x2E || in.bytes[p] == 0x3E || in.bytes[p] == 0x26 ||
                           in.bytes[p] == 0x64 || in.bytes[p] == 0x65 || in.bytes[p] == 0x36 ||
                           in.bytes[p] == 0xF0 || (in.bytes[p] & 0xF0) == 0x40)) {
      ++p;
    }
    bool vex = p < in.size && (in.bytes[p] == 0xC4 || in.bytes[p] == 0xC5 || in.bytes[p] == 0x62);
    for (uint8_t gi = 0; gi < in.detail->groups_count; ++gi) {
      const uint8_t grp = in.detail->groups[gi];
      if (grp == X86_GRP_AVX || grp == X86_GRP_AVX2 || grp == X86_GRP_AVX512 || grp == X86_GRP_FMA ||
          grp == X86_GRP_FMA4 || grp == X86_GRP_F16C) {
        vex = true;
      }
    }
    if (vex && out.first.empty()) out.first = std::string(in.mnemonic) + " " + in.op_str;
    out.vex += vex;
    ++out.instructions;
  }
  if (require_full_decode) {
    EXPECT_EQ(decoded, size) << "Capstone could not decode the whole kernel";
  }
  cs_free(insn, n);
  cs_close(&h);
  return out;
}

TEST(JitCode, Sse41CodeHasNoVexOrEvexInstruction) {
  auto e = compile(kitchen_sink(), Isa::kSse41);
  size_t total = 0;
  ASSERT_GT(e->kernels().size(), 8u);
  int special = 0;  // the planar and Winograd kernels must be among those decoded
  for (const CompiledKernel& k : e->kernels()) {
    const VexCount c = count_vex(k.bytes, k.code_size);
    EXPECT_EQ(c.vex, 0u) << k.name << ": first VEX/EVEX instruction: " << c.first;
    total += c.instructions;
    for (const char* family : {"-sse41-planar", "f32-planar-pack", "f32-wino-in", "f32-wino-out"}) {
      special += k.name.find(family) != std::string::npos ? 1 : 0;
    }
  }
  EXPECT_EQ(special, 4) << "kitchen_sink() no longer reaches the planar and Winograd kernels";
  std::printf("[ sse4.1 ] %zu kernels, %zu instructions decoded, none VEX/EVEX\n", e->kernels().size(), total);
}

// Prefix and escape bytes of each instruction (66/F2/F3/segment/lock, REX, and 0F, 0F 38 or 0F 3A
// after them): Silvermont's decoder takes up to 3 without a penalty. Returns the largest count
// and the first instruction that has it.
std::pair<int, std::string> max_prefix_escape_bytes(const std::vector<uint8_t>& bytes, size_t size) {
  csh h;
  EXPECT_EQ(cs_open(CS_ARCH_X86, CS_MODE_64, &h), CS_ERR_OK);
  cs_insn* insn = nullptr;
  const size_t n = cs_disasm(h, bytes.data(), size, 0, 0, &insn);
  std::pair<int, std::string> worst{0, ""};
  for (size_t i = 0; i < n; ++i) {
    const cs_insn& in = insn[i];
    size_t p = 0;
    while (p < in.size && (in.bytes[p] == 0x66 || in.bytes[p] == 0xF2 || in.bytes[p] == 0xF3 ||
                           in.bytes[p] == 0x2E || in.bytes[p] == 0x3E || in.bytes[p] == 0x26 ||
                           in.bytes[p] == 0x64 || in.bytes[p] == 0x65 || in.bytes[p] == 0x36 ||
                           in.bytes[p] == 0xF0 || (in.bytes[p] & 0xF0) == 0x40)) {
      ++p;
    }
    int count = static_cast<int>(p);
    if (p < in.size && in.bytes[p] == 0x0F) {
      ++count;
      if (p + 1 < in.size && (in.bytes[p + 1] == 0x38 || in.bytes[p + 1] == 0x3A)) ++count;
    }
    if (count > worst.first) worst = {count, std::string(in.mnemonic) + " " + in.op_str};
  }
  cs_free(insn, n);
  cs_close(&h);
  return worst;
}

// The planar pack's gathers (insertps, 66 0F 3A) run 40k-150k times per inference of the robot
// networks: they must not add a REX prefix, a fourth prefix/escape byte. Both the kitchen sink and
// bop's stem (the strided gather loop) are checked.
TEST(JitCode, Sse41PlanarPackStaysWithinThreePrefixAndEscapeBytes) {
  std::vector<Graph> graphs{kitchen_sink()};
  const std::filesystem::path bop = std::filesystem::path(NND_SHARED_MODELS_DIR) / "bop.h5";
  if (std::filesystem::exists(bop)) graphs.push_back(load_keras_h5(bop.string()));
  int packs = 0;
  for (const Graph& g : graphs) {
    auto e = compile(g, Isa::kSse41);
    for (const CompiledKernel& k : e->kernels()) {
      if (k.name.find("f32-planar-pack") == std::string::npos) continue;
      ++packs;
      const auto [count, insn] = max_prefix_escape_bytes(k.bytes, k.code_size);
      EXPECT_LE(count, 3) << k.name << ": " << insn;
    }
  }
  EXPECT_GE(packs, 1);
}

TEST(JitCode, DecoderSeesVexInAvx2AndEvexInAvx512Code) {
  // Positive control: the same check finds the VEX/EVEX instructions of the wider ISAs.
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!host().has(isa)) continue;
    auto e = compile(kitchen_sink(), isa);
    size_t vex = 0;
    for (const CompiledKernel& k : e->kernels()) vex += count_vex(k.bytes, k.code_size, false).vex;  // Capstone 4 stops at some EVEX forms
    EXPECT_GT(vex, 50u) << isa_id(isa);
  }
}

TEST(JitCode, DeterministicBytesAndHash) {
  for (Isa isa : all_isas()) {
    if (!host().has(isa)) continue;
    auto a = compile(kitchen_sink(), isa), b = compile(kitchen_sink(), isa);
    ASSERT_EQ(a->kernels().size(), b->kernels().size());
    for (size_t i = 0; i < a->kernels().size(); ++i) {
      EXPECT_EQ(a->kernels()[i].bytes, b->kernels()[i].bytes) << a->kernels()[i].name;
    }
    EXPECT_EQ(a->code_hash(), b->code_hash());
    std::printf("[ %s ] code hash %016llx, %zu bytes, arena %lld floats/sample\n", isa_id(isa),
                static_cast<unsigned long long>(a->code_hash()), a->code_bytes(),
                static_cast<long long>(a->arena_floats_per_sample()));
  }
  if (host().has(Isa::kAvx2)) {
    EXPECT_NE(compile(kitchen_sink(), Isa::kSse41)->code_hash(), compile(kitchen_sink(), Isa::kAvx2)->code_hash());
  }
}

TEST(JitCode, DumpWritesListingsAndPlan) {
  const auto dir = std::filesystem::path(NND_BINARY_DIR) / "jit-dump-test";
  std::filesystem::remove_all(dir);
  JitConfig cfg;
  cfg.dump_dir = dir.string();
  auto e = compile(kitchen_sink(), Isa::kSse41, cfg);
  ASSERT_TRUE(std::filesystem::exists(dir / "plan.txt"));
  size_t asm_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) asm_files += f.path().extension() == ".asm";
  EXPECT_EQ(asm_files, e->kernels().size());
  std::ifstream in(dir / "0-input__u8-to-f32-sse41.asm");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("pmovzxbd"), std::string::npos) << text;
}

// NND_PERF_MAP=1 names every kernel's code range in /tmp/perf-<pid>.map for `perf report`.
TEST(JitCode, PerfMapNamesEveryKernel) {
  const std::filesystem::path map = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::filesystem::remove(map);
  setenv("NND_PERF_MAP", "1", 1);
  auto e = compile(kitchen_sink(), Isa::kSse41);
  unsetenv("NND_PERF_MAP");
  std::ifstream in(map);
  ASSERT_TRUE(in) << map;
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    ASSERT_LT(lines, e->kernels().size()) << line;
    const CompiledKernel& k = e->kernels()[lines];
    char name[256] = {};
    unsigned long start = 0, size = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lx %lx %255[^\n]", &start, &size, name), 3) << line;
    EXPECT_EQ(start, reinterpret_cast<unsigned long>(k.fn)) << line;
    EXPECT_EQ(size, k.bytes.size()) << line;
    EXPECT_EQ(std::string(name), "nnd:" + std::to_string(lines) + "-" + k.name) << line;
  }
  EXPECT_EQ(lines, e->kernels().size());
  std::filesystem::remove(map);
  auto quiet = compile(kitchen_sink(), Isa::kSse41);  // unset again: no file
  EXPECT_FALSE(std::filesystem::exists(map));
}

TEST(JitCode, ReentrantRunsFromSeveralThreadsAgree) {
  const Graph g = kitchen_sink();
  auto e = compile(g, host().best());
  const int64_t batch = 3;
  std::vector<uint8_t> in(static_cast<size_t>(batch * 9 * 11 * 3));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 37);
  const InputView view{DType::kUInt8, in.data()};
  using Outputs = std::vector<std::vector<float>>;
  auto run_once = [&](Outputs& outs) {
    outs.resize(g.outputs.size());
    std::vector<float*> ptrs;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      outs[i].assign(static_cast<size_t>(batch * count_of(g.values[g.outputs[i]].shape)), 0);
      ptrs.push_back(outs[i].data());
    }
    e->run(batch, {&view, 1}, ptrs);
  };
  Outputs want;
  run_once(want);
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Outputs got;
      for (int i = 0; i < 50; ++i) {
        run_once(got);
        bad[static_cast<size_t>(t)] += got != want;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

}  // namespace
}  // namespace nnd::jit::test
