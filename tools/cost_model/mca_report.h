// What llvm-mca says about each code region of its input (the text report of LLVM 14 to 19, with
// -bottleneck-analysis): cycles per iteration, the resource bound, and what holds the block up.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nnd::cost {

struct McaRegion {
  std::string name;            // the LLVM-MCA-BEGIN marker's name
  int64_t iterations = 0;
  int64_t instructions = 0;    // all iterations
  int64_t total_cycles = 0;
  int dispatch_width = 0;
  double block_rthroughput = 0;  // the resource (and dispatch) bound, cycles per iteration
  // -bottleneck-analysis: the share of cycles in which each kind of pressure grew.
  double resource_pct = 0, register_dep_pct = 0, memory_dep_pct = 0;
  std::vector<std::pair<std::string, double>> pressure;  // resource name, cycles per iteration

  double cycles_per_iteration() const {
    return iterations > 0 ? static_cast<double>(total_cycles) / static_cast<double>(iterations) : 0.0;
  }
  // The busiest resource and its cycles per iteration ("", 0 without a pressure table).
  std::pair<std::string, double> busiest() const;
  // What bounds the block: "<resource> <p>/it" when the cycles are within 10% of the resource
  // bound, "dispatch <w>-wide" when the dispatch width is that bound, otherwise "latency:
  // register deps" / "latency: memory deps" (what -bottleneck-analysis saw most).
  std::string bottleneck() const;
};

// Every region of one llvm-mca report, in input order. nnd::Error (kFormat) when the text has no
// region or a region lacks its cycle counts.
std::vector<McaRegion> parse_mca_report(const std::string& text);

}  // namespace nnd::cost
