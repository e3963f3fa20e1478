// What the daemon does with a graph the loader accepted, before it compiles it: cost figures
// (registry, `nnd --check`, nninfo) and the JIT's pass pipeline. The Keras fuzz targets run this
// on every accepted input, so a graph the loader lets through but later stages choke on (overflow
// in the cost sums, a pass breaking the graph) counts as a finding too.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "core/ir/cost.h"
#include "core/ir/graph.h"
#include "core/passes/pass.h"
#include "core/util/error.h"

namespace nnd::fuzz {

inline void exercise_loaded_graph(Graph& g) {
  try {
    verify_structure(g);
    volatile int64_t params = parameter_count(g);
    volatile int64_t flops = flops_per_sample(g);
    (void)params;
    (void)flops;
    passes::make_default_pipeline(std::string()).run(g);
  } catch (const Error& e) {
    // The loader promised a valid, shape-inferred graph: a later stage rejecting it is a bug.
    std::fprintf(stderr, "accepted graph rejected after loading: %s\n", e.what());
    std::abort();
  }
}

}  // namespace nnd::fuzz
