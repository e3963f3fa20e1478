// The isolated model validator (daemon/registry/model_validator.h) and the sealed copy of a model
// file it checks (daemon/registry/sealed_file.h): a file that crashes libhdf5 is reported as a
// crash of the child, never of the calling process; the child gets only its three descriptors,
// default signals and its limits; a hang is killed at the timeout; the daemon loads exactly the
// bytes the child checked.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/model_file.h"
#include "core/util/error.h"
#include "daemon/registry/model_validator.h"
#include "daemon/registry/sealed_file.h"
#include "tests/support/test_temp_dir.h"

namespace fs = std::filesystem;
using nnd::daemon::SealedFile;
using nnd::daemon::ValidationVerdict;
using nnd::daemon::ValidatorOptions;
using Outcome = nnd::daemon::ValidationVerdict::Outcome;

namespace {

const fs::path kData = NND_TEST_DATA_DIR;
const fs::path kSource = NND_SOURCE_DIR;
const fs::path kGood = kSource / "examples" / "models" / "ball_patch.h5";
const fs::path kCrasher = kData / "crashers" / "model_config_heap_index.h5";

class ModelValidatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = nnd::test::fresh_test_dir("nnd_validator");
    options_.executable = NND_EXE;  // our own /proc/self/exe is this test program
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A shell script standing in for nnd (to see what a child is given, or to hang).
  std::string script(const std::string& name, const std::string& body) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }

  ValidationVerdict validate(const fs::path& file) {
    const SealedFile sealed = SealedFile::read(file.string(), uint64_t{1} << 30);
    return nnd::daemon::validate_in_child(sealed, file.string(), options_);
  }

  fs::path dir_;
  ValidatorOptions options_;
};

}  // namespace

TEST_F(ModelValidatorTest, AValidFileIsValid) {
  const ValidationVerdict v = validate(kGood);
  EXPECT_EQ(v.outcome, Outcome::kValid) << v.error << " / " << v.last_words;
  EXPECT_EQ(v.summary, "1 input(s), 1 output(s), 17 node(s)");
  EXPECT_GT(v.wall_ms, 0.0);
}

// An ordinary loader error comes back word for word as the in-process loader gives it.
TEST_F(ModelValidatorTest, ALoaderErrorIsTheLoadersMessage) {
  const fs::path bad = kData / "broken" / "invalid_json.h5";
  std::string in_process;
  try {
    nnd::load_model(bad.string());
  } catch (const nnd::Error& e) {
    in_process = e.what();
  }
  ASSERT_FALSE(in_process.empty());
  const ValidationVerdict v = validate(bad);
  EXPECT_EQ(v.outcome, Outcome::kInvalid);
  EXPECT_EQ(v.error, in_process);
  EXPECT_EQ(nnd::daemon::validation_failure_message(v, bad.string(), options_), in_process);
}

// The point of it all: bytes that make libhdf5 dereference garbage (H5HG_read) crash the child.
// The same load in this process would end the test program with SIGSEGV.
TEST_F(ModelValidatorTest, AFileThatCrashesLibhdf5CrashesOnlyTheChild) {
  const ValidationVerdict v = validate(kCrasher);
  EXPECT_EQ(v.outcome, Outcome::kCrashed) << v.error;
  EXPECT_EQ(v.signal, SIGSEGV);
  const std::string m = nnd::daemon::validation_failure_message(v, kCrasher.string(), options_);
  EXPECT_NE(m.find(kCrasher.string() + ": crashed the model validator (SIGSEGV)"), std::string::npos)
      << m;
}

TEST_F(ModelValidatorTest, AHangingChildIsKilledAtTheTimeout) {
  options_.executable = script("hang.sh", "exec sleep 600\n");
  options_.timeout_ms = 200;
  const ValidationVerdict v = validate(kGood);
  EXPECT_EQ(v.outcome, Outcome::kTimedOut);
  EXPECT_NE(nnd::daemon::validation_failure_message(v, "f.h5", options_)
                .find("f.h5: the model validator did not finish within 0.2 s and was killed"),
            std::string::npos);
}

// The child sees its three descriptors only (stdin: the sealed copy; stdout and stderr: one
// pipe), even one the daemon holds without close-on-exec, and no blocked or ignored signal
// although the calling thread blocks SIGHUP and the process ignores SIGPIPE, as the daemon does.
TEST_F(ModelValidatorTest, TheChildGetsOnlyItsDescriptorsAndDefaultSignals) {
  options_.executable = script(
      "inspect.sh",
      "in=$(readlink /proc/$$/fd/0); out=$(readlink /proc/$$/fd/1); err=$(readlink /proc/$$/fd/2)\n"
      "leak=no; [ -e /proc/$$/fd/57 ] && leak=yes\n"
      "blk=$(grep SigBlk /proc/$$/status | tr -d ' \\t'); ign=$(grep SigIgn /proc/$$/status | tr -d ' \\t')\n"
      "same=no; [ \"$out\" = \"$err\" ] && same=yes\n"
      "echo \"something on stderr\" >&2\n"
      "echo \"nnd-validate: valid stdin=$in pipe=$same leak=$leak $blk $ign args=$*\"\n");
  const int open_fd = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC on purpose
  ASSERT_GE(::dup2(open_fd, 57), 0);
  ::close(open_fd);
  sigset_t hup, old;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, &old);
  const auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  const ValidationVerdict v = validate(kGood);
  std::signal(SIGPIPE, old_pipe);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(57);

  ASSERT_EQ(v.outcome, Outcome::kValid) << v.error << " / " << v.last_words;
  EXPECT_NE(v.summary.find("stdin=/memfd:nnd-model"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("pipe=yes"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("leak=no"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("SigBlk:0000000000000000"), std::string::npos) << v.summary;
  // No standard signal ignored (SIGPIPE above all); glibc's posix_spawn itself leaves its two
  // internal real-time signals (32, 33) ignored, which concerns only glibc.
  const size_t ign = v.summary.find("SigIgn:");
  ASSERT_NE(ign, std::string::npos) << v.summary;
  EXPECT_EQ(std::stoull(v.summary.substr(ign + 7, 16), nullptr, 16) & 0x7fffffffull, 0u)
      << v.summary;
  EXPECT_NE(v.summary.find("args=--validate-model " + kGood.string() + " --cpu-seconds 20"),
            std::string::npos)
      << v.summary;
  EXPECT_EQ(v.last_words, "something on stderr");
}

// A child that exits without a verdict is no pass.
TEST_F(ModelValidatorTest, NoVerdictIsNoPass) {
  options_.executable = script("silent.sh", "echo 'nnd-validate: valid' >&2; exit 3\n");
  ValidationVerdict v = validate(kGood);
  EXPECT_EQ(v.outcome, Outcome::kFailedToRun);
  EXPECT_NE(v.error.find("status 3 without a verdict"), std::string::npos) << v.error;

  options_.executable = (dir_ / "missing").string();
  v = validate(kGood);
  EXPECT_EQ(v.outcome, Outcome::kFailedToRun);
  EXPECT_NE(v.error.find("cannot start"), std::string::npos) << v.error;
  EXPECT_NE(nnd::daemon::validation_failure_message(v, "f.h5", options_)
                .find("daemon.validate_models: in_process"),
            std::string::npos);
}

// The child limits its own address space before it reads the file: far too little memory makes
// the load fail there (reported), not in the daemon.
TEST_F(ModelValidatorTest, TheAddressSpaceLimitApplies) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer builds set no address-space limit";
#endif
  options_.address_space_base_bytes = 1 << 20;
  options_.address_space_per_file_byte = 0;
  const ValidationVerdict v = validate(kGood);
  EXPECT_FALSE(v.valid());
}

// The window between the child's check and the daemon's load is closed: a file replaced on disk
// after it was read changes nothing, the child and the loader both see the bytes read first.
TEST_F(ModelValidatorTest, TheLoaderLoadsTheBytesTheChildChecked) {
  const fs::path f = dir_ / "model.h5";
  fs::copy_file(kGood, f);
  const SealedFile sealed = SealedFile::read(f.string(), uint64_t{1} << 30);
  fs::copy_file(kCrasher, f, fs::copy_options::overwrite_existing);
  const ValidationVerdict v = nnd::daemon::validate_in_child(sealed, f.string(), options_);
  EXPECT_EQ(v.outcome, Outcome::kValid) << v.error;
  const nnd::Graph g = nnd::load_model_bytes(sealed.data(), sealed.size(), f.string());
  EXPECT_EQ(g.nodes.size(), 17u);

  // Sealed: not even a process holding the descriptor can change the copy.
  EXPECT_EQ(::pwrite(sealed.fd(), "x", 1, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::ftruncate(sealed.fd(), 0), -1);
}

TEST_F(ModelValidatorTest, TheGraphLoaderValidatesThenLoads) {
  std::vector<std::string> logged;
  const nnd::daemon::GraphLoader load = nnd::daemon::isolated_graph_loader(
      options_, [&](nnd::daemon::LogLevel, const std::string& m) { logged.push_back(m); });
  nnd::daemon::ModelSettings s;
  s.name = "ball";
  s.path = kGood.string();
  const nnd::Graph g = load(s);
  const nnd::Graph direct = nnd::load_model(kGood.string());
  EXPECT_EQ(g.nodes.size(), direct.nodes.size());
  EXPECT_EQ(g.input_names, direct.input_names);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("model 'ball': 78632 bytes validated in a child process in "),
            std::string::npos)
      << logged[0];

  s.path = kCrasher.string();
  try {
    load(s);
    ADD_FAILURE() << "loaded the crashing file";
  } catch (const nnd::Error& e) {
    EXPECT_NE(std::string(e.what()).find("crashed the model validator (SIGSEGV)"),
              std::string::npos)
        << e.what();
  }
}

TEST(SealedFileTest, RefusesWhatIsNotARegularFileWithoutBlocking) {
  const fs::path fifo = fs::temp_directory_path() / ("nnd_sealed_fifo_" + std::to_string(::getpid()));
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(SealedFile::read(fifo.string(), 1 << 20), nnd::Error);  // returns: no writer needed
  fs::remove(fifo);
  EXPECT_THROW(SealedFile::read("/dev/zero", 1 << 20), nnd::Error);
  EXPECT_THROW(SealedFile::read(NND_SOURCE_DIR, 1 << 20), nnd::Error);
  EXPECT_THROW(SealedFile::read("/nonexistent/model.h5", 1 << 20), nnd::Error);
  try {
    SealedFile::read(kGood.string(), 1000);
    ADD_FAILURE() << "read a file over the limit";
  } catch (const nnd::Error& e) {
    EXPECT_NE(std::string(e.what()).find("78632 bytes"), std::string::npos) << e.what();
  }
}
