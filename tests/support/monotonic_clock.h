// CLOCK_MONOTONIC readings for harnesses that measure waits and timeouts (integration tests,
// nnd_soak): immune to wall-clock steps.
#pragma once

#include <time.h>

#include <cstdint>

namespace nnd::test {

inline int64_t now_us() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

inline int64_t now_ms() { return now_us() / 1000; }

}  // namespace nnd::test
