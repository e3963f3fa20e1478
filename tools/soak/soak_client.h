// One soak client process: opens its own nnclient handle, sends requests at its own rate with
// random models and batch sizes (synchronous nnclient_infer, or bursts of asynchronous
// zero-copy requests), checks every answer bit for bit and counts every request in its
// ClientCounters, until SharedState::stop is set (then it drains its in-flight requests).
#pragma once

#include <cstdint>
#include <string>

#include "soak_state.h"
#include "workload.h"

namespace nnd::soak {

struct ClientProfile {
  int slot = 0;                 // index into SharedState::clients
  int generation = 0;           // how many clients ran before this one (names it in notes)
  uint64_t seed = 1;
  double rate = 100;            // requests per second it aims at
  int depth = 0;                // 0: synchronous; n > 0: bursts of 1..n asynchronous requests
  uint64_t timeout_us = 10'000'000;  // past this without an answer a request counts as lost
  std::string socket_path;
};

// The profile of the `generation`-th client: rates 50..2000 req/s and sync/async modes rotate,
// so a replacement after a kill behaves differently from the client it replaces.
ClientProfile make_profile(int generation, int slot, const std::string& socket_path,
                           uint64_t timeout_us);

// Runs in the forked child; returns its exit code (0 unless the client could not run at all).
int run_client(const ClientProfile& p, const Workload& w, SharedState* shared);

}  // namespace nnd::soak
