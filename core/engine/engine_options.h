// Engine selection: which engine runs a model, and the JIT's instruction-set and math options.
// Parsed from CLI flags (nnrun, nnbench) and, later, from the daemon config. make_engine() is in
// core/engine_factory/engine_factory.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "core/jit/isa.h"

namespace nnd {

enum class EngineKind { kReference, kJit };
// The JIT's instruction-set option: "auto" (of the ISAs the CPU has, the one measured fastest on
// the network: EngineOptions::isa_cache, core/jit/isa_calibration.h) or one ISA of the table
// (core/jit/isa.h). Converts implicitly from an Isa: `options.isa = jit::Isa::kAvx2`.
class IsaChoice {
 public:
  static const IsaChoice kAuto;
  constexpr IsaChoice() = default;
  constexpr IsaChoice(jit::Isa isa) : isa_(isa) {}  // NOLINT(google-explicit-constructor)
  bool is_auto() const { return !isa_.has_value(); }
  std::optional<jit::Isa> isa() const { return isa_; }  // nullopt for auto
  bool operator==(const IsaChoice&) const = default;

 private:
  std::optional<jit::Isa> isa_;
};
inline constexpr IsaChoice IsaChoice::kAuto{};
enum class MathMode { kExact, kFast };

struct EngineOptions {
  EngineKind engine = EngineKind::kReference;
  IsaChoice isa = IsaChoice::kAuto;
  MathMode math = MathMode::kExact;
  // isa auto on a CPU with several ISAs measures which runs the network fastest
  // (core/jit/isa_calibration.h). The file that keeps that choice across restarts, keyed by CPU,
  // network, batch and math mode (core/jit/isa_calibration_cache.h); "" (the default): measured
  // at every engine construction and not kept. The daemon sets it (daemon.isa_calibration_cache).
  std::string isa_cache;
  // isa auto: samples per run while measuring (a model served mostly in batches of 16 is better
  // measured at 16). Part of the cache key.
  int64_t isa_calibration_batch = 1;
  // The JIT: threads one call runs on (the calling thread and threads - 1 helpers the engine
  // keeps; docs/jit.md "One call on several cores"). 1 (the default): the calling thread only.
  // kAutoThreads: auto_threads() of the network. Results are bit-identical for every count.
  int threads = 1;
};
inline constexpr int kAutoThreads = 0;
inline constexpr int kMaxThreads = 64;

// The ISA calibration cache file the nnd programs share by default (nnrun, nnbench, nninfo and
// the daemon's `isa_calibration_cache: auto`), so that each of them, and every start and reload,
// serves a network on the ISA measured for it the first time on this machine:
//   $NND_ISA_CACHE                      a file path, or "off" (no file: "" is returned);
//   $CACHE_DIRECTORY/isa-calibration    systemd's CacheDirectory= (the service: /var/cache/nnd);
//   $XDG_CACHE_HOME/nnd/isa-calibration, else $HOME/.cache/nnd/isa-calibration;
//   "" when none of these is set. (EngineOptions::isa_cache stays "" unless a program sets it.)
std::string default_isa_cache_path();

// Threads for `threads: auto`: one per kMflopPerThread MFLOP per sample (a smaller share of a
// call cannot pay the barriers and the wake-up), at least 1, never more than `cores`.
inline constexpr int64_t kMflopPerThread = 20;
int auto_threads(int64_t flops_per_sample, int cores);
// The cores this process may run on (its affinity mask; hardware_concurrency() if unknown).
int available_cores();
// "auto" or a count 1..kMaxThreads; std::nullopt for anything else.
std::optional<int> parse_threads(const std::string& s);

// Parsers for the option spellings the tools accept ("reference"/"jit", "auto" or an ISA id or
// alias of the table, "exact"/"fast"); std::nullopt for anything else.
std::optional<EngineKind> parse_engine_kind(const std::string& s);
std::optional<IsaChoice> parse_isa(const std::string& s);
std::optional<MathMode> parse_math_mode(const std::string& s);
const char* isa_name(IsaChoice i);  // "auto" or the ISA's id

// The ISA option's spellings for CLIs, the config validator and help texts: "auto" and the ids of
// jit::all_isas() ({"auto", "sse4.1", "avx2", "avx512"}), and the same as prose
// ("auto, sse4.1, avx2 or avx512").
std::vector<std::string> isa_choice_ids();
std::string isa_choice_list();
const char* math_mode_name(MathMode m);

}  // namespace nnd
