// The files a test reads and does not make: the real robot networks in ../shared/models (beside
// the clone; NND_SHARED_MODELS_DIR) and the fixture lists committed under tests/data. CI always
// has both, so a missing one fails the test instead of skipping it: a suite must not pass on
// fewer networks than it names (golden_code.h holds its lists to the same rule).
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace nnd::test {

inline constexpr const char* kRequiredFileHint =
    "the real networks come from ../shared/models beside the clone, the fixture lists from tests/data "
    "(made by tools/fixtures and tools/onnx_fixtures); CI has both, so a missing one is a failure, not a skip";

// For loops over several files: records a failure naming the file and returns false.
inline bool require_file(const std::filesystem::path& p) {
  if (std::filesystem::exists(p)) return true;
  ADD_FAILURE() << p.string() << " is missing: " << kRequiredFileHint;
  return false;
}

}  // namespace nnd::test

// Stops the test (ASSERT) when the file it reads is missing.
#define NND_REQUIRE_FILE(path) ASSERT_TRUE(::nnd::test::require_file(path))
