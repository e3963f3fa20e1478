// Engine selection: which engine runs a model, and the JIT's instruction-set and math options.
// Parsed from CLI flags (nnrun, nnbench) and, later, from the daemon config.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/engine/engine.h"

namespace nnd {

enum class EngineKind { kReference, kJit };
enum class IsaChoice { kAuto, kSse41, kAvx2, kAvx512 };
enum class MathMode { kExact, kFast };

struct EngineOptions {
  EngineKind engine = EngineKind::kReference;
  IsaChoice isa = IsaChoice::kAuto;
  MathMode math = MathMode::kExact;
};

// Parsers for the option spellings the tools accept ("reference"/"jit", "auto"/"sse4.1"/"avx2"/
// "avx512", "exact"/"fast"); std::nullopt for anything else.
std::optional<EngineKind> parse_engine_kind(const std::string& s);
std::optional<IsaChoice> parse_isa(const std::string& s);
std::optional<MathMode> parse_math_mode(const std::string& s);
const char* isa_name(IsaChoice i);
const char* math_mode_name(MathMode m);

// The one place that turns options into an engine. Throws nnd::Error when the requested engine
// cannot be built (today: the JIT engine does not exist yet).
std::unique_ptr<Engine> make_engine(const Graph& g, const EngineOptions& options);

}  // namespace nnd
