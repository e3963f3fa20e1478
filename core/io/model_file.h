// Model files by content: which format a file holds (never by its name), and one entry point that
// loads any supported format into the graph IR. Tools and the daemon load models only through here.
#pragma once

#include <cstddef>
#include <string>

#include "core/ir/graph.h"

namespace nnd {

// What a file's first bytes say it holds.
enum class FileKind {
  kKerasH5,       // HDF5 file (Keras .h5)
  kOnnx,          // protobuf ModelProto (.onnx)
  kZip,           // zip archive (a Keras 3 .keras file, or another archive)
  kGitLfsPointer, // the text Git LFS leaves in place of a file that was not fetched
  kEmpty,
  kUnknown,
};

// Guesses the format from a file's first bytes (64 are enough).
FileKind sniff_file_kind(const void* head, size_t size);

// Loads `path` with the loader its content calls for; throws nnd::Error naming the file and what
// it is when nnd cannot read it (an empty file, a Git LFS pointer, a zip that is no Keras
// archive, an unknown format).
Graph load_model(const std::string& path);

// Same for a model file's bytes already in memory (read whole by the caller); `name` starts
// messages and is normally the file's path. The daemon uses it to load exactly the bytes a
// child process validated.
Graph load_model_bytes(const void* data, size_t size, const std::string& name);

}  // namespace nnd
