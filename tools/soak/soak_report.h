// Totals of a soak run and the verdict: every request of every client generation accounted for,
// errors by nnclient status name, and the daemon's resources per incarnation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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
  std::optional<ProcSample> base, end;              // settled config-A samples after warm-up
  int64_t base_at_us = 0, end_at_us = 0;
  int max_memfds = 0;
  std::string ended;                                // "killed", "stopped", or how it died
};

struct Events {
  uint64_t reloads = 0, reload_failures = 0, client_kills = 0, daemon_kills = 0;
  uint64_t client_generations = 0, unexpected_client_exits = 0, unexpected_daemon_exits = 0;
  uint64_t stalls = 0;
  std::vector<std::string> problems;               // chaos-side failures, in order
};

std::string status_table(const uint64_t (&counts)[kNumStatus]);

}  // namespace nnd::soak
