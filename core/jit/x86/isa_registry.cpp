// The one place that maps an Isa to its hook class.
#include "core/jit/x86/isa_factories_p.h"

#include <string>

#include "core/util/error.h"

namespace nnd::jit {

std::unique_ptr<VecEmitter> make_vec_emitter(Isa isa, x86::Assembler& a) {
  switch (isa) {
    case Isa::kSse41: return make_sse41_emitter(a);
    case Isa::kAvx2: return make_avx2_emitter(a);
    case Isa::kAvx512: return make_avx512_emitter(a);
    case Isa::kNeon:
    case Isa::kNeonDot: break;  // another architecture's rows (core/jit/arm64)
    case Isa::kAvxVnni:
    case Isa::kAvx512Vnni: break;  // extension rows: their float code is their float_code row's
  }
  throw Error(ErrorCode::kInternal, std::string("JIT internal error: no x86 emitter for ") + isa_id(isa));
}

}  // namespace nnd::jit
