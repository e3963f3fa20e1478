// Errors raised while loading, validating or running a model outside the hot path.
//
// nnd's loader and graph code report problems as exceptions of one type, nnd::Error, whose
// message always carries its context ("file.h5: layer 'conv2d' (Conv2D): kernel_size: must be
// positive, got -3") and whose code says what kind of failure it is, so callers decide by the code
// (the daemon's `engine: auto` falls back only when the JIT is unavailable; nninfo marks layers the
// JIT does not compile) and never by the message text. Callers at program boundaries (CLIs, the
// daemon's model registry) catch nnd::Error and print or log what() as it is. A site that adds
// context to an error it re-throws keeps its code. Inference itself never throws.
#pragma once

#include <stdexcept>
#include <string>

namespace nnd {

enum class ErrorCode {
  kIo,               // a file cannot be opened, read or written
  kFormat,           // malformed content: not the format it claims, truncated, inconsistent
  kUnsupported,      // well-formed, but a layer kind, parameter or encoding nnd does not handle
  kLimit,            // a size, count, depth or memory need over nnd's limits
  kInvalidArgument,  // the caller's request does not fit the model or the API (batch, inputs, names)
  kIsaUnavailable,   // the CPU lacks the instruction set the JIT was asked for (or needs)
  kInternal,         // an invariant of nnd's own code broke: a bug, never the model's fault
};

// Lower-case name for logs and tests ("io", "format", ...).
constexpr const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo: return "io";
    case ErrorCode::kFormat: return "format";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kLimit: return "limit";
    case ErrorCode::kInvalidArgument: return "invalid-argument";
    case ErrorCode::kIsaUnavailable: return "isa-unavailable";
    case ErrorCode::kInternal: return "internal";
  }
  return "?";
}

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace nnd
