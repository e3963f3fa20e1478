// isa auto on a large network: timing the network itself would mean compiling it once per
// candidate ISA, and on a large network that costs more than the compile it serves (resnet18 on
// the Sapphire Rapids VM: one compile 0.6 s, the calibration 3.0 s, mostly the two extra compiles
// and their weight packing). Such a network is calibrated on a stand-in instead: a small fixed
// network of the layer shapes large networks spend their time in (a 3x3 convolution, an
// expanding and a projecting 1x1, a depthwise 3x3, all at 28x28 with 64-256 channels: 113 MFLOP,
// 71k weights). It compiles in a few milliseconds for every ISA, and its choice is one per CPU,
// batch and math mode: every large network on a machine is served on the same ISA, and the
// choice is cached (isa_calibration_cache.h) under the stand-in's content hash.
//
// Small networks (the robot's: at most 23k weights and 92 MFLOP) keep being timed themselves:
// there the ISAs' order depends on the network (8-channel layers half-fill a 512-bit register),
// and compiling them is cheap.
#pragma once

#include <cstdint>

#include "core/ir/graph.h"

namespace nnd::jit {

// Where the stand-in takes over: at least this many weights (compiling the network once per ISA
// is the cost) or FLOPs per sample (timing it is).
inline constexpr int64_t kStandinMinParameters = 1'000'000;
inline constexpr int64_t kStandinMinFlops = 250'000'000;

// Whether isa auto calibrates `g` on the stand-in (FLOPs only when g's shapes are inferred).
bool calibrates_on_standin(const Graph& g);

// The stand-in network, shapes inferred; the same graph (and content hash) at every call.
const Graph& isa_standin_graph();

}  // namespace nnd::jit
