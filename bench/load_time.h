// nnbench --load-time: how long a model takes from .h5 file to a runnable JIT engine (load +
// compile), measured both cold (the first model of a fresh process: HDF5 library start-up, cold
// caches, first-touch page faults, lazy symbol binding) and warm (a later model in the same
// process, as when the daemon compiles its second and further models or reloads).
#pragma once

#include <string>
#include <vector>

namespace nnbench {

// Prints, per model, min and median over `runs` of load, compile and their sum, wall-clock and
// thread CPU time, cold (each run a fresh child process of this executable, started with
// `--load-child MODEL ISA`) and warm (runs in this process after one untimed load). `isa` is the
// JIT's ISA option ("auto", as the daemon, measures the candidate ISAs without a calibration
// cache: its compile time includes that calibration). Returns the number of models that failed.
int report_load_time(const std::vector<std::string>& models, int runs, const std::string& isa = "auto");

// The child side of a cold run: loads and compiles `model` once, as the first thing this process
// does, and prints the four figures on one line for the parent. Returns the exit status.
int load_time_child(const std::string& model, const std::string& isa = "auto");

}  // namespace nnbench
