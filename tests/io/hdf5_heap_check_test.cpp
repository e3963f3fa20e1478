// check_global_heaps (core/io/hdf5_heap_check.h): the byte-level check that keeps libhdf5 from
// spinning or over-reading on a broken global heap collection (found by the keras_h5 fuzz target).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/hdf5_heap_check.h"

namespace nnd::h5 {
namespace {

// A file image with a version-0 superblock (8-byte lengths) and one collection at byte 512.
std::vector<uint8_t> image_with_collection(const std::vector<uint8_t>& objects, uint64_t extent) {
  // Sized once and filled by index: g++ 12 reports a false array-bounds error for
  // insert()-after-construction here (-Werror), so no insert/copy into a grown vector.
  std::vector<uint8_t> f(512 + 16 + objects.size(), 0);
  const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const uint8_t head[8] = {'G', 'C', 'O', 'L', 1, 0, 0, 0};
  for (size_t i = 0; i < 8; ++i) {
    f[i] = sig[i];
    f[512 + i] = head[i];
    f[520 + i] = static_cast<uint8_t>(extent >> (8 * i));
  }
  f[13] = 8;  // size of offsets
  f[14] = 8;  // size of lengths
  for (size_t i = 0; i < objects.size(); ++i) f[528 + i] = objects[i];
  f.resize(512 + extent, 0);
  return f;
}

// An object header: index, refcount, 4 reserved bytes, 8-byte size.
std::vector<uint8_t> object(uint16_t index, uint64_t size) {
  std::vector<uint8_t> o = {static_cast<uint8_t>(index), static_cast<uint8_t>(index >> 8), 1, 0,
                            0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) o.push_back(static_cast<uint8_t>(size >> (8 * i)));
  return o;
}

std::vector<uint8_t> concat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr uint64_t kExtent = 4096;

TEST(Hdf5HeapCheck, WellFormedCollectionPasses) {
  // Object 1: 5 bytes of data padded to 8; then the free space covers the rest exactly.
  std::vector<uint8_t> objs = object(1, 5);
  objs.resize(objs.size() + 8, 'x');
  objs = concat(objs, object(0, kExtent - 16 - objs.size()));
  EXPECT_EQ(check_global_heaps(image_with_collection(objs, kExtent).data(), 512 + kExtent), "");
}

TEST(Hdf5HeapCheck, ZeroSizeFreeSpaceIsRejected) {
  const auto f = image_with_collection(object(0, 0), kExtent);
  EXPECT_NE(check_global_heaps(f.data(), f.size()).find("free-space object of size 0"),
            std::string::npos);
}

TEST(Hdf5HeapCheck, ObjectPastTheCollectionIsRejected) {
  for (uint64_t size : {kExtent, ~uint64_t{0} - 3}) {  // too big; wraps when padded
    const auto f = image_with_collection(object(7, size), kExtent);
    EXPECT_NE(check_global_heaps(f.data(), f.size()).find("object 7 of"), std::string::npos) << size;
  }
}

TEST(Hdf5HeapCheck, CollectionsLibhdf5RefusesAnywayAreIgnored) {
  // Declared extent past the end of the file: libhdf5 fails to read it, no need to judge it.
  auto f = image_with_collection(object(0, 0), kExtent);
  f.pop_back();  // (not resize(size() - 1): g++ 12 -O2 -fsanitize warns of a wrapped bound)
  EXPECT_EQ(check_global_heaps(f.data(), f.size()), "");
  // No HDF5 signature at all.
  const uint8_t junk[16] = {'G', 'C', 'O', 'L', 1};
  EXPECT_EQ(check_global_heaps(junk, sizeof junk), "");
}

}  // namespace
}  // namespace nnd::h5
