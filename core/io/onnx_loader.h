// Loader for ONNX model files (.onnx), as written by PyTorch's torch.onnx.export, tf2onnx and
// other exporters, opsets 7 and newer. This and core/io/onnx_*.cpp are the only code in nnd that
// includes the ONNX protobuf classes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace nnd {

// Reads `path` and returns a graph with shapes inferred, in nnd's channels-last IR. Graph inputs
// and outputs keep the ONNX names and the layout the model declares (an NCHW model takes and
// returns NCHW; see core/io/onnx_import.h for how the layouts are bridged). Everything computable
// at load time (shape subgraphs, constant arithmetic) is folded. Throws nnd::Error naming the
// file, and where it applies the node, its operator and the attribute, for: bytes that are not an
// ONNX model, weights in external files, an operator or attribute value without a lowering, a
// batch axis that does not stay in front, and absurd shapes.
Graph load_onnx(const std::string& path);

// Same for a model already in memory; `name` starts messages.
Graph load_onnx_bytes(const void* data, size_t size, const std::string& name);

}  // namespace nnd
