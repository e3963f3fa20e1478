// A model file's identity for reloads: a hash of its bytes. A reload reuses a compiled model only
// when its file's bytes are the ones it was compiled from; the modification time is no evidence
// (`cp -p`, `rsync -t` and `tar` keep it while replacing the content).
#pragma once

#include <cstdint>
#include <string>

namespace nnd::daemon {

// 64-bit hash of the bytes of `path` (not cryptographic: it tells a file's versions apart, it
// does not resist forgery). One read of the file (page-cached after the first load: about
// 0.1 s for 250 MB). Throws nnd::Error (kIo) when the file cannot be read or is not a regular
// file (a FIFO, a device, a /proc file).
uint64_t model_file_hash(const std::string& path);

}  // namespace nnd::daemon
