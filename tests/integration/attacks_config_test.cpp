// Issue 36, attack 7: a config error quotes the offending token only, never the file.
#include <gtest/gtest.h>

#include "attack_support.h"

namespace {

using namespace nnd::integ;
using namespace nnd::integ::attack;

// ---- 7. A config error quotes the offending token only, never the file ------------------------

TEST(Attack, ConfigErrorsQuoteNoFileContents) {
  Daemon d("shadow");
  const fs::path shadow = d.dir() / "shadow";
  std::string text;
  for (const char* user : {"root", "daemon", "nao", "booster"}) {
    text += std::string(user) + ":$6$Sa1t" + user + "$SECRETHASH" + user + "q8Jp2LmZ0vXw:19876:0:99999:7:::\n";
  }
  {
    std::ofstream(shadow) << text;
  }
  // nnd --check, and the daemon starting on it (its log and systemd's STATUS=).
  Child check = fork_child([&](const ChildIo&) {
    const int fd = ::open((d.dir() / "check.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl(kNnd.c_str(), kNnd.c_str(), "--check", shadow.c_str(), static_cast<char*>(nullptr));
    return 127;
  });
  const ChildResult cr = collect(check, 20000);
  EXPECT_EQ(cr.code, 1);
  EXPECT_FALSE(d.start(shadow, 10000));
  const std::string out = read_text(d.dir() / "check.out") + d.log();
  EXPECT_EQ(out.find("SECRETHASH"), std::string::npos) << out;
  const size_t quoted = longest_quoted(text, out);
  EXPECT_LE(quoted, 8u) << out;
  figure("config pointed at a shadow-format file: longest run of its bytes quoted", std::to_string(quoted) + " bytes");
  // A typo'd value still names its token (short, one line).
  const fs::path bad = d.write_config("bad.yaml", ball(), "  workers: many\n");
  Child check2 = fork_child([&](const ChildIo&) {
    const int fd = ::open((d.dir() / "check2.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execl(kNnd.c_str(), kNnd.c_str(), "--check", bad.c_str(), static_cast<char*>(nullptr));
    return 127;
  });
  collect(check2, 20000);
  EXPECT_NE(read_text(d.dir() / "check2.out").find("'many'"), std::string::npos);
}

}  // namespace
