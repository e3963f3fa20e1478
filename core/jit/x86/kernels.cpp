// ISA-neutral kernel generators (see x86/kernels.h). Written only against VecEmitter hooks.
#include "core/jit/generators/activation.h"
#include "core/jit/kernel_args.h"
#include "core/jit/kernel_config.h"
#include "core/jit/x86/kernels.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/jit/conv_tiling.h"
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
using asmjit::Label;

namespace {

// Fused residual epilogue: acc(r, v) += residual at the same place as the store to
// [kOb + out_disp[r] + v * W * 4]; uses kPix (free in the epilogue) and vector register tmp.
void add_residual(VecEmitter& ve, const std::vector<int64_t>& out_disp, int V, int lanes_last, int tmp) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int R = static_cast<int>(out_disp.size());
  a.mov(kPix, slot(kResDelta));
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      const x86::Mem m = x86::ptr(kOb, kPix, 0, i32(out_disp[static_cast<size_t>(r)] + v * W * 4));
      ve.load_lanes(tmp, m, v == V - 1 ? lanes_last : W);
      ve.add(r * V + v, r * V + v, tmp);
    }
  }
}

// Loops over batch, output rows and tiles of R output pixels; calls tile_row(r) with kIn/kOut at
// the tile's first input/output pixel.
struct SpatialGeometry {
  int64_t out_h, out_w;
  int64_t in_row_step, in_pix_step, out_row_step, out_pix_step, in_sample, out_sample;
  int64_t out_offset = 0;  // bytes from the output pointer to the first output pixel
};

void spatial_loops(VecEmitter& ve, const SpatialGeometry& g, int R, const std::function<void(int)>& tile_row) {
  x86::Assembler& a = ve.as();
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(slot(kInN), kIn);
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  add_imm(a, kOut, g.out_offset);
  a.mov(slot(kOutN), kOut);
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  count_down_loop(ve, kN, Trips::samples(1), [&] {
    a.mov(x86::rax, slot(kInN));
    a.mov(slot(kInRow), x86::rax);
    a.mov(x86::rax, slot(kOutN));
    a.mov(slot(kOutRow), x86::rax);
    counted_loop(ve, slot(kOhCnt), g.out_h, [&] {
      a.mov(kIn, slot(kInRow));
      a.mov(kOut, slot(kOutRow));
      const int64_t full = g.out_w / R, rem = g.out_w % R;
      if (full > 0) {
        counted_loop(ve, slot(kOwtCnt), full, [&] {
          tile_row(R);
          add_imm(a, kIn, R * g.in_pix_step);
          add_imm(a, kOut, R * g.out_pix_step);
        });
      }
      if (rem > 0) tile_row(static_cast<int>(rem));
      add_slot(a, kInRow, g.in_row_step);
      add_slot(a, kOutRow, g.out_row_step);
    });
    add_slot(a, kInN, g.in_sample);
    add_slot(a, kOutN, g.out_sample);
  });
}

// GEMM rows: batch * rows_per_sample contiguous rows, tiles of R then one remainder tile.
void rows_loops(VecEmitter& ve, int64_t rows_per_sample, int R, int64_t ps_in, int64_t ps_out,
                const std::function<void(int)>& tile_row) {
  x86::Assembler& a = ve.as();
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  if (rows_per_sample != 1) a.imul(kN, kN, i32(rows_per_sample));
  row_tiles_loop(
      ve, kN, R, Trips::samples(rows_per_sample),
      [&] {
        tile_row(R);
        add_imm(a, kIn, R * ps_in);
        add_imm(a, kOut, R * ps_out);
      },
      tile_row);
}

// ---- conv / GEMM ----------------------------------------------------------------------------

void conv_taps(VecEmitter& ve, const ConvSpec& s, const TileLayout& t, const VecRegs& accs, int V, int wreg,
               const VecRegs& xb, ProductPipeline& products);
void conv_row_taps_shared(VecEmitter& ve, const ConvSpec& s, const TileLayout& t, const VecRegs& accs, int V,
                          const VecRegs& xb, ProductPipeline& products);
void conv_row_taps_cached(VecEmitter& ve, VecRegPool& pool, const ConvSpec& s, const TileLayout& t,
                          const VecRegs& accs);

// The kernel row's weights in registers and broadcasts cached (conv_row_taps_cached): chosen by
// conv_caches_broadcasts() (core/jit/kernel_config.h).
bool cached_taps(const VecEmitter& ve, const ConvSpec& s) { return conv_caches_broadcasts(ve.traits(), s.blocking, s.kw); }

// One tile of R positions x V output-channel vectors: accumulators from the bias, the kernel rows,
// then the fused residual/activation and the stores.
void conv_tile(VecEmitter& ve, const ConvSpec& s, const TileLayout& t, int V, int lanes_last) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int R = static_cast<int>(t.in.size());
  VecRegPool pool(ve, "f32-conv");
  const VecRegs accs = pool.take_array(R * V, "acc");
  auto acc = [&](int r, int v) { return accs[r * V + v]; };
  for (int v = 0; v < V; ++v) {
    if (s.has_bias) ve.load(acc(0, v), at(kBias, v * W * 4));
    else ve.zero(acc(0, v));
    for (int r = 1; r < R; ++r) ve.mov(acc(r, v), acc(0, v));
  }
  a.mov(kWk, kW);
  a.mov(kRow, kIn);
  repeat_loop(
      ve, kKh, s.kh,
      [&] {
        // Shared broadcasts only for kernels up to 5 wide: ball-penalty, field-boundary and referee
        // (3x3, 5x5) gained 2-6%, bop's 7-wide stride-2 stem measured 2% slower (interleaving the
        // address order to separate each accumulator's products did not change that).
        if (s.blocking.stream_weights && s.kw > 1 && s.kw <= 5) {
          const VecRegs xb = pool.take_array(s.blocking.broadcast_regs, "broadcasts");
          const VecRegs spare = pool.take_array(pool.free_count(), "product temporaries");
          ProductPipeline products(ve, spare);
          conv_row_taps_shared(ve, s, t, accs, V, xb, products);
        } else if (cached_taps(ve, s)) {
          conv_row_taps_cached(ve, pool, s, t, accs);
        } else {
          // A full block's weight vectors (vmax), also when this block has fewer.
          const VecRegs w = pool.take_array(s.blocking.weight_regs(), "weights");
          const VecRegs xb = pool.take_array(s.blocking.broadcast_regs, "broadcasts");
          const VecRegs spare = pool.take_array(pool.free_count(), "product temporaries");
          ProductPipeline products(ve, spare);
          conv_taps(ve, s, t, accs, V, accs.end(), xb, products);
        }
      },
      [&] { add_imm(a, kRow, s.dh * s.in_w * s.in_c * 4); });
  // The epilogue's temporary is the register after a full block's weights (where the first
  // broadcast register was in the loop), not the lowest free one.
  const VecReg tmp = pool.take(accs.end() + s.blocking.weight_regs(), "epilogue temporary");
  const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
  if (s.residual && !res_last) add_residual(ve, t.out, V, lanes_last, tmp);
  generators::epilogue_activation(ve, s.act, accs.first(), accs.size(), tmp);
  if (s.residual && res_last) add_residual(ve, t.out, V, lanes_last, tmp);
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      ve.store_lanes(at(kOb, t.out[static_cast<size_t>(r)] + v * W * 4), acc(r, v), v == V - 1 ? lanes_last : W);
    }
  }
}

// One kernel row (kh fixed, kRow at its first input pixel) of a tile: the kw loop, and inside it
// the channel loop unrolled by 4; per channel the V weight vectors (registers, or streamed) and
// one broadcast per tile position. Streamed weights go through `products` (x86/product_pipeline.h),
// flushed per unrolled channel block, their broadcasts rotating through `xb`; register weights use
// xb[0]. Leaves kWk at the next kernel row's weights.
void conv_taps(VecEmitter& ve, const ConvSpec& s, const TileLayout& t, const VecRegs& accs, int V, int wreg,
               const VecRegs& xb, ProductPipeline& products) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int R = static_cast<int>(t.in.size());
  auto acc = [&](int r, int v) { return accs[r * V + v]; };
  a.mov(kCol, kRow);
  repeat_loop(
      ve, kKw, s.kw,
      [&] {
        a.mov(kPix, kCol);
        const int U = 4;
        const int64_t full = s.cin_g / U, rem = s.cin_g % U, wstep = int64_t{V} * W * 4;
        const bool stream = s.blocking.stream_weights;
        RegRotation broadcasts(xb);
        auto body = [&](int u) {
          if (!stream) {
            for (int v = 0; v < V; ++v) ve.load(wreg + v, at(kWk, u * wstep + v * W * 4));
          }
          for (int r = 0; r < R; ++r) {
            const x86::Mem x = at(kPix, u * 4 + t.in[static_cast<size_t>(r)]);
            if (stream) {
              const int b = broadcasts.next();
              products.broadcast(b, x);
              for (int v = 0; v < V; ++v) products.product(acc(r, v), b, at(kWk, u * wstep + v * W * 4));
              continue;
            }
            if (V == 1) {
              ve.fmadd_bcast(acc(r, 0), wreg, x, xb[0]);  // one input, one FMA: broadcast in the FMA where the ISA can
              continue;
            }
            ve.broadcast(xb[0], x);
            for (int v = 0; v < V; ++v) ve.fmadd(acc(r, v), xb[0], wreg + v);
          }
        };
        if (full > 0) {
          counted_loop(ve, kCi, full, [&] {
            for (int u = 0; u < U; ++u) body(u);
            products.flush();
            a.add(kPix, U * 4);
            add_imm(a, kWk, U * wstep);
          });
        }
        for (int u = 0; u < rem; ++u) body(u);
        products.flush();
        add_imm(a, kWk, rem * wstep);
      },
      [&] { add_imm(a, kCol, s.dw * s.in_c * 4); });
}

// The channel loop of a kernel row whose kw taps are unrolled in `per_channel` (one input channel,
// kPix at its first pixel, kWk at its tap-0 weights): runs it for every channel, then leaves kWk
// at the next kernel row's weights (tap_step = cin_g * wstep bytes per tap).
void unrolled_taps_channel_loop(VecEmitter& ve, const ConvSpec& s, int64_t wstep,
                                const std::function<void()>& per_channel) {
  x86::Assembler& a = ve.as();
  a.mov(kPix, kRow);
  repeat_loop(ve, kCi, s.cin_g, per_channel, [&] {
    a.add(kPix, 4);
    add_imm(a, kWk, wstep);
  });
  if (s.cin_g == 1) add_imm(a, kWk, wstep);  // the loop's weight step, for the one channel
  add_imm(a, kWk, (s.kw - 1) * s.cin_g * wstep);
}

// One kernel row with streamed weights and the kw taps unrolled: neighbouring tile positions read
// overlapping input windows (position r, tap kx reads column sw*r + dw*kx), so each distinct input
// address is broadcast once and feeds every (position, tap) pair that reads it. Referee's 5x5
// stride-2 stem with 7 positions: 17 broadcasts per channel instead of 35. Same register use as
// conv_taps; leaves kWk at the next kernel row's weights.
void conv_row_taps_shared(VecEmitter& ve, const ConvSpec& s, const TileLayout& t, const VecRegs& accs, int V,
                          const VecRegs& xb, ProductPipeline& products) {
  const int W = ve.width();
  const int R = static_cast<int>(t.in.size());
  const int64_t wstep = int64_t{V} * W * 4, tap_step = s.cin_g * wstep;
  // Input displacement -> the (position, kx) pairs reading it, in address order.
  std::map<int64_t, std::vector<std::pair<int, int>>> readers;
  for (int r = 0; r < R; ++r) {
    for (int kx = 0; kx < s.kw; ++kx) readers[t.in[static_cast<size_t>(r)] + kx * s.dw * s.in_c * 4].emplace_back(r, kx);
  }
  unrolled_taps_channel_loop(ve, s, wstep, [&] {
    RegRotation broadcasts(xb);
    for (const auto& [disp, pairs] : readers) {
      const int b = broadcasts.next();
      products.broadcast(b, at(kPix, disp));
      for (const auto& [r, kx] : pairs) {
        for (int v = 0; v < V; ++v) products.product(accs[r * V + v], b, at(kWk, kx * tap_step + v * W * 4));
      }
    }
    products.flush();
  });
}

void conv_blocks(VecEmitter& ve, const ConvSpec& s, const TileLayout& t) {
  x86::Assembler& a = ve.as();
  const int W = ve.width(), vmax = s.blocking.vmax;
  const ChannelBlocks cb = channel_blocks(s.cout_g, vmax, W);
  const int64_t cw = cb.block_channels, nb = cb.count;
  const int vl = cb.last_vectors, lanes_last = cb.last_lanes;
  a.mov(kOb, kOut);
  a.mov(kW, slot(kWBase));
  a.mov(kBias, slot(kBBase));
  if (nb > 1) {
    counted_loop(ve, slot(kOcbCnt), nb - 1, [&] {
      conv_tile(ve, s, t, vmax, W);
      add_imm(a, kOb, cw * 4);
      add_imm(a, kW, s.kh * s.kw * s.cin_g * cw * 4);
      add_imm(a, kBias, cw * 4);
    });
  }
  conv_tile(ve, s, t, vl, lanes_last);
}

// Spatial tiles may hold more positions than ConvBlocking::rows (which also sizes GEMM row tiles):
// every vector register not needed for the weights (none when streamed), the broadcast inputs and,
// with streamed weights, the product pipeline's temporaries (ConvBlocking::fixed_regs(); at 1
// temporary field-boundary's 7x2v tiles priced 282 cycles per block in the Silvermont model
// against a bound of 114), up to 16.
ConvTileProblem tile_problem(const VecEmitter& ve, const ConvSpec& s) {
  int max_tile = std::clamp((ve.usable_regs() - s.blocking.fixed_regs()) / s.blocking.vmax, 1, 16);
  // Cached taps keep kw weights in registers and want about one broadcast register per position.
  if (cached_taps(ve, s)) max_tile = std::clamp((ve.usable_regs() - static_cast<int>(s.kw) - 1) / 2, 1, 16);
  return conv_tile_problem(s, max_tile);
}

// One kernel row for cached_taps(): per input channel the kw weight vectors are loaded into
// registers, then the (position, tap) products run tap-major with the taps of one phase
// (dw*kx mod sw) together, so tap kx + sw at position r reads what tap kx read at position r + 1.
// Broadcasts live in the remaining registers (least recently used replaced), so each input
// address is usually loaded once per channel instead of once per product, and every accumulator
// gets one product per tile-width of FMAs (no latency chain). bop's 7x7/2 stem with 11 positions:
// 27 broadcasts and 7 weight loads per 77 FMAs, where conv_taps loads a broadcast per FMA.
void conv_row_taps_cached(VecEmitter& ve, VecRegPool& pool, const ConvSpec& s, const TileLayout& t,
                          const VecRegs& accs) {
  const int R = static_cast<int>(t.in.size());
  const VecRegs weights = pool.take_array(static_cast<int>(s.kw), "kernel row weights");
  const int ncache = pool.free_count();
  if (ncache < 1) throw Error(ErrorCode::kInternal, "JIT internal error: no register left for cached broadcasts");
  const VecRegs cache = pool.take_array(ncache, "broadcast cache");
  const int64_t wstep = int64_t{ve.width()} * 4, tap_step = s.cin_g * wstep;
  std::vector<int> order;  // taps, phase-major
  for (int64_t ph = 0; ph < s.sw; ++ph) {
    for (int kx = 0; kx < s.kw; ++kx) {
      if ((kx * s.dw) % s.sw == ph) order.push_back(kx);
    }
  }
  unrolled_taps_channel_loop(ve, s, wstep, [&] {
    for (int kx = 0; kx < s.kw; ++kx) ve.load(weights[kx], at(kWk, kx * tap_step));
    std::vector<int64_t> held(static_cast<size_t>(ncache), 0), used(static_cast<size_t>(ncache), -1);
    int64_t clock = 0;
    for (int kx : order) {
      for (int r = 0; r < R; ++r) {
        const int64_t disp = t.in[static_cast<size_t>(r)] + kx * s.dw * s.in_c * 4;
        int c = -1;
        for (int i = 0; i < ncache; ++i) {
          if (used[static_cast<size_t>(i)] >= 0 && held[static_cast<size_t>(i)] == disp) c = i;
        }
        if (c < 0) {
          c = 0;
          for (int i = 1; i < ncache; ++i) {
            if (used[static_cast<size_t>(i)] < used[static_cast<size_t>(c)]) c = i;
          }
          held[static_cast<size_t>(c)] = disp;
          ve.broadcast(cache[c], at(kPix, disp));
        }
        used[static_cast<size_t>(c)] = clock++;
        ve.fmadd(accs[r], weights[kx], cache[c]);
      }
    }
  });
}

// One loop nest of the spatial conv over the samples that start at slots kInN/kOutN: output rows
// in steps of t.rows, each with tiles of t.cols columns and one narrower tile for the rest.
void conv_nest(VecEmitter& ve, const ConvSpec& s, const ConvTileProblem& p, const ConvTile& t) {
  x86::Assembler& a = ve.as();
  a.mov(x86::rax, slot(kInN));
  a.mov(slot(kInRow), x86::rax);
  a.mov(x86::rax, slot(kOutN));
  a.mov(slot(kOutRow), x86::rax);
  counted_loop(ve, slot(kOhCnt), p.out_h / t.rows, [&] {
    a.mov(kIn, slot(kInRow));
    a.mov(kOut, slot(kOutRow));
    const int64_t full = p.out_w / t.cols, rem = p.out_w % t.cols;
    const TileLayout tile = tile_layout(t, p);
    if (full >= 1) {
      repeat_loop(ve, slot(kOwtCnt), full, [&] { conv_blocks(ve, s, tile); }, [&] {
        add_imm(a, kIn, t.cols * p.in_col);
        add_imm(a, kOut, t.cols * p.out_col);
      });
    }
    if (rem > 0) {
      if (full == 1) {  // repeat_loop does not advance after a single tile
        add_imm(a, kIn, t.cols * p.in_col);
        add_imm(a, kOut, t.cols * p.out_col);
      }
      conv_blocks(ve, s, tile_layout(ConvTile{t.samples, t.rows, static_cast<int>(rem)}, p));
    }
    add_slot(a, kInRow, t.rows * p.in_row);
    add_slot(a, kOutRow, t.rows * p.out_row);
  });
}

// Spatial conv of one group: groups of plan.batched.samples samples through the batched nest
// while enough remain, then one sample at a time (a batch-1 call runs only that nest). g < 0: the
// group given at run time by slots kGrpIn / kGrpOut (emit_conv's group loop).
void conv_spatial(VecEmitter& ve, const ConvSpec& s, int64_t g) {
  x86::Assembler& a = ve.as();
  const ConvTileProblem p = tile_problem(ve, s);
  const ConvTilePlan plan = plan_conv_tiles(p);
  a.mov(kIn, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(kIn, x86::qword_ptr(kIn, 0));
  a.mov(kOut, x86::qword_ptr(kArgs, kArgsOut));
  if (g >= 0) {
    add_imm(a, kIn, g * s.cin_g * 4);
    add_imm(a, kOut, (s.out_place.offset_floats + g * s.cout_g) * 4);
  } else {
    a.add(kIn, slot(kGrpIn));
    a.add(kOut, slot(kGrpOut));
    add_imm(a, kOut, s.out_place.offset_floats * 4);
  }
  a.mov(slot(kInN), kIn);
  a.mov(slot(kOutN), kOut);
  a.mov(kN, x86::qword_ptr(kArgs, kArgsBatch));
  const int S = plan.batched.samples;
  sample_groups_loop(
      ve, kN, S,
      [&] {
        conv_nest(ve, s, p, plan.batched);
        add_slot(a, kInN, S * p.in_sample);
        add_slot(a, kOutN, S * p.out_sample);
      },
      [&] {
        conv_nest(ve, s, p, plan.single);
        add_slot(a, kInN, p.in_sample);
        add_slot(a, kOutN, p.out_sample);
      });
}

void set_weight_slots(VecEmitter& ve, int64_t w_off, int64_t b_off) {
  x86::Assembler& a = ve.as();
  a.mov(kW, x86::qword_ptr(kArgs, kArgsWeights));
  a.lea(kBias, at(kW, b_off * 4));
  a.mov(slot(kBBase), kBias);
  add_imm(a, kW, w_off * 4);
  a.mov(slot(kWBase), kW);
}

// The general-purpose registers of the spatial loops, the block loops and the tile code of the
// convolution (window = false) and window (depthwise, pooling) kernels: every register but rax and
// rsp. kPix points into the input channels inside a tile and holds the residual delta in its
// epilogue (add_residual), both in the same role: the tile's scratch pointer.
void declare_spatial_roles(GpRoles& g, bool window) {
  (void)g.role("args", kArgs);
  (void)g.role("tile input", kIn);
  (void)g.role("tile output", kOut);
  (void)g.role("samples / GEMM rows left", kN);
  (void)g.role("block weights", kW);
  (void)g.role("block bias", kBias);
  (void)g.role("block output", kOb);
  (void)g.role(window ? "block input" : "input channels left", kCi);
  (void)g.role("running weights", kWk);
  (void)g.role("kernel row input", kRow);
  (void)g.role("kernel column input", kCol);
  (void)g.role("kernel rows left", kKh);
  (void)g.role("kernel columns left", kKw);
  (void)g.role("channel input / residual delta", kPix);
}

// ---- window ops (depthwise conv, pooling) --------------------------------------------------

void window_tile(VecEmitter& ve, const WindowSpec& s, int R, int V, int lanes_last) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  VecRegPool pool(ve, "f32-window");
  const VecRegs accs = pool.take_array(R * V, "acc");
  const VecRegs weights = pool.take_array(s.op == WindowOp::kDepthwise ? V : 0, "weights");
  const VecReg xr = pool.take("input");
  const int wreg = weights.first();
  auto acc = [&](int r, int v) { return accs[r * V + v]; };
  const int64_t ps_in = s.sw * s.c * 4, ps_out = s.c * 4;
  for (int v = 0; v < V; ++v) {
    if (s.op == WindowOp::kMax) ve.load_const(acc(0, v), -std::numeric_limits<float>::infinity());
    else if (s.op == WindowOp::kDepthwise && s.has_bias) ve.load(acc(0, v), at(kBias, v * W * 4));
    else ve.zero(acc(0, v));
    for (int r = 1; r < R; ++r) ve.mov(acc(r, v), acc(0, v));
  }
  a.mov(kWk, kW);
  a.mov(kRow, kCi);
  // SSE's depthwise products, whose input is the product's own load: pipelined with the input
  // register (free inside a tap but for a tail vector, which flushes first), the registers
  // depthwise_blocking() left free and scratch().
  // SSE's pools likewise load each input two operations before its max or add, rotating through
  // the input register and the two pool_blocking() left free: Silvermont's in-order FP queue
  // otherwise holds every maxps behind its own load.
  const bool loads_ahead = s.op != WindowOp::kDepthwise && ve.fmadd_needs_copy();
  std::vector<int> temps{xr};
  const VecRegs spare = pool.take_array(ve.fmadd_needs_copy() ? pool.free_count() : 0, "pipeline temporaries");
  for (int i = 0; i < spare.size(); ++i) temps.push_back(spare[i]);
  RegRotation inputs({temps.begin(), temps.begin() + std::min<size_t>(temps.size(), loads_ahead ? 3 : 1)});
  temps.push_back(ve.scratch());
  ProductPipeline products(ve, std::move(temps));
  // Pool operations whose input is loaded and not yet applied, oldest first.
  std::deque<std::pair<int, int>> loaded;  // (accumulator, input register)
  const auto apply = [&](int acc_reg, int in_reg) {
    if (s.op == WindowOp::kMax) ve.max(acc_reg, acc_reg, in_reg);
    else ve.add(acc_reg, acc_reg, in_reg);
  };
  const auto apply_loaded = [&] {
    for (const auto& [acc_reg, in_reg] : loaded) apply(acc_reg, in_reg);
    loaded.clear();
  };
  const auto tap = [&] {
    if (s.op == WindowOp::kDepthwise) {
      for (int v = 0; v < V; ++v) ve.load(wreg + v, at(kWk, v * W * 4));
      add_imm(a, kWk, int64_t{V} * W * 4);
    }
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < V; ++v) {
        const x86::Mem x = at(kCol, r * ps_in + v * W * 4);
        const int lanes = v == V - 1 ? lanes_last : W;
        if (s.op == WindowOp::kDepthwise && lanes == W && ve.fmadd_needs_copy()) {
          // The input is read once per product anyway: loading it into the product's temporary
          // saves SSE the register copy (bop's depthwise layers: 258 -> 175 us). With FMA the
          // separate load measured as fast or faster, so those ISAs keep it.
          products.product(acc(r, v), wreg + v, x);
          continue;
        }
        if (loads_ahead && lanes == W) {
          const int in_reg = inputs.next();
          ve.load(in_reg, x);
          loaded.emplace_back(acc(r, v), in_reg);
          if (loaded.size() == inputs.size()) {
            apply(loaded.front().first, loaded.front().second);
            loaded.pop_front();
          }
          continue;
        }
        products.flush();
        apply_loaded();
        ve.load_lanes(xr, x, lanes);
        if (s.op == WindowOp::kDepthwise) ve.fmadd(acc(r, v), xr, wreg + v);
        else apply(acc(r, v), xr);
      }
    }
    products.flush();
    apply_loaded();
  };
  repeat_loop(
      ve, kKh, s.kh,
      [&] {
        a.mov(kCol, kRow);
        repeat_loop(ve, kKw, s.kw, tap, [&] { add_imm(a, kCol, s.dw * s.c * 4); });
      },
      [&] { add_imm(a, kRow, s.dh * s.in_w * s.c * 4); });
  if (s.op == WindowOp::kSum && s.scale != 1.0f) {
    ve.load_const(xr, s.scale);
    for (int i = 0; i < R * V; ++i) ve.mul(accs[i], accs[i], xr);
  }
  const bool res_last = s.residual_at == ResidualAt::kAfterActivation;
  if (s.residual && !res_last) add_residual(ve, strided_layout(R, ps_in, ps_out).out, V, lanes_last, xr);
  generators::epilogue_activation(ve, s.act, accs.first(), accs.size(), xr);
  if (s.residual && res_last) add_residual(ve, strided_layout(R, ps_in, ps_out).out, V, lanes_last, xr);
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      ve.store_lanes(at(kOb, r * ps_out + v * W * 4), acc(r, v), v == V - 1 ? lanes_last : W);
    }
  }
}

void window_blocks(VecEmitter& ve, const WindowSpec& s, int R) {
  x86::Assembler& a = ve.as();
  const int W = ve.width(), vmax = s.vmax;
  const ChannelBlocks cb = channel_blocks(s.c, vmax, W);
  const int64_t cw = cb.block_channels, nb = cb.count;
  const int vl = cb.last_vectors, lanes_last = cb.last_lanes;
  a.mov(kOb, kOut);
  a.mov(kCi, kIn);
  a.mov(kW, slot(kWBase));
  a.mov(kBias, slot(kBBase));
  if (nb > 1) {
    counted_loop(ve, slot(kOcbCnt), nb - 1, [&] {
      window_tile(ve, s, R, vmax, W);
      add_imm(a, kOb, cw * 4);
      add_imm(a, kCi, cw * 4);
      add_imm(a, kW, s.kh * s.kw * cw * 4);
      add_imm(a, kBias, cw * 4);
    });
  }
  window_tile(ve, s, R, vl, lanes_last);
}

// ---- copies ---------------------------------------------------------------------------------

// Stores register v to [p] `count` times... i.e. fills count floats, advancing p. Uses kKh.
void emit_fill(VecEmitter& ve, const x86::Gp& p, int64_t count, int v) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int64_t full = count / W, tail = count % W;
  if (full > 4) {
    counted_loop(ve, kKh, full, [&] {
      ve.store(x86::ptr(p), v);
      a.add(p, W * 4);
    });
  } else {
    for (int64_t i = 0; i < full; ++i) ve.store(at(p, i * W * 4), v);
    add_imm(a, p, full * W * 4);
  }
  if (tail > 0) {
    ve.store_tail(x86::ptr(p), v, static_cast<int>(tail));
    add_imm(a, p, tail * 4);
  }
}

// Copies count floats from [src] to [dst], advancing both. Uses vector register v and kKh.
void emit_copy(VecEmitter& ve, const x86::Gp& dst, const x86::Gp& src, int64_t count, int v) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int64_t full = count / W, tail = count % W;
  if (full > 4) {
    counted_loop(ve, kKh, full, [&] {
      ve.load(v, x86::ptr(src));
      ve.store(x86::ptr(dst), v);
      a.add(src, W * 4);
      a.add(dst, W * 4);
    });
  } else {
    for (int64_t i = 0; i < full; ++i) {
      ve.load(v, at(src, i * W * 4));
      ve.store(at(dst, i * W * 4), v);
    }
    add_imm(a, src, full * W * 4);
    add_imm(a, dst, full * W * 4);
  }
  if (tail > 0) {
    ve.load_tail(v, x86::ptr(src), static_cast<int>(tail));
    ve.store_tail(x86::ptr(dst), v, static_cast<int>(tail));
    add_imm(a, src, tail * 4);
    add_imm(a, dst, tail * 4);
  }
}

}  // namespace

// ---- public generators ----------------------------------------------------------------------

void emit_conv(VecEmitter& ve, const ConvSpec& s) {
  GpRoles roles(s.rows_mode ? "f32-gemm" : "f32-conv");
  declare_spatial_roles(roles, false);
  const int R = s.blocking.rows;
  // The residual is read at the output's displacements, so both must share one layout.
  if (s.residual && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  if (s.residual) load_residual_delta(ve);
  // Spatial convs with several evenly packed groups (Winograd's 16 transform points, grouped
  // Conv2D) run one copy of the group's code in a loop: unrolled, 16 groups made kernels of 30-60
  // KiB, more than an L1 instruction cache.
  if (!s.rows_mode && s.groups >= 4 && uniform_groups(s)) {
    x86::Assembler& a = ve.as();
    const int64_t stride = s.group_weight_off[1] - s.group_weight_off[0];
    a.mov(slot(kGrpCnt), i32(s.groups));
    a.mov(slot(kGrpIn), 0);
    a.mov(slot(kGrpOut), 0);
    a.mov(slot(kGrpW), 0);
    count_down_loop(ve, slot(kGrpCnt), Trips::fixed(s.groups), [&] {
      set_weight_slots(ve, s.group_weight_off[0], s.group_bias_off[0]);
      a.mov(x86::rax, slot(kGrpW));
      a.add(slot(kWBase), x86::rax);
      a.add(slot(kBBase), x86::rax);
      conv_spatial(ve, s, -1);
      a.add(slot(kGrpIn), i32(s.cin_g * 4));
      a.add(slot(kGrpOut), i32(s.cout_g * 4));
      a.add(slot(kGrpW), i32(stride * 4));
    });
    return;
  }
  for (int64_t g = 0; g < s.groups; ++g) {
    set_weight_slots(ve, s.group_weight_off[static_cast<size_t>(g)], s.group_bias_off[static_cast<size_t>(g)]);
    if (s.rows_mode) {
      if (!s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a GEMM-mode conv cannot write a bordered output");
      const int64_t ps_in = s.in_c * 4, ps_out = s.out_c * 4;
      rows_loops(ve, s.out_h * s.out_w, R, ps_in, ps_out,
                 [&](int r) { conv_blocks(ve, s, strided_layout(r, ps_in, ps_out)); });
    } else {
      conv_spatial(ve, s, g);
    }
  }
}

void emit_window(VecEmitter& ve, const WindowSpec& s) {
  GpRoles roles("f32-window");
  declare_spatial_roles(roles, true);
  if (s.residual && !s.out_place.dense()) throw Error(ErrorCode::kInternal, "JIT internal error: a fused residual with a bordered output");
  if (s.residual) load_residual_delta(ve);
  set_weight_slots(ve, s.weight_off, s.bias_off);
  const OutPlacement& op = s.out_place;
  SpatialGeometry geo{s.out_h, s.out_w,
                      s.sh * s.in_w * s.c * 4, s.sw * s.c * 4,
                      (op.row_floats ? op.row_floats : s.out_w * s.c) * 4, s.c * 4,
                      s.in_h * s.in_w * s.c * 4, (op.sample_floats ? op.sample_floats : s.out_h * s.out_w * s.c) * 4,
                      op.offset_floats * 4};
  spatial_loops(ve, geo, s.rows, [&](int r) { window_blocks(ve, s, r); });
}

void emit_pad(VecEmitter& ve, const PadSpec& s) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int64_t cd = s.c * s.dm, wp = s.w + s.left + s.right;
  GpRoles g("f32-pad");
  const x86::Gp args = g.role("args", kArgs), in = g.role("input", kIn), out = g.role("output", kOut);
  const x86::Gp samples = g.role("samples left", kN), cols = g.role("columns left (depth multiplier)", kCi);
  g.clobbered_by("emit_fill/emit_copy", kKh);
  VecRegPool pool(ve, "f32-pad");
  const VecReg fill = pool.take("fill value"), x = pool.take("input");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(samples, x86::qword_ptr(args, kArgsBatch));
  if (s.value == 0.0f) ve.zero(fill);
  else ve.load_const(fill, s.value);
  count_down_loop(ve, samples, Trips::samples(1), [&] {
    emit_fill(ve, out, s.top * wp * cd, fill);
    counted_loop(ve, slot(kOhCnt), s.h, [&] {
      emit_fill(ve, out, s.left * cd, fill);
      if (s.border_only) {
        add_imm(a, out, s.w * s.c * 4);  // the producer's interior row
      } else if (s.dm == 1) {
        emit_copy(ve, out, in, s.w * s.c, x);
      } else {
        counted_loop(ve, cols, s.w, [&] {
          for (int64_t c = 0; c < s.c; ++c) {
            ve.broadcast(x, at(in, c * 4));
            for (int64_t j = 0; j < s.dm; j += W) {
              ve.store_lanes(at(out, (c * s.dm + j) * 4), x, static_cast<int>(std::min<int64_t>(W, s.dm - j)));
            }
          }
          add_imm(a, in, s.c * 4);
          add_imm(a, out, cd * 4);
        });
      }
      emit_fill(ve, out, s.right * cd, fill);
    });
    emit_fill(ve, out, s.bottom * wp * cd, fill);
  });
}

void emit_unary(VecEmitter& ve, const UnarySpec& s) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  const int64_t esize = s.u8 ? 1 : 4;
  GpRoles g(s.channels > 0 ? "f32-affine" : "f32-unary");
  const x86::Gp args = g.role("args", kArgs), in = g.role("input", kIn), out = g.role("output", kOut);
  const x86::Gp left = g.role("positions / elements left", kN);
  VecRegPool pool(ve, s.channels > 0 ? "f32-affine" : "f32-unary");
  const VecReg x = pool.take("x"), t = pool.take("t"), u = pool.take("u");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(left, x86::qword_ptr(args, kArgsBatch));
  if (s.channels > 0) {
    // Per-channel affine then activation; one position (C floats) per iteration.
    const x86::Gp scale = g.role("scale", kW), shift = g.role("shift", kBias);
    const int64_t C = s.channels, positions = s.count / C;
    a.mov(scale, x86::qword_ptr(args, kArgsWeights));
    a.lea(shift, at(scale, s.shift_off * 4));
    add_imm(a, scale, s.scale_off * 4);
    a.imul(left, left, i32(positions));
    count_down_loop(ve, left, Trips::samples(positions), [&] {
      for (int64_t j = 0; j < C; j += W) {
        const int lanes = static_cast<int>(std::min<int64_t>(W, C - j));
        ve.load_lanes(x, at(in, j * 4), lanes);
        ve.load(t, at(scale, j * 4));
        ve.mul(x, x, t);
        ve.load(t, at(shift, j * 4));
        ve.add(x, x, t);
        generators::unary_activation(ve, s, x, t, u);
        ve.store_lanes(at(out, j * 4), x, lanes);
      }
      add_imm(a, in, C * 4);
      add_imm(a, out, C * 4);
    });
    return;
  }
  if (s.count != 1) a.imul(left, left, i32(s.count));
  vector_then_scalar_loop(
      ve, left, W, Trips::samples(s.count),
      [&] {
        if (s.u8) ve.load_u8(x, x86::ptr(in));
        else ve.load(x, x86::ptr(in));
        generators::unary_activation(ve, s, x, t, u);
        ve.store(x86::ptr(out), x);
        a.add(in, i32(W * esize));
        a.add(out, W * 4);
      },
      [&] {
        if (s.u8) ve.load_u8_scalar(x, x86::ptr(in));  // eax: the hooks' scratch, no role
        else ve.load_scalar(x, x86::ptr(in));
        generators::unary_activation(ve, s, x, t, u);
        ve.store_scalar(x86::ptr(out), x);
        a.add(in, i32(esize));
        a.add(out, 4);
      });
}

// A call into C++ under the System V ABI, the kernel's last action: the argument registers
// (rdi, rsi, rdx, rcx) and rax are loaded here whatever roles they had, so no roles are declared.
void emit_helper_call(VecEmitter& ve, int helper_index, int64_t count, int64_t params_off) {
  x86::Assembler& a = ve.as();
  ve.leave();  // no dirty upper vector state across the call
  a.mov(x86::rax, x86::qword_ptr(kArgs, kArgsHelpers));
  a.mov(x86::rax, x86::qword_ptr(x86::rax, helper_index * 8));
  a.mov(x86::rcx, x86::qword_ptr(kArgs, kArgsWeights));
  add_imm(a, x86::rcx, params_off * 4);
  a.mov(x86::rdx, x86::qword_ptr(kArgs, kArgsBatch));
  a.imul(x86::rdx, x86::rdx, i32(count));
  a.mov(x86::rsi, x86::qword_ptr(kArgs, kArgsIn));
  a.mov(x86::rsi, x86::qword_ptr(x86::rsi, 0));
  a.mov(x86::rdi, x86::qword_ptr(kArgs, kArgsOut));
  a.call(x86::rax);
}

void emit_concat(VecEmitter& ve, int64_t outer, const std::vector<int64_t>& inner) {
  x86::Assembler& a = ve.as();
  GpRoles g("f32-concat");
  const x86::Gp args = g.role("args", kArgs), table = g.role("input table", kW), out = g.role("output", kOut);
  const x86::Gp count = g.role("outer count", kN), i_outer = g.role("outer index", kCi);
  const x86::Gp src = g.role("input", kRow), off = g.role("input offset", kCol);
  g.clobbered_by("emit_copy", kKh);
  VecRegPool pool(ve, "f32-concat");
  const VecReg x = pool.take("x");
  a.mov(table, x86::qword_ptr(args, kArgsIn));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(count, x86::qword_ptr(args, kArgsBatch));
  a.imul(count, count, i32(outer));
  a.xor_(i_outer, i_outer);
  // Counts up: the index scales each input's offset.
  Label l = a.newLabel();
  a.bind(l);
  RecordedRegion region(ve, Trips::samples(outer));
  for (size_t i = 0; i < inner.size(); ++i) {
    a.mov(src, x86::qword_ptr(table, static_cast<int32_t>(i * 8)));
    a.imul(off, i_outer, i32(inner[i] * 4));
    a.add(src, off);
    emit_copy(ve, out, src, inner[i], x);
  }
  a.inc(i_outer);
  a.cmp(i_outer, count);
  a.jb(l);
}

void emit_position_scale(VecEmitter& ve, int64_t positions, int64_t channels, int64_t map_off) {
  x86::Assembler& a = ve.as();
  const int W = ve.width();
  GpRoles g("f32-position-scale");
  const x86::Gp args = g.role("args", kArgs), in = g.role("input", kIn), out = g.role("output", kOut);
  const x86::Gp map = g.role("scale map", kW), samples = g.role("samples left", kN);
  const x86::Gp scale = g.role("position's scale", kWk), left = g.role("positions left", kCi);
  VecRegPool pool(ve, "f32-position-scale");
  const VecReg x = pool.take("x"), k = pool.take("scale");
  a.mov(in, x86::qword_ptr(args, kArgsIn));
  a.mov(in, x86::qword_ptr(in, 0));
  a.mov(out, x86::qword_ptr(args, kArgsOut));
  a.mov(map, x86::qword_ptr(args, kArgsWeights));
  add_imm(a, map, map_off * 4);
  a.mov(samples, x86::qword_ptr(args, kArgsBatch));
  count_down_loop(ve, samples, Trips::samples(1), [&] {
    a.mov(scale, map);
    counted_loop(ve, left, positions, [&] {
      ve.broadcast(k, x86::ptr(scale));
      for (int64_t j = 0; j < channels; j += W) {
        const int lanes = static_cast<int>(std::min<int64_t>(W, channels - j));
        ve.load_lanes(x, at(in, j * 4), lanes);
        ve.mul(x, x, k);
        ve.store_lanes(at(out, j * 4), x, lanes);
      }
      add_imm(a, in, channels * 4);
      add_imm(a, out, channels * 4);
      a.add(scale, 4);
    });
  });
}

}  // namespace nnd::jit
