#include "core/engine_factory/engine_factory.h"

#include "core/jit/jit_engine.h"
#include "core/ref/reference_engine.h"
#include "core/util/error.h"

namespace nnd {

std::unique_ptr<Engine> make_engine(const Graph& g, const EngineOptions& options) {
  switch (options.engine) {
    case EngineKind::kReference:
      return make_reference_engine(g);
    case EngineKind::kJit:
      return jit::make_jit_engine(g, options);
  }
  throw Error(ErrorCode::kInvalidArgument, "unknown engine");
}

}  // namespace nnd
