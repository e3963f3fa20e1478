#include "core/engine/engine_options.h"

#include "core/jit/jit_engine.h"
#include "core/ref/reference_engine.h"
#include "core/util/error.h"

namespace nnd {

std::optional<EngineKind> parse_engine_kind(const std::string& s) {
  if (s == "reference") return EngineKind::kReference;
  if (s == "jit") return EngineKind::kJit;
  return std::nullopt;
}

std::optional<IsaChoice> parse_isa(const std::string& s) {
  if (s == "auto") return IsaChoice::kAuto;
  if (s == "sse4.1" || s == "sse4") return IsaChoice::kSse41;
  if (s == "avx2") return IsaChoice::kAvx2;
  if (s == "avx512") return IsaChoice::kAvx512;
  return std::nullopt;
}

std::optional<MathMode> parse_math_mode(const std::string& s) {
  if (s == "exact") return MathMode::kExact;
  if (s == "fast") return MathMode::kFast;
  return std::nullopt;
}

const char* isa_name(IsaChoice i) {
  switch (i) {
    case IsaChoice::kAuto: return "auto";
    case IsaChoice::kSse41: return "sse4.1";
    case IsaChoice::kAvx2: return "avx2";
    case IsaChoice::kAvx512: return "avx512";
  }
  return "?";
}

const char* math_mode_name(MathMode m) { return m == MathMode::kExact ? "exact" : "fast"; }

std::unique_ptr<Engine> make_engine(const Graph& g, const EngineOptions& options) {
  switch (options.engine) {
    case EngineKind::kReference:
      return make_reference_engine(g);
    case EngineKind::kJit:
      return jit::make_jit_engine(g, options);
  }
  throw Error("unknown engine");
}

}  // namespace nnd
