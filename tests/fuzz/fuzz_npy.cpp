// libFuzzer target: the .npy reader (parse_npy). Input: the file bytes. Expected outcome: an
// array whose byte count matches its shape and dtype, or nnd::Error.
#include <cstddef>
#include <cstdint>

#include "core/io/npy.h"
#include "core/ir/tensor.h"
#include "core/util/error.h"
#include "tests/fuzz/fuzz_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nnd::NpyArray a = nnd::parse_npy(data, size, "fuzz.npy");
    // The promise callers rely on when they index the data by shape.
    if (a.bytes.size() != static_cast<size_t>(a.element_count()) * nnd::dtype_bytes(a.dtype)) __builtin_trap();
    nnd::fuzz::report("accepted");
  } catch (const nnd::Error& e) {
    nnd::fuzz::report(e.what());
  }
  return 0;
}
