// .npy reading and writing, and the input conventions of nnrun (model_inputs.h).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/io/model_inputs.h"
#include "core/io/npy.h"
#include "core/util/error.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;

std::string npy_bytes(const std::string& header_dict, size_t data_bytes, uint8_t fill = 0) {
  std::string h = header_dict;
  const size_t total = 10 + h.size() + 1;
  h.append((64 - total % 64) % 64, ' ');
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  out.append(data_bytes, static_cast<char>(fill));
  return out;
}

NpyArray parse(const std::string& s) {
  return parse_npy(reinterpret_cast<const uint8_t*>(s.data()), s.size(), "t.npy");
}

void expect_error(const std::string& bytes, const std::string& substring) {
  try {
    parse(bytes);
    ADD_FAILURE() << "expected an error containing '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.npy"), std::string::npos) << e.what();
  }
}

TEST(Npy, ReadsFloat32AndUint8) {
  NpyArray f = parse(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24));
  EXPECT_EQ(f.dtype, DType::kFloat32);
  EXPECT_EQ(f.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.bytes.size(), 24u);
  NpyArray u = parse(npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }", 5, 7));
  EXPECT_EQ(u.dtype, DType::kUInt8);
  EXPECT_EQ(u.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(u.u8()[4], 7);
  NpyArray scalar = parse(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.element_count(), 1);
}

TEST(Npy, RejectsWhatItCannotRead) {
  expect_error("hello world, not numpy", "not a .npy file");
  expect_error(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16),
               "unsupported dtype '<f8'");
  expect_error(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16),
               "Fortran");
  expect_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 10),
               "truncated");
  expect_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8),
               "after the data");
  expect_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,"
                         " 99999999999), }", 0),
               "too large");
  expect_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2000000000,"
                         " 2000000000), }", 0),
               "exceeds");
  expect_error(npy_bytes("{'descr': '<f4', 'shape': (2,), }", 8), "missing");
  std::string cut = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  expect_error(cut.substr(0, 20), "truncated");
}

TEST(Npy, WriteThenReadRoundTrips) {
  const fs::path p = fs::temp_directory_path() / ("nnd_npy_test_" + std::to_string(::getpid()) + ".npy");
  const float data[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-7f, -1e7f};
  write_npy_f32(p.string(), {2, 3}, data);
  NpyArray a = read_npy(p.string());
  fs::remove(p);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(a.bytes.size(), sizeof data);
  EXPECT_EQ(std::memcmp(a.bytes.data(), data, sizeof data), 0);
}

// ArgMax indices are written as '<i8' and read back; an input takes no int64 file.
TEST(Npy, Int64RoundTripsAndIsNoInput) {
  const fs::path p = fs::temp_directory_path() / ("nnd_npy_i8_" + std::to_string(::getpid()) + ".npy");
  const int64_t data[4] = {0, 3, int64_t{1} << 40, 2};
  write_npy(p.string(), {4}, DType::kInt64, data);
  NpyArray a = read_npy(p.string());
  EXPECT_EQ(a.dtype, DType::kInt64);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{4}));
  ASSERT_EQ(a.bytes.size(), sizeof data);
  EXPECT_EQ(a.i64()[2], int64_t{1} << 40);
  Graph g;
  g.source = "test";
  g.values = {{"b", DType::kFloat32, {}, kNoNode}};
  g.inputs = {0};
  g.input_names = {"b"};
  try {
    prepare_inputs(g, {{"b", p.string()}}, 0);
    ADD_FAILURE() << "an int64 file was taken as an input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("int64 data; an input takes float32"), std::string::npos) << e.what();
  }
  fs::remove(p);
}

TEST(Npy, MissingFileNamesThePath) {
  try {
    read_npy("/nonexistent/dir/x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.npy"), std::string::npos);
  }
}

Graph two_input_graph() {
  Graph g;
  g.source = "test";
  g.values = {{"a", DType::kFloat32, {2, 3}, kNoNode}, {"b", DType::kFloat32, {4}, kNoNode}};
  g.inputs = {0, 1};
  g.input_names = {"a", "b"};
  return g;
}

TEST(ModelInputs, DeterministicPatternIsDocumentedFormula) {
  NpyArray a = deterministic_input({2, 3}, 2, 1);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2, 3}));
  for (int j = 0; j < 12; ++j) {
    EXPECT_FLOAT_EQ(a.f32()[j], static_cast<float>((j * 37 + 101) % 256) / 255.0f);
  }
}

TEST(ModelInputs, PatternBatchAndFileChecks) {
  Graph g = two_input_graph();
  ModelInputs in = prepare_inputs(g, {}, 3);
  EXPECT_EQ(in.batch, 3);
  EXPECT_EQ(in.arrays[1].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(in.sources[0], "pattern");
  EXPECT_THROW(prepare_inputs(g, {{"c", "x.npy"}}, 1), Error);

  const fs::path p = fs::temp_directory_path() / ("nnd_in_" + std::to_string(::getpid()) + ".npy");
  const float data[8] = {};
  write_npy_f32(p.string(), {2, 4}, data);
  ModelInputs from_file = prepare_inputs(g, {{"b", p.string()}}, 0);
  EXPECT_EQ(from_file.batch, 2);
  EXPECT_EQ(from_file.arrays[0].shape, (std::vector<int64_t>{2, 2, 3}));  // pattern follows
  try {
    prepare_inputs(g, {{"a", p.string()}}, 0);  // (2, 4) does not fit (batch, 2, 3)
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit input 'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(prepare_inputs(g, {{"b", p.string()}}, 5), Error);  // batch disagrees
  fs::remove(p);
}

}  // namespace
}  // namespace nnd::test
