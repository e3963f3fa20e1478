// The one place that maps an Isa to its hook class.
#include "core/jit/x86/isa_factories_p.h"

namespace nnd::jit {

std::unique_ptr<VecEmitter> make_vec_emitter(Isa isa, x86::Assembler& a) {
  switch (isa) {
    case Isa::kSse41: return make_sse41_emitter(a);
    case Isa::kAvx2: return make_avx2_emitter(a);
    case Isa::kAvx512: return make_avx512_emitter(a);
  }
  return nullptr;
}

}  // namespace nnd::jit
