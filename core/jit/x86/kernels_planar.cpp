// Planar convolution for SSE4.1 (see x86/kernels_planar.h). Arithmetic goes through the VecEmitter
// hooks; the two things only this layout needs, gathering strided floats into one vector
// (insertps) and the 4 x 4 transpose of the epilogue (unpck*ps, movlhps, movhlps), are SSE
// instructions emitted directly, which is why both kernels refuse any other vector width.
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_args.h"
#include "core/jit/x86/kernels_planar.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/jit/x86/counted_loop_p.h"
#include "core/jit/x86/gp_roles_p.h"
#include "core/jit/x86/kernel_epilogue_p.h"
#include "core/jit/x86/kernel_regs_p.h"
#include "core/jit/x86/product_pipeline.h"
#include "core/jit/vec_reg_pool.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::jit {

using namespace regs;
using x86::xmm;

namespace {

void require_sse(const VecEmitter& ve, const char* kernel) {
  if (ve.width() != 4) throw Error(ErrorCode::kInternal, std::string("JIT internal error: ") + kernel + " is an SSE4.1 kernel");
}

// Zeroes `count` floats at [base + disp] from vector register `zero` (all lanes 0). Longer spans
// loop with kCol as the pointer and kKw as the counter.
void zero_span(VecEmitter& ve, const x86::Gp& base, int64_t disp, int64_t count, int zero) {
  x86::Assembler& a = ve.as();
  if (count <= 0) return;
  const int64_t full = count / 4, tail = count % 4;
  if (full > 8) {
    a.lea(kCol, at(base, disp));
    counted_loop(ve, kKw, full, [&] {
      ve.store(x86::ptr(kCol), zero);
      a.add(kCol, 16);
    });
    if (tail > 0) ve.store_tail(x86::ptr(kCol), zero, static_cast<int>(tail));
    return;
  }
  for (int64_t i = 0; i < full; ++i) ve.store(at(base, disp + i * 16), zero);
  if (tail > 0) ve.store_tail(at(base, disp + full * 16), zero, static_cast<int>(tail));
}

// Gathers 4 floats `stride` bytes apart from [p + disp] into xmm(v) (movss + 3 insertps).
// insertps is 66 0F 3A 21: with a REX prefix (xmm8-15, or a base r8-r15) it has 4 prefix and escape
// bytes, more than the Atom's decoder takes without a penalty, so callers pass xmm0-7 and a legacy
// base register (rbx .. rdi); an argument needing REX is a generator bug.
void gather4(x86::Assembler& a, int v, const x86::Gp& p, int64_t disp, int64_t stride) {
  if (v >= 8 || p.id() >= 8) throw Error(ErrorCode::kInternal, "JIT internal error: a planar gather needing a REX prefix");
  a.movss(xmm(v), x86::dword_ptr(p, i32(disp)));
  for (int l = 1; l < 4; ++l) a.insertps(xmm(v), x86::dword_ptr(p, i32(disp + l * stride)), l << 4);
}

// One row of one plane: `count` floats at [kOut + dst_disp] from [kIn + src_disp], `stride` bytes
// apart in the source (contiguous when 4). Groups of 8 loop (kKh/kCol pointers, kKw counter: the
// source pointer rbx, not r10, keeps the gathers' insertps free of a REX prefix).
// Two vector registers from `pool`, for the two groups of 4 (their insertps chains overlap).
void copy_strided(VecEmitter& ve, VecRegPool& pool, int64_t dst_disp, int64_t src_disp, int64_t count,
                  int64_t stride) {
  x86::Assembler& a = ve.as();
  if (count <= 0) return;
  const VecReg g0 = pool.take("group 0"), g1 = pool.take("group 1");
  auto group = [&](int v, const x86::Gp& s, int64_t sd, const x86::Gp& d, int64_t dd) {
    if (stride == 4) ve.load(v, at(s, sd));
    else gather4(a, v, s, sd, stride);
    ve.store(at(d, dd), v);
  };
  const int64_t eights = count / 8;
  int64_t done = 0;
  if (eights > 1) {
    a.lea(kKh, at(kIn, src_disp));
    a.lea(kCol, at(kOut, dst_disp));
    counted_loop(ve, kKw, eights, [&] {
      group(g0, kKh, 0, kCol, 0);
      group(g1, kKh, 4 * stride, kCol, 16);
      add_imm(a, kKh, 8 * stride);
      a.add(kCol, 32);
    });
    done = eights * 8;
  }
  for (; done + 4 <= count; done += 4) group(done % 8 == 0 ? g0 : g1, kIn, src_disp + done * stride, kOut, dst_disp + done * 4);
  for (; done < count; ++done) {
    ve.load_scalar(g0, at(kIn, src_disp + done * stride));
    ve.store_scalar(at(kOut, dst_disp + done * 4), g0);
  }
}

// In-place 4 x 4 transpose of registers r[0..3] (channel k in r[k], pixel p in lane p) using t0,
// t1; returns the registers holding pixels 0..3 (channels in lanes). r[0] and t0 are free after.
std::array<int, 4> transpose4(x86::Assembler& a, const std::array<int, 4>& r, int t0, int t1) {
  const x86::Xmm A = xmm(r[0]), B = xmm(r[1]), C = xmm(r[2]), D = xmm(r[3]), T0 = xmm(t0), T1 = xmm(t1);
  a.movaps(T0, A);
  a.unpcklps(T0, B);  // a0 b0 a1 b1
  a.unpckhps(A, B);   // a2 b2 a3 b3
  a.movaps(T1, C);
  a.unpcklps(T1, D);  // c0 d0 c1 d1
  a.unpckhps(C, D);   // c2 d2 c3 d3
  a.movaps(B, T0);
  a.movlhps(B, T1);   // a0 b0 c0 d0
  a.movhlps(T1, T0);  // a1 b1 c1 d1
  a.movaps(D, A);
  a.movlhps(D, C);    // a2 b2 c2 d2
  a.movhlps(C, A);    // a3 b3 c3 d3
  return {r[1], t1, r[3], r[2]};
}

// One tile of one chunk: `gt` groups of 4 output pixels (the first `valid` exist) x the chunk's
// k channels, which start at channel c0. kIn: the tile's first column in the planes of the current
// output row; kOut: its first output pixel.
void planar_tile(VecEmitter& ve, const PlanarConvSpec& s, size_t chunk, int64_t c0, int gt, int64_t valid) {
  x86::Assembler& a = ve.as();
  const int k = s.chunks[chunk];
  a.mov(kW, slot(kWBase));
  a.lea(kBias, at(kW, (s.bias_off + c0 * 4) * 4));
  add_imm(a, kW, s.chunk_weight_off[chunk] * 4);
  const PlanarLayout& L = s.in;
  const int64_t pf4 = L.plane_floats() * 4, sw = L.phases;
  VecRegPool pool(ve, "f32-conv-planar");
  const VecRegs accs = pool.take_array(gt * k, "acc");
  auto acc = [&](int g, int c) { return accs[g * k + c]; };
  for (int c = 0; c < k; ++c) {
    if (s.has_bias) ve.load(acc(0, c), at(kBias, c * 16));
    else ve.zero(acc(0, c));
    for (int g = 1; g < gt; ++g) ve.mov(acc(g, c), acc(0, c));
  }
  a.mov(kWk, kW);
  a.mov(kRow, kIn);
  {
    // Two sets of input registers when the product pipeline keeps 4 temporaries beside them (the
    // registers left and scratch()): the next tap's inputs load while this tap's multiply.
    const int left = pool.free_count() + 1 - gt;
    const int sets = left - gt >= 4 ? 2 : 1;
    const VecRegs inputs = pool.take_array(gt * sets, "input");
    const VecRegs spare = pool.take_array(pool.free_count(), "product temporaries");
    ProductPipeline products(ve, spare);
    // Input channels (planes) outer, kernel rows inner; the kernel row's kw taps unrolled.
    repeat_loop(
        ve, kCi, L.c,
        [&] {
          a.mov(kCol, kRow);
          repeat_loop(
              ve, kKh, s.kh,
              [&] {
                for (int64_t kx = 0; kx < s.kw; ++kx) {
                  const int64_t phase = (kx * s.dw) % sw, col = (kx * s.dw) / sw;
                  const int set = static_cast<int>(kx % sets);
                  auto xr = [&](int g) { return inputs[set * gt + g]; };
                  for (int g = 0; g < gt; ++g) {
                    const x86::Mem m = at(kCol, phase * pf4 + (col + 4 * g) * 4);
                    const int r = xr(g);
                    products.input(r, [&ve, r, m] { ve.load(r, m); });
                  }
                  for (int c = 0; c < k; ++c) {
                    for (int g = 0; g < gt; ++g) products.product(acc(g, c), xr(g), at(kWk, (kx * k + c) * 16));
                  }
                }
                products.flush();
                add_imm(a, kWk, s.kw * k * 16);
              },
              [&] { add_imm(a, kCol, s.dh * L.plane_w * 4); });
        },
        [&] { add_imm(a, kRow, sw * pf4); });
  }
  // Epilogue per 4 x 4 block: transpose into pixel vectors, residual, activation, store.
  if (s.residual) a.mov(kPix, slot(kResDelta));
  const VecReg t0 = pool.take("transpose t0"), t1 = pool.take("transpose t1");
  for (int g = 0; g < gt; ++g) {
    const int pixels = static_cast<int>(std::min<int64_t>(4, valid - 4 * g));
    for (int j = 0; j < k / 4; ++j) {
      const std::array<int, 4> pix = transpose4(a, {acc(g, 4 * j), acc(g, 4 * j + 1), acc(g, 4 * j + 2), acc(g, 4 * j + 3)}, t0, t1);
      std::vector<int> live(pix.begin(), pix.begin() + pixels);
      auto disp = [&](int p) { return (4 * g + p) * s.cout * 4 + (c0 + 4 * j) * 4; };
      auto add_residual = [&] {
        for (int p = 0; p < pixels; ++p) ve.add_mem(live[static_cast<size_t>(p)], x86::ptr(kOut, kPix, 0, i32(disp(p))));
      };
      const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
      if (s.residual && !res_last) add_residual();
      generators::epilogue_activation(  // transpose4 leaves r[0] free
          ve, s.act, pixels, [&](int p) { return live[static_cast<size_t>(p)]; }, acc(g, 4 * j));
      if (s.residual && res_last) add_residual();
      for (int p = 0; p < pixels; ++p) ve.store(at(kOut, disp(p)), live[static_cast<size_t>(p)]);
    }
  }
}

}  // namespace

void emit_planar_pack(VecEmitter& ve, const PlanarPackSpec& s) {
  require_sse(ve, "f32-planar-pack");
  x86::Assembler& a = ve.as();
  const PlanarLayout& L = s.out;
  const int64_t sw = L.phases, pw = L.plane_w, pf4 = L.plane_floats() * 4;
  const int64_t top = std::min(s.top, L.plane_h);
  const int64_t rows_in = std::clamp<int64_t>(L.plane_h - top, 0, s.in_h);
  const int64_t bottom = L.plane_h - top - rows_in;
  GpRoles roles("f32-planar-pack");
  (void)roles.role("args", kArgs);
  (void)roles.role("row input", kIn);
  (void)roles.role("row output", kOut);
  (void)roles.role("samples left", kN);
  roles.clobbered_by("zero_span/copy_strided", kCol);
  roles.clobbered_by("zero_span/copy_strided", kKw);
  roles.clobbered_by("copy_strided", kKh);
  VecRegPool pool(ve, "f32-planar-pack");
  const VecReg zero = pool.take(1, "zero");  // copy_strided's groups take 0 and 2, as numbered by hand
  ve.zero(zero);
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  add_imm(a, kIn, s.src_offset * 4);
  a.mov(slot(kInN), kIn);
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  a.mov(slot(kOutN), kOut);
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  count_down_loop(ve, kN, Trips::samples(1), [&] {
    a.mov(kIn, slot(kInN));
    a.mov(kOut, slot(kOutN));
    for (int64_t plane = 0; plane < L.c * sw; ++plane) zero_span(ve, kOut, plane * pf4, top * pw, zero);
    add_imm(a, kOut, top * pw * 4);
    if (rows_in > 0) {
      counted_loop(ve, slot(kOhCnt), rows_in, [&] {
        for (int64_t c = 0; c < L.c; ++c) {
          for (int64_t p = 0; p < sw; ++p) {
            // Columns q of this plane: zeros while q*sw + p < left, the input while it lasts, zeros after.
            const int64_t disp = (c * sw + p) * pf4;
            const int64_t q_end =
                std::clamp<int64_t>(s.in_w + s.left - p > 0 ? ceil_div(s.in_w + s.left - p, sw) : 0, 0, pw);
            const int64_t q_begin = std::min(s.left > p ? ceil_div(s.left - p, sw) : 0, q_end);
            zero_span(ve, kOut, disp, q_begin, zero);
            copy_strided(ve, pool, disp + q_begin * 4, ((q_begin * sw + p - s.left) * L.c + c) * 4, q_end - q_begin,
                         sw * L.c * 4);
            zero_span(ve, kOut, disp + q_end * 4, pw - q_end, zero);
          }
        }
        add_imm(a, kIn, s.src_row_floats * 4);
        add_imm(a, kOut, pw * 4);
      });
    }
    for (int64_t plane = 0; plane < L.c * sw; ++plane) zero_span(ve, kOut, plane * pf4, bottom * pw, zero);
    add_slot(a, kInN, s.src_sample_floats * 4);
    add_slot(a, kOutN, L.sample_floats() * 4);
  });
}

void emit_planar_conv(VecEmitter& ve, const PlanarConvSpec& s) {
  require_sse(ve, "f32-conv-planar");
  if (s.residual && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  if (s.chunks.empty() || s.chunk_weight_off.size() != s.chunks.size()) {
    throw Error(ErrorCode::kInternal, "JIT internal error: f32-conv-planar without a blocking plan");
  }
  x86::Assembler& a = ve.as();
  GpRoles roles("f32-conv-planar");
  (void)roles.role("args", kArgs);
  (void)roles.role("tile input", kIn);
  (void)roles.role("tile output", kOut);
  (void)roles.role("samples left", kN);
  (void)roles.role("chunk weights", kW);
  (void)roles.role("chunk bias", kBias);
  (void)roles.role("running weights", kWk);
  (void)roles.role("plane row", kRow);
  (void)roles.role("kernel row input", kCol);
  (void)roles.role("input channels left", kCi);
  (void)roles.role("kernel rows left", kKh);
  (void)roles.role("residual delta", kPix);
  const int64_t out_row = (s.out_place.row_floats ? s.out_place.row_floats : s.out_w * s.cout) * 4;
  const int64_t out_sample = (s.out_place.sample_floats ? s.out_place.sample_floats : s.out_h * s.out_w * s.cout) * 4;
  if (s.residual) load_residual_delta(ve);
  a.mov(kW, x86::qword_ptr(kArgs, kArgsWeights));
  a.mov(slot(kWBase), kW);
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(slot(kInN), kIn);
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  add_imm(a, kOut, s.out_place.offset_floats * 4);
  a.mov(slot(kOutN), kOut);
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  count_down_loop(ve, kN, Trips::samples(1), [&] {
    a.mov(x86::rax, slot(kInN));
    a.mov(slot(kInRow), x86::rax);
    a.mov(x86::rax, slot(kOutN));
    a.mov(slot(kOutRow), x86::rax);
    counted_loop(ve, slot(kOhCnt), s.out_h, [&] {
      // Tiles outer, chunks inner: every chunk reads a tile's few input columns while they are in L1.
      // (Chunks outer re-reads a whole row of planes per chunk, 37 KiB for bop's stem: the same speed
      // on this machine's 48 KiB L1D, but more than the Atom's 24 KiB.)
      const int64_t tile_px = 4 * int64_t{s.groups};
      const int64_t full = s.out_w / tile_px, rem = s.out_w % tile_px;
      auto all_chunks = [&](int gt, int64_t valid) {
        int64_t c0 = 0;
        for (size_t ch = 0; ch < s.chunks.size(); ++ch) {
          planar_tile(ve, s, ch, c0, gt, valid);
          c0 += s.chunks[ch];
        }
      };
      a.mov(kIn, slot(kInRow));
      a.mov(kOut, slot(kOutRow));
      // The pointers advance after a single tile too (the remainder tile follows it).
      const auto full_tile = [&] {
        all_chunks(s.groups, tile_px);
        add_imm(a, kIn, tile_px * 4);
        add_imm(a, kOut, tile_px * s.cout * 4);
      };
      if (full > 1) counted_loop(ve, slot(kOwtCnt), full, full_tile);
      else if (full == 1) full_tile();
      if (rem > 0) all_chunks(static_cast<int>(ceil_div(rem, 4)), rem);
      add_slot(a, kInRow, s.sh * s.in.plane_w * 4);
      add_slot(a, kOutRow, out_row);
    });
    add_slot(a, kInN, s.in.sample_floats() * 4);
    add_slot(a, kOutN, out_sample);
  });
}

}  // namespace nnd::jit
