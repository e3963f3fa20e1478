// AVX2 hook class, a header only because Avx512Emitter derives from it.
#pragma once

#include "core/jit/x86/isa_factories_p.h"

namespace nnd::jit {

class AvxEmitter : public VecEmitter {
 public:
  using VecEmitter::VecEmitter;
  Isa isa() const override { return Isa::kAvx2; }

  void load(int v, const x86::Mem& m) override;
  void store(const x86::Mem& m, int v) override;
  void load_tail(int v, const x86::Mem& m, int n) override;
  void store_tail(const x86::Mem& m, int v, int n) override;
  void load_scalar(int v, const x86::Mem& m) override;
  void store_scalar(const x86::Mem& m, int v) override;
  void broadcast(int v, const x86::Mem& m) override;
  void broadcast_lane0(int v) override;
  void load_u8(int v, const x86::Mem& m) override;
  void load_u8_scalar(int v, const x86::Mem& m) override;
  void zero(int v) override;
  void mov(int d, int s) override;
  void add(int d, int a, int b) override;
  void sub(int d, int a, int b) override;
  void mul(int d, int a, int b) override;
  void div(int d, int a, int b) override;
  void max(int d, int a, int b) override;
  void min(int d, int a, int b) override;
  void fmadd(int acc, int a, int b) override;
  void sqrt(int d, int a) override;
  void and_(int d, int a, int b) override;
  void or_(int d, int a, int b) override;
  void andnot(int d, int a, int b) override;
  void add_i32(int d, int a, int b) override;
  void shl_i32(int d, int a, int bits) override;
  void cvt_f2i(int d, int a) override;
  void cvt_i2f(int d, int a) override;
  void add_mem(int d, const x86::Mem& m) override;
  void max_mem(int d, const x86::Mem& m) override;
  void leave() override;

 protected:
  // The full-width register of index i (ymm here, zmm in the AVX-512 subclass).
  virtual x86::Vec reg(int i) const { return x86::ymm(static_cast<uint32_t>(i)); }
  x86::Mem tail_mask(int n);
};

}  // namespace nnd::jit
