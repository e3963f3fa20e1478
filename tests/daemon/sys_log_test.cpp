// daemon/sys/log: the line format on a plain stderr and on a journald stream.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "daemon/sys/log.h"

namespace nnd::daemon {
namespace {

// Runs `fn` with stderr redirected to a fresh file; `journal` sets JOURNAL_STREAM to that file's
// device:inode, as systemd does for a unit whose stderr is the journal. Returns what was written.
template <typename Fn>
std::string capture_stderr(bool journal, Fn fn) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nnd_log_test_" + std::to_string(getpid()))).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  struct stat st {};
  ::fstat(STDERR_FILENO, &st);
  if (journal) {
    const std::string v = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    ::setenv("JOURNAL_STREAM", v.c_str(), 1);
  } else {
    ::unsetenv("JOURNAL_STREAM");
  }
  detect_journal();
  set_log_level(LogLevel::kInfo);
  fn();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::unsetenv("JOURNAL_STREAM");
  detect_journal();
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::filesystem::remove(path);
  return ss.str();
}

TEST(SysLog, JournalLinesCarryOnlyThePriority) {
  // journald prefixes "nnd[pid]: " itself: a program name in the line would show twice.
  const std::string out = capture_stderr(true, [] {
    log(LogLevel::kNotice, "serving 3 models");
    log(LogLevel::kWarning, "two\nlines");
  });
  EXPECT_EQ(out, "<5>serving 3 models\n<4>two\n<4>lines\n");
}

TEST(SysLog, PlainStderrNamesTheProgramAndLevel) {
  const std::string out = capture_stderr(false, [] { log(LogLevel::kNotice, "serving"); });
  EXPECT_EQ(out, "nnd[notice]: serving\n");
}

}  // namespace
}  // namespace nnd::daemon
