// Factories of the per-ISA hook classes (one .cpp each); only x86/isa_registry.cpp calls them.
#pragma once

#include "core/jit/x86/vec_emitter.h"

namespace nnd::jit {

std::unique_ptr<VecEmitter> make_sse41_emitter(x86::Assembler& a);
std::unique_ptr<VecEmitter> make_avx2_emitter(x86::Assembler& a);
std::unique_ptr<VecEmitter> make_avx512_emitter(x86::Assembler& a);

}  // namespace nnd::jit
