// A check of an HDF5 file's global heap collections done on the raw bytes, before libhdf5 sees
// them. libhdf5 1.10 decodes a collection ("GCOL" block, where variable-length strings such as
// Keras' model_config live) trusting each object's stored size: a size that makes an object not
// advance (e.g. a free-space object of size 0) spins forever inside H5Aread, and a size past the
// end of its collection makes it read outside its buffer. Found by the keras_h5 fuzz target
// (docs/fuzzing.md); the loader runs this check on every file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nnd::h5 {

// Returns "" when every global heap collection in `data` is well-formed as far as libhdf5's
// decoder relies on it, else a description of the first bad one ("global heap collection at
// byte 2400: object 0 has size 0"). Scans every "GCOL" signature with version 1 whose declared
// extent lies inside the file (libhdf5 itself rejects the others); object sizes are decoded with
// the "size of lengths" of the file's superblock. A file without an HDF5 signature returns "".
std::string check_global_heaps(const uint8_t* data, size_t size);

}  // namespace nnd::h5
