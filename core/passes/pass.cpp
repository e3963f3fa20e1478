#include "core/passes/pass.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/ir/dump.h"
#include "core/ir/shape_inference.h"
#include "core/passes/drop_identity.h"
#include "core/passes/expand_recurrent.h"
#include "core/passes/fold_batchnorm.h"
#include "core/passes/fuse_activation.h"
#include "core/passes/fuse_add.h"
#include "core/util/error.h"

namespace nnd::passes {
namespace {

std::string env_dump_dir() {
  const char* d = std::getenv("NND_JIT_DUMP");
  return d ? d : "";
}

void write_dump(const std::string& dir, int index, const std::string& what, const Graph& g) {
  std::filesystem::create_directories(dir);
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "ir-%02d-", index);
  std::ofstream out(std::filesystem::path(dir) / (prefix + what + ".txt"));
  out << dump_graph(g);
  if (!out) throw Error(ErrorCode::kIo, "cannot write the IR dump to " + dir);
}

}  // namespace

PassPipeline::PassPipeline() : dump_dir_(env_dump_dir()) {}
PassPipeline::PassPipeline(std::string dump_dir) : dump_dir_(std::move(dump_dir)) {}

PassPipeline& PassPipeline::add(std::unique_ptr<Pass> pass) {
  passes_.push_back(std::move(pass));
  return *this;
}

bool PassPipeline::run(Graph& g) const {
  bool any = false;
  if (!dump_dir_.empty()) write_dump(dump_dir_, 0, "input", g);
  int index = 1;
  for (const auto& p : passes_) {
    const bool changed = p->run(g);
    any = any || changed;
    try {
      verify_structure(g);
      infer_shapes(g);
    } catch (const Error& e) {
      throw Error(e.code(), "graph pass '" + p->name() + "' produced an invalid graph: " + e.what());
    }
    if (!dump_dir_.empty()) write_dump(dump_dir_, index, p->name(), g);
    ++index;
  }
  return any;
}

PassPipeline make_default_pipeline() { return make_default_pipeline(env_dump_dir()); }

PassPipeline make_default_pipeline(std::string dump_dir) {
  PassPipeline p(std::move(dump_dir));
  p.add(std::make_unique<ExpandRecurrent>())
      .add(std::make_unique<DropIdentity>())
      .add(std::make_unique<FoldBatchNorm>())
      .add(std::make_unique<FuseAdd>())
      .add(std::make_unique<FuseActivation>())
      .add(std::make_unique<FuseAdd>());  // Adds after a ReLU fused by fuse_activation (fuse_add.h)
  return p;
}

PassPipeline make_required_pipeline(std::string dump_dir) {
  PassPipeline p(std::move(dump_dir));
  p.add(std::make_unique<ExpandRecurrent>());
  return p;
}

}  // namespace nnd::passes
