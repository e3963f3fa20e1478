// The header-only C++ wrapper (client/nnclient.hpp) against the fake daemon.
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "client/nnclient.hpp"
#include "fake_daemon.h"

namespace nnd::test {
namespace {

using namespace std::chrono_literals;

class WrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_.socket_path = fresh_socket_path("wrap");
    daemon_.start(cfg_);
  }
  void TearDown() override {
    daemon_.kill();
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(cfg_.socket_path).parent_path(), ec);
  }
  FakeDaemonConfig cfg_;
  FakeDaemon daemon_;
};

TEST(Wrapper, OpenFailureThrowsWithStatus) {
  const std::string path = fresh_socket_path("none");
  try {
    nnclient::Client c(path);
    FAIL() << "no exception";
  } catch (const nnclient::Error& e) {
    EXPECT_EQ(e.status(), NNCLIENT_E_DAEMON_NOT_RUNNING);
    EXPECT_NE(std::string(e.what()).find("NNCLIENT_E_DAEMON_NOT_RUNNING"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST_F(WrapperTest, InferZeroCopyListStatsReload) {
  nnclient::Client client(cfg_.socket_path);
  nnclient::Client moved = std::move(client);  // move-only RAII
  EXPECT_EQ(client.get(), nullptr);

  const nnclient::ModelInfo dbl = moved.model_info("double");
  EXPECT_EQ(dbl.name(), "double");
  ASSERT_EQ(dbl.inputs().size(), 1u);
  EXPECT_EQ(nnclient::dims_string(dbl.input(0)), "(4,)");

  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8}, y(8);
  moved.infer(dbl, {nnclient::as_bytes(x)}, 2, {nnclient::as_writable_bytes(y)}, 1s);
  EXPECT_EQ(y[7], 16.0f);

  std::vector<float> too_small(4);
  try {
    moved.infer(dbl, {nnclient::as_bytes(x)}, 2, {nnclient::as_writable_bytes(too_small)}, 1s);
    FAIL() << "no exception";
  } catch (const nnclient::Error& e) {
    EXPECT_EQ(e.status(), NNCLIENT_E_SHAPE);
  }

  const nnclient::ModelInfo pair = moved.model_info("pair");
  {
    nnclient::Request r = moved.begin(pair, 2);
    // A view of another element type than the input's is refused, not handed out.
    try {
      (void)r.input<float>(0);
      FAIL() << "input<float> of a uint8 input";
    } catch (const nnclient::Error& e) {
      EXPECT_EQ(e.status(), NNCLIENT_E_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("input 0 is uint8, not float32: ask for input<uint8_t>(0)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_THROW((void)r.input<uint8_t>(1), nnclient::Error);
    EXPECT_EQ(r.input<std::byte>(1).size(), 16u);  // raw bytes of any input
    std::span<uint8_t> a = r.input<uint8_t>(0);
    std::span<float> b = r.input<float>(1);
    ASSERT_EQ(a.size(), 6u);
    ASSERT_EQ(b.size(), 4u);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = 1.0f;
    r.submit(100ms);
    r.wait(1s);
    std::span<const float> sum = r.output(0);
    ASSERT_EQ(sum.size(), 2u);
    EXPECT_EQ(sum[0], 0 + 1 + 2 + 2.0f);
    EXPECT_EQ(sum[1], 3 + 4 + 5 + 2.0f);
    EXPECT_THROW(r.output(5), nnclient::Error);
    EXPECT_THROW((void)r.output<uint8_t>(0), nnclient::Error);  // outputs are float32
  }  // released here

  EXPECT_THROW(moved.model_info("missing"), nnclient::Error);
  const std::vector<nnclient::ModelInfo> all = moved.list_models();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].name(), "pair");
  const std::vector<nnclient::Stats> stats = moved.stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].requests, 1u);
  EXPECT_EQ(moved.reload(), "reloaded 2 models");
}

TEST_F(WrapperTest, TryWaitReportsTimeoutWithoutThrowing) {
  FakeDaemonConfig cfg = cfg_;
  cfg.never_answer = true;
  daemon_.start(cfg);
  nnclient::Client client(cfg_.socket_path);
  const nnclient::ModelInfo dbl = client.model_info("double");
  nnclient::Request r = client.begin(dbl, 1);
  r.submit();
  EXPECT_EQ(r.try_wait(10ms), NNCLIENT_E_TIMEOUT);
  try {
    r.wait(10ms);
    FAIL() << "no exception";
  } catch (const nnclient::Error& e) {
    EXPECT_EQ(e.status(), NNCLIENT_E_TIMEOUT);
  }
}

}  // namespace
}  // namespace nnd::test
