// Data movement kernels' specs: index-map gathers (Permute, RepeatVector, Cropping, UpSampling,
// broadcasting, the zero-inserted input of a transposed convolution) and concatenation.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

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

// Builds the copy table of an index map (out index -> in index, -1 = zero): the longest run length
// that divides the output and keeps every run contiguous on both sides. Appends the int32 entries
// (as float bit patterns) to `table` and fills spec.len/runs/taps/zero_fill/counts.
void gather_from_map(const std::vector<int64_t>& map, int64_t in_count, GatherSpec& spec,
                     std::vector<float>& table);

// f32-transpose: per sample, `outer` matrices of rows x cols floats, each written transposed:
// out[o][j][i] = in[o][i][j]. A Permute that swaps the last two groups of a sample's axes (NCHW
// <-> NHWC) is one: no table to read per element, unlike the gather's copy of runs of 1 float.
struct TransposeSpec {
  int64_t outer = 1, rows = 1, cols = 1;
};

// How both architectures' f32-transpose walk a matrix: in blocks of at most kBlock elements along
// its shorter side, each block a loop over the longer side that copies the block's elements from
// (rows <= cols) or to (rows > cols) that many strided streams and to or from one contiguous run.
// Few streams keep the strided side in the cache's lines. Byte strides.
struct TransposePlan {
  static constexpr int64_t kBlock = 16;
  int64_t long_n = 1;               // steps along the longer side
  int64_t full_blocks = 0, rest = 0;  // blocks of kBlock, and the last block's elements (0: none)
  int64_t in_k = 4, out_k = 4;      // between a block's elements
  int64_t in_step = 4, out_step = 4;  // per step along the longer side
  int64_t matrix_bytes = 4;
};
TransposePlan transpose_plan(const TransposeSpec& s);

// The transpose a permutation of a sample's axes (perm[k] = the input axis of output axis k) is:
// perm = [0 .. a-1, m .. r-1, a .. m-1] for some a < m < r, so the swapped groups end at the last
// axis; nullopt for any other permutation, or when a group holds a single element (a copy).
std::optional<TransposeSpec> permute_as_transpose(const std::vector<int64_t>& in_shape, const std::vector<int>& perm);

// f32-concat: per outer index, copies inner[i] floats of each input in turn.
// f32-const: every sample of the output is the `count` floats at `weights_off` in the weight blob
// (the IR Constant layer; core/jit/generators/constant_fill.h).
struct ConstantFillSpec {
  int64_t count = 1, weights_off = 0;
};

struct ConcatSpec {
  int64_t outer = 1;
  std::vector<int64_t> inner;
};

}  // namespace nnd::jit
