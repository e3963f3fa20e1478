#include "core/io/hdf5_heap_check.h"

#include <cstring>

namespace nnd::h5 {
namespace {

constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

// Little-endian unsigned integer of `n` (<= 8) bytes.
uint64_t decode(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// The superblock's "size of lengths" (bytes of a length field): 0 when there is no readable
// superblock (libhdf5 then refuses the file itself). The superblock sits at byte 0, 512, 1024,
// ... like H5Fis_hdf5 searches; versions 0/1 keep the field at byte 14, versions 2/3 at byte 10.
unsigned size_of_lengths(const uint8_t* data, size_t size) {
  for (size_t off = 0; off + 16 <= size; off = off == 0 ? 512 : off * 2) {
    if (std::memcmp(data + off, kSignature, sizeof kSignature) != 0) continue;
    const unsigned version = data[off + 8];
    return version <= 1 ? data[off + 14] : data[off + 10];
  }
  return 0;
}

// Walks the objects of the collection at `at` the way libhdf5's decoder does; "" when it is safe.
std::string check_collection(const uint8_t* data, size_t size, size_t at, unsigned len_bytes) {
  const size_t header = 8 + len_bytes;          // "GCOL", version, 3 reserved, collection size
  const size_t object_header = 8 + len_bytes;   // index, refcount, 4 reserved, object size
  if (size - at < header) return "";            // libhdf5 cannot read it either
  const uint64_t extent = decode(data + at + 8, len_bytes);
  if (extent > size - at) return "";            // past the end of file: libhdf5 refuses it
  const std::string where = "global heap collection at byte " + std::to_string(at);
  const uint8_t* c = data + at;
  uint64_t p = header;
  while (p < extent) {
    if (extent - p < object_header) break;      // trailing free space too small for a header
    const unsigned index = static_cast<unsigned>(decode(c + p, 2));
    const uint64_t object = decode(c + p + 8, len_bytes);
    // Object 0 is the free space and counts its own header; others are padded to 8 bytes.
    if (index != 0 && object > extent - p - object_header) {
      return where + ": object " + std::to_string(index) + " of " + std::to_string(object) +
             " bytes overruns the collection";
    }
    const uint64_t need = index == 0 ? object : object_header + ((object + 7) / 8) * 8;
    if (need == 0) return where + ": free-space object of size 0";
    if (need > extent - p) {
      return where + ": object " + std::to_string(index) + " of " + std::to_string(object) +
             " bytes overruns the collection";
    }
    p += need;
  }
  return "";
}

}  // namespace

std::string check_global_heaps(const uint8_t* data, size_t size) {
  const unsigned len_bytes = size_of_lengths(data, size);
  if (len_bytes == 0) return "";
  if (len_bytes != 2 && len_bytes != 4 && len_bytes != 8) {
    return "superblock: size of lengths " + std::to_string(len_bytes) +
           " is not supported (2, 4 or 8 bytes)";
  }
  static const char kCollection[5] = {'G', 'C', 'O', 'L', 1};  // signature and version 1
  const void* end = data + size;
  for (const uint8_t* p = data; p < end;) {
    const void* hit = memmem(p, static_cast<size_t>(data + size - p), kCollection, sizeof kCollection);
    if (hit == nullptr) break;
    const size_t at = static_cast<size_t>(static_cast<const uint8_t*>(hit) - data);
    std::string problem = check_collection(data, size, at, len_bytes);
    if (!problem.empty()) return problem;
    p = data + at + 1;
  }
  return "";
}

}  // namespace nnd::h5
