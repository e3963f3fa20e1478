#include "core/jit/cpu_features.h"

#include "core/util/error.h"

namespace nnd::jit {

Isa CpuFeatures::best() const {
  const std::vector<Isa>& isas = all_isas();  // never empty: the build refuses an architecture without rows
  for (auto it = isas.rbegin(); it != isas.rend(); ++it) {
    if (has(*it)) return *it;
  }
  const char* baseline = isa_traits(isas.front()).name;
  throw Error(ErrorCode::kIsaUnavailable, std::string("JIT: this CPU lacks ") + baseline + " (" + brand + "); the JIT needs at least " + baseline);
}

std::string CpuFeatures::to_string() const {
  std::string s;
  for (Isa isa : all_isa_rows()) {
    if (!has(isa)) continue;
    if (!s.empty()) s += ' ';
    s += isa_id(isa);
  }
  return s.empty() ? "none" : s;
}

std::string CpuFeatures::identity() const {
  std::string s = model.empty() ? std::string("unknown model") : model;
  s += " | ";
  s += brand.empty() ? std::string("unknown brand") : brand;
  s += " | ";
  s += to_string();
  return s;
}

CpuFeatures detect_cpu_features() {
  static const CpuFeatures features = probe_cpu_features();
  return features;
}

Isa resolve_isa(IsaChoice choice, const CpuFeatures& features) {
  if (choice.is_auto()) return features.best();
  const Isa want = *choice.isa();
  if (!features.has(want)) {
    throw Error(ErrorCode::kIsaUnavailable, std::string("JIT: ISA '") + isa_id(want) + "' requested but this CPU (" + features.brand +
                ") supports only: " + features.to_string());
  }
  return want;
}

}  // namespace nnd::jit
