// A std::chrono clock of the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), force-included
// into copies of ../shared/anchors' ort_c.cpp and cnn_harness.cpp by build_cpu_time.sh, whose
// `using Clock = std::chrono::steady_clock;` it replaces: on a machine other processes load, a
// call's wall time counts their time slices, its CPU time does not. Both anchors run their
// network on the calling thread (ONNX Runtime with one intra-op thread, CompiledNN always).
#pragma once

#include <time.h>

#include <chrono>

struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return time_point(duration(static_cast<rep>(t.tv_sec) * 1000000000 + t.tv_nsec));
  }
};
