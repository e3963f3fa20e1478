// The register-level vector vocabulary the architecture-neutral generators (core/jit/generators/)
// compute with: what every architecture's vector emitter provides (x86/vec_emitter.h for SSE4.1,
// AVX2 and AVX-512; arm64/neon_emitter.h for NEON), registers named by index. Memory, loops and
// general-purpose registers are the generator targets' part (x86/generator_target_p.h,
// arm64/generator_target_p.h); this concept is only what a value in a register can go through.
//
// Semantics every emitter keeps (the generators and their error bounds rely on them):
//   add/sub/mul/div/max/min   d = a op b, float32 lanes, any aliasing of d, a and b (sqrt: d = sqrt a)
//   fmadd(acc, a, b)          acc += a * b (fused where the ISA has FMA, SSE4.1 multiplies first)
//   neg(d, a, scratch)        d = -a; an ISA without a negate instruction computes 0 - a (+0 for
//                             a = +0) and may overwrite `scratch` when d == a
//   abs(d, a)                 d = |a|, d != a
//   cvt_f2i / cvt_i2f         float32 <-> int32 lanes, rounding to nearest, ties to even
//   add_i32, shl_i32          int32 lane arithmetic on the bits of a register
//   load_const(v, f)          every lane f; load_const_u32(v, u) every lane the bits u
#pragma once

#include <concepts>
#include <cstdint>

namespace nnd::jit::generators {

template <class Ve>
concept VectorOps = requires(Ve& ve, int v, float f, uint32_t u) {
  { ve.width() } -> std::convertible_to<int>;
  ve.zero(v);
  ve.mov(v, v);
  ve.add(v, v, v);
  ve.sub(v, v, v);
  ve.mul(v, v, v);
  ve.div(v, v, v);
  ve.max(v, v, v);
  ve.min(v, v, v);
  ve.fmadd(v, v, v);
  ve.sqrt(v, v);
  ve.neg(v, v, v);
  ve.abs(v, v);
  ve.cvt_f2i(v, v);
  ve.cvt_i2f(v, v);
  ve.add_i32(v, v, v);
  ve.shl_i32(v, v, 23);
  ve.load_const(v, f);
  ve.load_const_u32(v, u);
};

}  // namespace nnd::jit::generators
