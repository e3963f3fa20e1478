// Graph passes: small named rewrites of the IR run before code generation (LLVM PassManager style).
//
// A Pass rewrites a shape-inferred Graph in place and says whether it changed anything. The
// PassPipeline runs passes in order and, after each, re-checks the graph (verify_structure +
// infer_shapes), so a broken rewrite is caught at the pass that made it. With a dump directory
// (default: $NND_JIT_DUMP) it writes the IR before the first pass and after each pass to
// <dir>/ir-<nn>-<pass>.txt (core/ir/dump.h format).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace nnd::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Rewrites g (shape-inferred); returns true when the graph changed.
  virtual bool run(Graph& g) = 0;
};

class PassPipeline {
 public:
  // dump_dir: where to write the IR after each pass; empty = no dump. Defaults to $NND_JIT_DUMP.
  PassPipeline();
  explicit PassPipeline(std::string dump_dir);

  PassPipeline& add(std::unique_ptr<Pass> pass);
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }

  // Runs every pass once, in order; returns true when any changed the graph. Requires g to have
  // passed verify_structure + infer_shapes.
  bool run(Graph& g) const;

 private:
  std::string dump_dir_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// The passes the JIT runs before code generation, in order: expand_recurrent, drop_identity,
// fold_batchnorm, fuse_add, fuse_activation.
PassPipeline make_default_pipeline();
PassPipeline make_default_pipeline(std::string dump_dir);

// Only the rewrites without which the JIT cannot compile a graph (expand_recurrent), for when the
// optimising passes are turned off.
PassPipeline make_required_pipeline(std::string dump_dir);

}  // namespace nnd::passes
