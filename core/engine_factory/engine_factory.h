// The one place that turns engine options into an engine. In its own library (nnd_engine_factory)
// because it is the only code that knows every engine: the engines themselves (core/ref, core/jit)
// implement the Engine interface of core/engine and must not depend on each other.
#pragma once

#include <memory>

#include "core/engine/engine.h"
#include "core/engine/engine_options.h"

namespace nnd {

// Throws nnd::Error when the requested engine cannot be built (the JIT: a layer it does not
// compile, or an instruction set the CPU lacks).
std::unique_ptr<Engine> make_engine(const Graph& g, const EngineOptions& options);

}  // namespace nnd
