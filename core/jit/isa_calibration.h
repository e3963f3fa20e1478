// `isa: auto` by measurement: when the CPU offers several ISAs, the network is compiled for each,
// the candidates run a few interleaved rounds on a synthetic input, and the narrowest ISA within
// a margin of the fastest is kept. The widest ISA is not always the fastest (Zen 4 runs 512-bit
// operations as two halves: AVX-512 was 2-35% slower than AVX2 on all four robot networks), so
// "auto" must not mean "widest".
//
// This unit is the measuring and the choice, free of engines and clocks: the caller hands in a
// function that times runs of candidate k (make_jit_engine times real engines; tests return
// made-up durations). The cache that keeps a choice across restarts is isa_calibration_cache.h;
// the glue is make_jit_engine (jit_engine.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/jit/isa.h"

namespace nnd::jit {

struct IsaCalibrationPolicy {
  // A wider ISA is chosen only when it beats every narrower one by more than this fraction of
  // the fastest time; ties and near-ties go to the narrower ISA. 3%: the ratio of two ISAs'
  // minima spreads by about +-2.5% between calibrations on a busy machine (bop's AVX-512/AVX2,
  // 8 calibrations at load 6.5 on the 2-core Zen 4 VM: 1.005-1.058), and the gaps that matter are
  // wider (AVX2 over AVX-512 on Zen 4: 7-39% on three of the four robot networks; bop's 2-3% is a
  // near-tie, which goes to AVX2).
  double tie_margin = 0.03;
  int min_rounds = 3;         // every candidate is timed at least this often
  int max_rounds = 10;        // and a contender at most this often
  double budget_us = 20000;   // no new round starts once the rounds took this long
  // After min_rounds, a candidate whose minimum is more than this factor above the fastest's is
  // out of the running and no longer timed: it cannot come within the tie margin by luck, and
  // timing it would spend the budget on a loser (bop's SSE4.1 run costs 2.5 AVX2 runs).
  double contender_ratio = 1.25;
  // A candidate whose warm-up run took more than this factor of the fastest warm-up is not timed
  // at all. The warm-up also pays the arena's first-touch page faults, about the same for every
  // ISA, which only brings the ratio closer to 1: a ratio above 1.5 there means a larger one in
  // the code itself. On a large network this is where calibration spent most of its time (SSE4.1
  // at about 2.5x AVX2, timed three times besides its warm-up).
  double warmup_ratio = 1.5;
  // ... only when the fastest warm-up took at least this long: a short first run is mostly
  // one-time costs that differ between ISAs (ball_patch on Sapphire Rapids: AVX-512's first run
  // 82 us against AVX2's 9.6, while warm AVX-512 runs are the faster; the 512-bit units power up),
  // and timing a short network costs little anyway.
  double warmup_min_us = 1000;
  // No new round once the rounds took this long, even before min_rounds (each remaining
  // candidate has then been timed at least once): on a large network one sample is a run of tens
  // of milliseconds, already an average over many kernels.
  double max_spent_us = 100000;
  // A sample is as many consecutive runs as take this long (from the warm-up run's time), at most
  // max_runs_per_sample: a 10 us network is timed over 10 runs per sample, not by one call
  // dominated by timer overhead.
  double min_sample_us = 100;
  int max_runs_per_sample = 64;
};

// What one candidate measured: per-run microseconds over its samples.
struct IsaTiming {
  Isa isa = Isa::kSse41;
  double min_us = 0;
  double median_us = 0;
  int samples = 0;
};

// Times `runs` consecutive runs of candidate k (index into the candidates) and returns the total
// microseconds (make_jit_engine: of the calling thread's CPU time).
using TimeRuns = std::function<double(size_t candidate, int runs)>;

// Measures the candidates (distinct ISAs, in table order): one warm-up run each (it sizes the
// samples, and a candidate more than warmup_ratio slower than the fastest there is not timed
// further: its IsaTiming has samples 0 and the warm-up as min and median), then rounds that time
// one sample of every candidate, in an order rotated each round so that no candidate always runs
// right after the same neighbour. After min_rounds, only contenders (within contender_ratio of
// the fastest) are timed; stops after max_rounds, once budget_us was spent (after min_rounds) or
// max_spent_us (any time after the first round), or when one contender is left. Empty
// candidates: nothing measured.
std::vector<IsaTiming> measure_isas(std::span<const Isa> candidates, const TimeRuns& time_runs,
                                    const IsaCalibrationPolicy& policy = {});

// The choice among measured candidates (in table order): the narrowest whose min_us is within
// tie_margin of the fastest. By the minimum, not the median: noise on a shared machine only adds
// time (interrupts, cache lines another process evicted, a frequency dip), so the minimum of
// interleaved samples estimates the code's own cost with fewer runs, and the samples of all
// candidates met the same conditions. Throws nnd::Error for an empty list.
Isa choose_isa(std::span<const IsaTiming> timings, double tie_margin);

// How an engine's ISA was chosen (JitEngine::isa_selection()), for logs and the tools.
struct IsaSelection {
  enum class Source {
    kRequested,      // an explicit ISA (isa: avx2): no choice made
    kOnlyCandidate,  // auto, but the CPU offers one ISA: nothing to measure
    kMeasured,       // auto: measured now (timings), stored in the cache if one is configured
    kCache,          // auto: read from the calibration cache (timings as measured then)
    kRemembered,     // auto: chosen earlier in this process, the file having no entry for it
  };
  Source source = Source::kRequested;
  Isa isa = Isa::kSse41;
  std::vector<IsaTiming> timings;
  double tie_margin = 0;
  double calibration_ms = 0;           // compiling every candidate and measuring (kMeasured)
  bool standin = false;                // timed on the large-network stand-in, not the network
  std::string cache_path;              // "" when no cache is configured
  std::vector<std::string> warnings;   // a corrupt or unwritable cache: the choice still stands

  // One line: "avx2 (auto, measured: sse4.1 2295.4 us (3), avx2 886.7 us (7), avx512 921.5 us
  // (7); per run, min CPU time of (samples), margin 3%; calibration 58.4 ms)", "avx2 (auto, from
  // the calibration cache <path>, measured then: ...)", "sse4.1 (auto, the only ISA this CPU
  // has)", "avx512 (requested)".
  std::string summary() const;
};


}  // namespace nnd::jit
