#include "core/jit/isa.h"

#include <iterator>

#include "core/util/error.h"

namespace nnd::jit {

const char* arch_name(Arch arch) {
  switch (arch) {
    case Arch::kX86_64: return "x86-64";
    case Arch::kAarch64: return "AArch64";
  }
  std::string message = "JIT internal error: no name for architecture value ";
  message += std::to_string(static_cast<int>(arch));
  throw Error(ErrorCode::kInternal, message);
}

void no_isa_row(size_t value) {
  throw Error(ErrorCode::kInternal, "JIT internal error: no ISA table row for value " + std::to_string(value));
}

const std::vector<Isa>& all_isas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> v;
    for (const IsaTraits& t : kIsaTable) {
      if (t.arch == kBuildArch && t.float_code == t.isa) v.push_back(t.isa);
    }
    return v;
  }();
  return isas;
}

const std::vector<Isa>& all_isa_rows() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> v;
    for (const IsaTraits& t : kIsaTable) {
      if (t.arch == kBuildArch) v.push_back(t.isa);
    }
    return v;
  }();
  return isas;
}

std::optional<Isa> isa_from_id(std::string_view id) {
  for (Isa isa : all_isas()) {
    const IsaTraits& t = isa_traits(isa);
    if (id == t.id || (t.alias && id == t.alias)) return isa;
  }
  return std::nullopt;
}

std::vector<std::string> isa_ids() {
  std::vector<std::string> ids;
  for (Isa isa : all_isas()) ids.emplace_back(isa_id(isa));
  return ids;
}

}  // namespace nnd::jit
