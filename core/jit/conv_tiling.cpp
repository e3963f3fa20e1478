// Tile choice of the direct-convolution micro-kernel (see conv_tiling.h).
#include "core/jit/conv_tiling.h"

#include <algorithm>

namespace nnd::jit {

namespace {

// Largest displacement a tile may use: far from INT32_MAX so the kernel's small extra offsets
// (channel unroll, vector index) can never overflow the disp32 (regs::at() checks anyway).
constexpr int64_t kMaxDisp = int64_t{1} << 30;

// Instructions of one tile of t positions and one output-channel block: per channel-loop
// iteration t*V FMAs, t input broadcasts and V weight loads; then bias/zero init, the fused
// activation and the stores (about 2*t*V), and a fixed loop and pointer overhead.
double tile_cost(const ConvTileProblem& p, int64_t t) {
  const auto V = static_cast<double>(p.vectors), tt = static_cast<double>(t);
  return static_cast<double>(p.taps) * (tt * V + tt + V) + 2 * tt * V + 8;
}

// Cost per sample of the nest for tile (samples, rows, cols): out_h/rows row groups, each with
// floor(out_w/cols) full tiles and one narrower tile for the remaining columns.
double nest_cost(const ConvTileProblem& p, const ConvTile& t) {
  const int64_t full = p.out_w / t.cols, rem = p.out_w % t.cols, unit = int64_t{t.samples} * t.rows;
  double c = static_cast<double>(full) * tile_cost(p, unit * t.cols);
  if (rem > 0) c += tile_cost(p, unit * rem);
  return c * static_cast<double>(p.out_h / t.rows) / t.samples;
}

bool fits(const ConvTileProblem& p, const ConvTile& t) {
  if (t.size() > p.max_tile || p.out_h % t.rows != 0 || t.cols > p.out_w) return false;
  const int64_t din = (t.samples - 1) * p.in_sample + (t.rows - 1) * p.in_row + (t.cols - 1) * p.in_col;
  const int64_t dout = (t.samples - 1) * p.out_sample + (t.rows - 1) * p.out_row + (t.cols - 1) * p.out_col;
  return din <= kMaxDisp && dout <= kMaxDisp;
}

// Best tile with exactly `samples` samples; `best` holds the incumbent (kept on ties).
void search(const ConvTileProblem& p, int samples, ConvTile& best, double& best_cost) {
  for (int rows = 1; samples * rows <= p.max_tile; ++rows) {
    for (int cols = 1; samples * rows * cols <= p.max_tile; ++cols) {
      const ConvTile t{samples, rows, cols};
      if (!fits(p, t)) continue;
      const double c = nest_cost(p, t);
      if (c < best_cost) {
        best = t;
        best_cost = c;
      }
    }
  }
}

}  // namespace

ConvTilePlan plan_conv_tiles(const ConvTileProblem& p) {
  ConvTilePlan plan;
  // The historical shape first: one output row, as many columns as the budget allows.
  plan.single.cols = static_cast<int>(std::clamp<int64_t>(p.out_w, 1, std::max(1, p.max_tile)));
  double single_cost = nest_cost(p, plan.single);
  search(p, 1, plan.single, single_cost);
  // A batched nest only when it is clearly cheaper per sample than one sample at a time (the
  // remaining samples of a call still run the one-sample nest).
  ConvTile batched;
  double batched_cost = single_cost * 0.97;
  for (int samples = 2; samples <= p.max_tile; ++samples) search(p, samples, batched, batched_cost);
  if (batched.samples > 1) plan.batched = batched;
  return plan;
}

ConvTileProblem conv_tile_problem(const ConvSpec& s, int max_tile) {
  ConvTileProblem p;
  p.out_h = s.out_h;
  p.out_w = s.out_w;
  p.taps = s.kh * s.kw * s.cin_g;
  p.vectors = s.blocking.vmax;
  p.max_tile = max_tile;
  p.in_sample = s.in_h * s.in_w * s.in_c * 4;
  p.out_sample = (s.out_place.sample_floats ? s.out_place.sample_floats : s.out_h * s.out_w * s.out_c) * 4;
  p.in_row = s.sh * s.in_w * s.in_c * 4;
  p.out_row = (s.out_place.row_floats ? s.out_place.row_floats : s.out_w * s.out_c) * 4;
  p.in_col = s.sw * s.in_c * 4;
  p.out_col = s.out_c * 4;
  return p;
}

TileLayout tile_layout(const ConvTile& t, const ConvTileProblem& p) {
  TileLayout l;
  for (int n = 0; n < t.samples; ++n) {
    for (int h = 0; h < t.rows; ++h) {
      for (int w = 0; w < t.cols; ++w) {
        l.in.push_back(n * p.in_sample + h * p.in_row + w * p.in_col);
        l.out.push_back(n * p.out_sample + h * p.out_row + w * p.out_col);
      }
    }
  }
  return l;
}

TileLayout strided_layout(int R, int64_t ps_in, int64_t ps_out) {
  TileLayout l;
  for (int r = 0; r < R; ++r) {
    l.in.push_back(r * ps_in);
    l.out.push_back(r * ps_out);
  }
  return l;
}

}  // namespace nnd::jit
