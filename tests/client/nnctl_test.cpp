// nnctl as a user meets it, against the fake daemon: output, written files and exit codes.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/io/npy.h"
#include "fake_daemon.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;
const fs::path kNnctl = fs::path(NND_BINARY_DIR) / "tools" / "nnctl" / "nnctl";

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args) {
  Result r;
  const std::string cmd = kNnctl.string() + " " + args + " 2>&1 </dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool has(const Result& r, const std::string& s) { return r.output.find(s) != std::string::npos; }

class NnctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kNnctl)) GTEST_SKIP() << kNnctl << " not built";
    cfg_.socket_path = fresh_socket_path("nnctl");
    dir_ = fs::path(cfg_.socket_path).parent_path();
    daemon_.start(cfg_);
    ep_ = "--endpoint " + cfg_.socket_path + " ";
  }
  void TearDown() override {
    daemon_.kill();
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  FakeDaemonConfig cfg_;
  FakeDaemon daemon_;
  fs::path dir_;
  std::string ep_;
};

TEST_F(NnctlTest, ModelsStatsTopReload) {
  Result r = run(ep_ + "models");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "double  version 1  engine fake")) << r.output;
  EXPECT_TRUE(has(r, "input  x")) << r.output;
  EXPECT_TRUE(has(r, "(4,)")) << r.output;
  EXPECT_TRUE(has(r, "uint8")) << r.output;
  EXPECT_TRUE(has(r, "output copy")) << r.output;
  // The fake plays a daemon older than DAEMON_INFO: models still lists, with a note.
  EXPECT_TRUE(has(r, "version unknown: the daemon is older than nnctl")) << r.output;
  r = run(ep_ + "stats --json");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "NNCLIENT_E_PROTOCOL: the daemon is older than this library")) << r.output;
  r = run(ep_ + "metrics");
  EXPECT_EQ(r.status, 1) << r.output;

  r = run(ep_ + "stats");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "MEAN BATCH")) << r.output;
  EXPECT_TRUE(has(r, "P99 MS")) << r.output;
  EXPECT_TRUE(has(r, "0.900")) << r.output;  // p99 of the fake: 900 us
  EXPECT_TRUE(has(r, "pair")) << r.output;

  r = run(ep_ + "top --once");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "nnd top")) << r.output;
  EXPECT_TRUE(has(r, "double")) << r.output;
  EXPECT_FALSE(has(r, "\x1b[2J")) << "--once must not clear the screen";

  r = run(ep_ + "reload");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "reload accepted: reloaded 2 models")) << r.output;
}

TEST_F(NnctlTest, InferWritesOutputsNamedLikeNnrun) {
  const fs::path in = dir_ / "x.npy";
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i);
  write_npy_f32(in.string(), {3, 4}, x.data());
  const fs::path out = dir_ / "out";
  Result r = run(ep_ + "infer double --input x=" + in.string() + " --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const NpyArray y = read_npy((out / "y.npy").string());
  EXPECT_EQ(y.shape, (std::vector<int64_t>{3, 4}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y.f32()[i], 2 * x[i]);

  // Second input without a file: the deterministic pattern; two outputs.
  r = run(ep_ + "infer pair --batch 2 --output-dir " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(has(r, "from pattern")) << r.output;
  const NpyArray copy = read_npy((out / "copy.npy").string());
  EXPECT_EQ(copy.shape, (std::vector<int64_t>{2, 2}));
  // pattern input 1 (b), element j: ((j*37 + 101) mod 256) / 255
  EXPECT_FLOAT_EQ(copy.f32()[1], static_cast<float>((1 * 37 + 101) % 256) / 255.0f);
  EXPECT_TRUE(fs::exists(out / "sum.npy"));
}

TEST_F(NnctlTest, ExitCodes) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("--bogus models").status, 2);
  EXPECT_EQ(run(ep_ + "infer").status, 2);  // MODEL missing
  Result r = run(ep_ + "infer double --input nonsense");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(run("--help").status, 0);
  EXPECT_TRUE(has(run("top --help"), "--once"));

  r = run(ep_ + "infer nosuch");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "NNCLIENT_E_UNKNOWN_MODEL")) << r.output;
  EXPECT_TRUE(has(r, "served: double, pair")) << r.output;
  r = run(ep_ + "infer doubel");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "did you mean 'double'?")) << r.output;

  const fs::path bad = dir_ / "bad.npy";
  std::vector<float> v(6);
  write_npy_f32(bad.string(), {2, 3}, v.data());
  r = run(ep_ + "infer double --input x=" + bad.string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "does not fit input 'x'")) << r.output;

  daemon_.kill();
  r = run(ep_ + "stats");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(has(r, "NNCLIENT_E_DAEMON_NOT_RUNNING")) << r.output;
}

}  // namespace
}  // namespace nnd::test
