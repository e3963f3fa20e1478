// Loader failures carry the code of their kind (core/util/error.h): callers decide by the code, so
// a file that cannot be read, a damaged file, an unsupported layer and a size over the limits
// must each say which they are, whatever the message.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/io/model_file.h"
#include "core/io/npy.h"
#include "core/util/error.h"

namespace nnd {
namespace {

namespace fs = std::filesystem;

const fs::path kBroken = fs::path(NND_TEST_DATA_DIR) / "broken";
const fs::path kExamples = fs::path(NND_TEST_DATA_DIR) / ".." / ".." / "examples" / "models";

// The code `f` throws (fails the test when it throws nothing or something else).
ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no nnd::Error thrown";
  return ErrorCode::kInternal;
}

class ErrorCodes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnd_error_codes_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The first `keep` bytes of `from`, written to a new file named `name`.
  std::string truncated_copy(const fs::path& from, const std::string& name, uintmax_t keep) {
    std::ifstream in(from, std::ios::binary);
    std::string bytes(static_cast<size_t>(keep), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(keep));
    const fs::path to = dir_ / name;
    std::ofstream(to, std::ios::binary).write(bytes.data(), in.gcount());
    return to.string();
  }

  fs::path dir_;
};

TEST_F(ErrorCodes, MissingFilesAreIo) {
  EXPECT_EQ(code_of([&] { load_model((dir_ / "no_such_model.h5").string()); }), ErrorCode::kIo);
  EXPECT_EQ(code_of([&] { read_npy((dir_ / "no_such_array.npy").string()); }), ErrorCode::kIo);
  EXPECT_EQ(code_of([&] { load_model(dir_.string()); }), ErrorCode::kIo);  // a directory
}

TEST_F(ErrorCodes, DamagedModelsAreFormat) {
  const fs::path h5 = kExamples / "ball_patch.h5";
  const uintmax_t size = fs::file_size(h5);
  EXPECT_EQ(code_of([&] { load_model(truncated_copy(h5, "half.h5", size / 2)); }), ErrorCode::kFormat);
  EXPECT_EQ(code_of([&] { load_model(truncated_copy(h5, "head.h5", 600)); }), ErrorCode::kFormat);
  const std::string garbage = (dir_ / "garbage.h5").string();
  std::ofstream(garbage) << "these are not the bytes of a model\n";
  EXPECT_EQ(code_of([&] { load_model(garbage); }), ErrorCode::kFormat);
  for (const char* f : {"not_hdf5.h5", "truncated.h5", "invalid_json.h5", "graph_cycle.h5", "dangling_input.h5"}) {
    EXPECT_EQ(code_of([&] { load_model((kBroken / f).string()); }), ErrorCode::kFormat) << f;
  }
}

TEST_F(ErrorCodes, UnsupportedLayersAndParametersAreUnsupported) {
  for (const char* f : {"channels_first.h5", "masking.h5", "unknown_layer.h5", "padding_reflect.h5",
                        "unknown_activation.h5", "mixed_precision.h5"}) {
    EXPECT_EQ(code_of([&] { load_model((kBroken / f).string()); }), ErrorCode::kUnsupported) << f;
  }
}

TEST_F(ErrorCodes, SizesOverTheLimitsAreLimit) {
  EXPECT_EQ(code_of([&] { load_model((kBroken / "absurd_dense_units.h5").string()); }), ErrorCode::kLimit);
}

TEST(ErrorCode, NamesAreDistinct) {
  const ErrorCode all[] = {ErrorCode::kIo, ErrorCode::kFormat, ErrorCode::kUnsupported, ErrorCode::kLimit,
                           ErrorCode::kInvalidArgument, ErrorCode::kIsaUnavailable, ErrorCode::kInternal};
  for (ErrorCode a : all) {
    EXPECT_STRNE(error_code_name(a), "?");
    for (ErrorCode b : all) {
      if (a != b) {
        EXPECT_STRNE(error_code_name(a), error_code_name(b));
      }
    }
  }
  const Error e(ErrorCode::kLimit, "m");
  EXPECT_EQ(e.code(), ErrorCode::kLimit);
  EXPECT_STREQ(e.what(), "m");
}

}  // namespace
}  // namespace nnd
