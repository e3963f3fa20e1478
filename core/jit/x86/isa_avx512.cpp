// AVX-512 hooks: 16 lanes, zmm0..zmm31 (EVEX); tails use opmask k1 set from eax.
#include "core/jit/x86/isa_avx2.h"

namespace nnd::jit {

namespace {

class Avx512Emitter final : public AvxEmitter {
 public:
  using AvxEmitter::AvxEmitter;
  Isa isa() const override { return Isa::kAvx512; }

  // Half and quarter vectors (8 or 4 channels, common in small networks) move as one ymm/xmm
  // access, which zeroes the upper lanes on load; other lengths use the k1 mask.
  void load_tail(int v, const x86::Mem& m, int n) override {
    if (n == 8 || n == 4) {
      x86::Mem mm = m;
      mm.setSize(static_cast<uint32_t>(n * 4));
      a_.vmovups(n == 8 ? x86::Vec(x86::ymm(static_cast<uint32_t>(v))) : x86::Vec(x86::xmm(static_cast<uint32_t>(v))), mm);
      return;
    }
    set_k1(n);
    a_.k(x86::k1).z().vmovups(x86::zmm(v), m);
  }
  void store_tail(const x86::Mem& m, int v, int n) override {
    if (n == 8 || n == 4) {
      x86::Mem mm = m;
      mm.setSize(static_cast<uint32_t>(n * 4));
      a_.vmovups(mm, n == 8 ? x86::Vec(x86::ymm(static_cast<uint32_t>(v))) : x86::Vec(x86::xmm(static_cast<uint32_t>(v))));
      return;
    }
    set_k1(n);
    a_.k(x86::k1).vmovups(m, x86::zmm(v));
  }
  void fmadd_bcast(int acc, int a, const x86::Mem& m, int /*tmp*/) override {
    x86::Mem mm = m;
    mm.setSize(4);
    a_.vfmadd231ps(x86::zmm(static_cast<uint32_t>(acc)), x86::zmm(static_cast<uint32_t>(a)), mm._1to16());
  }

 protected:
  x86::Vec reg(int i) const override { return x86::zmm(static_cast<uint32_t>(i)); }

 private:
  void set_k1(int n) {
    a_.mov(x86::eax, (1u << n) - 1u);
    a_.kmovw(x86::k1, x86::eax);
  }
};

}  // namespace

std::unique_ptr<VecEmitter> make_avx512_emitter(x86::Assembler& a) { return std::make_unique<Avx512Emitter>(a); }

}  // namespace nnd::jit
