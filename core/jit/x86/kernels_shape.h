// ISA-neutral generators for data movement and normalisation (x86/kernels_shape.cpp): the layers
// that are index maps (Permute, RepeatVector, Cropping, UpSampling, broadcasting, the zero-inserted
// input of a transposed convolution), per-element parameter maps (PReLU, BatchNormalization on a
// non-last axis) and LayerNormalization. Written only against the VecEmitter hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

// f32-gather: per sample, out[dst_r + j] = sum_t w_{r,t} * in[src_{r,t} + j] for j in [0, len) and
// every run r of the table (taps == 1: a plain copy, no weights). With zero_fill the output is
// zeroed first (runs then need not cover it). The table lives in the weight blob as int32 entries
// per run: src_0..src_{taps-1}, dst, then taps float weights when taps > 1 (run_entries()).
struct GatherSpec {
  int64_t in_count = 1, out_count = 1;  // floats per sample
  int64_t len = 1;
  int taps = 1;
  int64_t runs = 0;
  int64_t table_off = 0;
  bool zero_fill = false;
};
inline int64_t run_entries(int taps) { return taps == 1 ? 2 : 2 * taps + 1; }
void emit_gather(VecEmitter& ve, const GatherSpec& s);

// Builds the copy table of an index map (out index -> in index, -1 = zero): the longest run length
// that divides the output and keeps every run contiguous on both sides. Appends the int32 entries
// (as float bit patterns) to `table` and fills spec.len/runs/taps/zero_fill/counts.
void gather_from_map(const std::vector<int64_t>& map, int64_t in_count, GatherSpec& spec,
                     std::vector<float>& table);

// f32-vprelu / f32-vaffine: per sample, y[i] = prelu(x[i], a[i]) or y[i] = x[i] * a[i] + b[i] with per-element
// parameter vectors a, b of `count` floats (broadcast parameters expanded at compile time).
enum class ParamOp : uint8_t { kPRelu, kAffine };
struct ParamEltSpec {
  ParamOp op = ParamOp::kAffine;
  int64_t count = 1;
  int64_t a_off = 0, b_off = 0;
};
void emit_param_elt(VecEmitter& ve, const ParamEltSpec& s);

// f32-layernorm: rows of `block` contiguous floats (groups rows per sample), y = (x - mean) /
// sqrt(var + eps) * gamma + beta, two-pass mean and variance in float32.
struct LayerNormSpec {
  int64_t groups = 1, block = 1;
  float epsilon = 1e-3f;
  int64_t gamma_off = -1, beta_off = -1;  // -1: none
};
void emit_layernorm(VecEmitter& ve, const LayerNormSpec& s);

}  // namespace nnd::jit
