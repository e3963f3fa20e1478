// Totals of a soak run and the verdict: every request of every client generation accounted for,
// errors by nnclient status name, and the daemon's resources per incarnation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proc_sample.h"
#include "soak_state.h"

namespace nnd::soak {

struct Totals {
  uint64_t submitted = 0, done = 0, wrong = 0, lost = 0, interrupted = 0;
  uint64_t err_expected[kNumStatus]{}, err_unexpected[kNumStatus]{};
  uint64_t served_a = 0, served_b = 0, stale_version = 0;
  uint64_t info_expected = 0, info_unexpected = 0;
  std::vector<std::string> notes;  // first problem of each client that had one

  // Adds a finished client's counters. `killed`: its unresolved requests were interrupted by
  // our kill -9; otherwise (it exited, or was stopped) they count as lost.
  void add(const ClientCounters& c, bool killed);
  uint64_t unexpected_errors() const;
};

// One daemon process from its READY=1 to its kill or stop.
struct Incarnation {
  int64_t start_us = 0;
  std::optional<ProcSample> first, last;            // any sample
  // Samples taken after warm-up under config A, at least 1 s away from a reload (time, sample):
  // the drift compares like with like.
  std::vector<std::pair<int64_t, ProcSample>> settled;
  int max_memfds = 0;
  std::string ended;                                // "killed", "stopped", or how it died
};

struct Events {
  uint64_t reloads = 0, reload_failures = 0, client_kills = 0, daemon_kills = 0;
  uint64_t client_generations = 0, unexpected_client_exits = 0, unexpected_daemon_exits = 0;
  uint64_t stalls = 0;
  std::vector<std::string> problems;               // chaos-side failures, in order
};

// How the private RSS (ProcSample::private_kib) of one incarnation moved after warm-up. With
// reloads, single samples swing by a few MiB either way (the freed engines of the other config
// stay in malloc's arenas until reused), so the checked figure is the trend: the rise of the
// least-squares line through all settled samples from the first to the last. The medians of the
// first and last window (a quarter of the span, at most 60 s) and the range are reported too.
struct Drift {
  int64_t from_us = 0, to_us = 0;
  int samples = 0;
  int64_t base_kib = 0, end_kib = 0;   // medians of the first and last window
  int64_t min_kib = 0, max_kib = 0;
  double slope_kib_per_min = 0;        // least-squares fit over all settled samples
  // The fitted line's rise over the span: what a leak would grow.
  int64_t drift_kib() const {
    return static_cast<int64_t>(slope_kib_per_min * static_cast<double>(to_us - from_us) / 60e6);
  }
};
std::optional<Drift> rss_drift(const Incarnation& in);

std::string status_table(const uint64_t (&counts)[kNumStatus]);

}  // namespace nnd::soak
