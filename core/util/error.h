// Errors raised while loading, validating or running a model outside the hot path.
//
// nnd's loader and graph code report problems as exceptions of one type, nnd::Error, whose
// message always carries its context ("file.h5: layer 'conv2d' (Conv2D): kernel_size: must be
// positive, got -3"). Callers at program boundaries (CLIs, the daemon's model registry) catch
// nnd::Error and print or log what() as it is. Inference itself never throws.
#pragma once

#include <stdexcept>
#include <string>

namespace nnd {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nnd
