#include "core/jit/kernel_name.h"


namespace nnd::jit {

const char* isa_token(Isa isa) {
  switch (isa) {
    case Isa::kSse41: return "sse41";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512Vnni: return "avx512vnni";
    case Isa::kNeonDot: return "neondot";
  }
  return "unknown";
}

std::string KernelName::str() const {
  std::string s = dtype;
  s.append("-").append(op);
  for (size_t i = 0; i < epilogue.size(); ++i) s.append(i == 0 ? "-" : "+").append(epilogue[i]);
  if (tile_positions > 0) {
    s.append("-").append(std::to_string(tile_positions)).append("x").append(std::to_string(tile_vectors)).append("v");
  }
  s.append("-").append(isa_token(isa));
  if (!variant.empty()) s.append("-").append(variant);
  return s;
}

}  // namespace nnd::jit
