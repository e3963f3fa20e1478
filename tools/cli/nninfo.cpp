// nninfo: print a model's layers (Keras .h5/.keras or ONNX) as nnd understands them: kind, output shape,
// parameters and FLOPs per sample, whether the JIT compiles it, with totals.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/cost.h"
#include "core/io/model_file.h"
#include "core/jit/jit_engine.h"
#include "core/util/error.h"
#include "nnd_version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "nninfo: list a model's layers (after nnd's import: one row per IR layer, with the Keras\n"
      "layer or ONNX node it came from) with output shapes, parameter counts and FLOPs per sample\n"
      "(a multiply-add counts 2). Exits 1 with a message if nnd cannot load it."};
  std::string model_path;
  bool list_kernels = false;
  app.add_option("model", model_path, "model file: Keras HDF5 (.h5), Keras 3 archive (.keras) or ONNX (.onnx), recognised by content")->required();
  app.add_flag("--kernels", list_kernels,
               "compile with the JIT for this CPU and list each layer's kernels (after the graph passes, which\n"
               "fold and fuse layers), named as in docs/jit.md \"Kernel names\"");
  app.set_version_flag("--version", NND_VERSION_TEXT("nninfo"));
  CLI11_PARSE(app, argc, argv);

  try {
    const nnd::Graph g = nnd::load_model(model_path);
    const bool onnx = g.format == nnd::ModelFormat::kOnnx;
    std::printf("model %s (%s)\n", model_path.c_str(), g.format_description().c_str());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const nnd::Value& v = g.values[g.inputs[i]];
      std::printf("input  %-28s %-16s %s\n", g.input_names[i].c_str(),
                  nnd::dims_to_string(v.shape).c_str(), nnd::dtype_name(v.dtype));
    }
    const std::vector<nnd::jit::UnsupportedLayer> missing = nnd::jit::jit_unsupported_layers(g);
    std::vector<bool> jit_compiles(g.nodes.size(), true);
    for (const nnd::jit::UnsupportedLayer& u : missing) jit_compiles[u.node] = false;
    std::printf("%-4s %-32s %-20s %-14s %-20s %12s %14s %4s\n", "#", "layer", onnx ? "onnx op" : "class", "ir kind",
                "output shape", "params", "FLOPs", "jit");
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const nnd::Node& n = g.nodes[i];
      std::printf("%-4zu %-32s %-20s %-14s %-20s %12lld %14lld %4s\n", i, n.name.c_str(),
                  n.source_op.c_str(), nnd::layer_kind_name(n.params),
                  nnd::dims_to_string(g.values[n.output].shape).c_str(),
                  static_cast<long long>(nnd::parameter_count(n)),
                  static_cast<long long>(nnd::flops_per_sample(g, n)), jit_compiles[i] ? "yes" : "NO");
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      std::printf("output %-28s %s\n", g.output_names[i].c_str(),
                  nnd::dims_to_string(g.values[g.outputs[i]].shape).c_str());
    }
    const long long flops = static_cast<long long>(nnd::flops_per_sample(g));
    std::printf("total: %zu layers, %lld parameters, %lld FLOPs per sample (%.3f MFLOP)\n",
                g.nodes.size(), static_cast<long long>(nnd::parameter_count(g)), flops,
                static_cast<double>(flops) / 1e6);
    if (missing.empty()) {
      std::printf("jit: every layer is compiled\n");
    } else {
      std::printf("jit: %zu layer(s) not compiled:\n", missing.size());
      for (const nnd::jit::UnsupportedLayer& u : missing) std::printf("  %s\n", u.message.c_str());
    }
    if (list_kernels && missing.empty()) {
      nnd::EngineOptions o;
      o.isa_cache = nnd::default_isa_cache_path();  // the ISA nnrun and nnd serve it on
      const std::unique_ptr<nnd::jit::JitEngine> jit = nnd::jit::make_jit_engine(g, o);
      const nnd::Graph& compiled = jit->graph();
      std::printf("isa %s\n", jit->isa_selection().summary().c_str());
      std::printf("kernels (%s, %zu layers after the graph passes):\n", jit->name().c_str(), compiled.nodes.size());
      for (size_t i = 0; i < compiled.nodes.size(); ++i) {
        const std::vector<std::string> kernels = jit->node_kernels(i);
        std::printf("%-4zu %-32s", i, compiled.nodes[i].name.c_str());
        if (kernels.empty()) std::printf(" (no kernel: shares its input's storage)");
        for (size_t k = 0; k < kernels.size(); ++k) std::printf("%s%s", k ? ", " : " ", kernels[k].c_str());
        std::printf("\n");
      }
    }
  } catch (const nnd::Error& e) {
    std::fprintf(stderr, "nninfo: %s\n", e.what());
    return 1;
  }
  return 0;
}
