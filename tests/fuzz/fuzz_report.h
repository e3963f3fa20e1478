// Triage aid shared by the fuzz targets: with NND_FUZZ_VERBOSE=1 in the environment a target
// prints each input's outcome (accepted, or the clear error it got), e.g.
//   NND_FUZZ_VERBOSE=1 ./nnd_fuzz_keras_h5 -runs=0 some/folder
// Silent otherwise: libFuzzer runs thousands of inputs a second.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace nnd::fuzz {

inline bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("NND_FUZZ_VERBOSE");
    return v != nullptr && v[0] == '1';
  }();
  return on;
}

inline void report(const char* outcome) {
  if (verbose()) std::fprintf(stderr, "nnd-fuzz: %s\n", outcome);
}

}  // namespace nnd::fuzz
