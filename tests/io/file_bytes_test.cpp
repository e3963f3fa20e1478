// FileBytes (core/io/file_bytes.h): a file's bytes read whole into a buffer that a process-wide
// pool recycles. Buffers must never be shared by two open files, whichever threads load them,
// and a recycled buffer must hold exactly the new file's bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/io/file_bytes.h"
#include "core/io/keras_hdf5.h"
#include "core/ir/dump.h"

namespace nnd::h5 {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NND_TEST_DATA_DIR) / "fixtures";

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FileBytes, HoldsTheFileAndRecycledBuffersHoldTheNextOne) {
  const fs::path big = kFixtures / "example_ball_patch.k3.h5", small = kFixtures / "act_relu.k3.h5";
  for (int round = 0; round < 3; ++round) {  // later rounds run on recycled buffers
    for (const fs::path& p : {big, small}) {
      const std::vector<char> want = slurp(p);
      ASSERT_FALSE(want.empty()) << p;
      const FileBytes b = FileBytes::read(p.string(), uint64_t{1} << 30);
      ASSERT_NE(b.data(), nullptr) << p;
      ASSERT_EQ(b.size(), want.size()) << p;
      EXPECT_EQ(std::memcmp(b.data(), want.data(), want.size()), 0) << p << " round " << round;
    }
  }
}

TEST(FileBytes, TwoOpenFilesNeverShareABuffer) {
  const fs::path p = kFixtures / "act_relu.k3.h5";
  FileBytes a = FileBytes::read(p.string(), uint64_t{1} << 30);
  FileBytes b = FileBytes::read(p.string(), uint64_t{1} << 30);
  ASSERT_NE(a.data(), nullptr);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
  a.reset();
  FileBytes c = FileBytes::read(p.string(), uint64_t{1} << 30);  // may take a's buffer, never b's
  EXPECT_NE(c.data(), b.data());
}

TEST(FileBytes, NotReadWholeWhenMissingNotRegularOrTooLarge) {
  EXPECT_EQ(FileBytes::read((kFixtures / "no-such-file.h5").string(), uint64_t{1} << 30).data(), nullptr);
  EXPECT_EQ(FileBytes::read(kFixtures.string(), uint64_t{1} << 30).data(), nullptr);  // a directory
  EXPECT_EQ(FileBytes::read("/dev/null", uint64_t{1} << 30).data(), nullptr);           // not regular
  EXPECT_EQ(FileBytes::read((kFixtures / "act_relu.k3.h5").string(), 16).data(), nullptr);
  // A file too large to read whole still loads: HDF5 reads it from disk.
}

TEST(FileBytes, ConcurrentLoadsGiveTheSameGraphs) {
  const std::vector<fs::path> models = {kFixtures / "example_ball_patch.k3.h5", kFixtures / "act_relu.k3.h5",
                                        kFixtures / "example_field_boundary.k2.h5"};
  std::vector<std::string> want;
  for (const fs::path& m : models) want.push_back(dump_graph(load_keras_h5(m.string())));
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 12; ++i) {
        const size_t k = static_cast<size_t>(t + i) % models.size();
        if (dump_graph(load_keras_h5(models[k].string())) != want[k]) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace nnd::h5
