// libnnclient checks who listens on the endpoint before it says anything (issue 18, defect 4):
// an impostor running as another user on the /tmp fallback path is refused with
// NNCLIENT_E_ACCESS and a message naming it; a user trusted through NNCLIENT_TRUSTED_USERS or
// through a socket directory only that user and root can write is accepted. The impostor is the
// fake daemon switched to `nobody`, so these tests need root (CI runs as root) and skip otherwise.
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "client/nnclient.h"
#include "fake_daemon.h"

namespace nnd::test {
namespace {

namespace fs = std::filesystem;

class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    const char* old = getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~Env() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

struct Nobody {
  uid_t uid = 0;
  gid_t gid = 0;
};

// nobody's ids, or nothing when the test cannot switch users.
std::optional<Nobody> nobody() {
  if (geteuid() != 0) return std::nullopt;
  const passwd* pw = getpwnam("nobody");
  if (!pw || pw->pw_uid == 0) return std::nullopt;
  return Nobody{pw->pw_uid, pw->pw_gid};
}

FakeDaemonConfig impostor(const std::string& path, const Nobody& who) {
  FakeDaemonConfig cfg;
  cfg.socket_path = path;
  cfg.listen_uid = static_cast<int>(who.uid);
  cfg.listen_gid = static_cast<int>(who.gid);
  return cfg;
}

// Infers on "double" once (the connection really works).
void expect_serves(nnclient_t* c) {
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "double", &info), NNCLIENT_OK) << nnclient_last_error(c);
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  const void* in[] = {x};
  void* out[] = {y};
  ASSERT_EQ(nnclient_infer(c, &info, in, 1, out, 5'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_EQ(y[3], 8.0f);
}

// The endpoint name resolves to /tmp/<name>.sock (the fallback; NND_RUNTIME_DIR=/tmp makes the
// test independent of whether /run/nnd exists), where any user can bind first.
TEST(DaemonIdentity, ImpostorOnTheTmpFallbackIsRefused) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  const std::string name = "nnclient-impostor-" + std::to_string(getpid());
  const std::string path = "/tmp/" + name + ".sock";
  Env runtime("NND_RUNTIME_DIR", "/tmp"), trusted("NNCLIENT_TRUSTED_USERS", nullptr);
  FakeDaemon fake(impostor(path, *who));

  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(name.c_str(), &st);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(st, NNCLIENT_E_ACCESS);
  const std::string why = nnclient_last_error(nullptr);
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("uid " + std::to_string(who->uid)), std::string::npos) << why;
  EXPECT_NE(why.find("'nobody'"), std::string::npos) << why;
  EXPECT_NE(why.find("NNCLIENT_TRUSTED_USERS=nobody"), std::string::npos) << why;
  nnclient_close(c);
  unlink(path.c_str());
}

// Naming the user (by name or by number, in a list) makes the same daemon acceptable.
TEST(DaemonIdentity, UserNamedInTheEnvironmentIsTrusted) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  const std::string path = "/tmp/nnclient-trusted-" + std::to_string(getpid()) + ".sock";
  FakeDaemon fake(impostor(path, *who));
  for (const std::string& list : {std::string("nobody"), "nosuchuser," + std::to_string(who->uid)}) {
    Env trusted("NNCLIENT_TRUSTED_USERS", list.c_str());
    nnclient_status st = NNCLIENT_OK;
    nnclient_t* c = nnclient_open(path.c_str(), &st);
    ASSERT_NE(c, nullptr) << list << ": " << nnclient_last_error(nullptr);
    expect_serves(c);
    nnclient_close(c);
  }
  unlink(path.c_str());
}

// A directory owned by the daemon's user, in a chain of directories only root can write (like
// /run/nnd under /run), vouches for its owner; the same directory under /tmp does not (anyone
// could have made it).
TEST(DaemonIdentity, DirectoryOwnerIsTrustedOnlyBelowDirectoriesNobodyElseWrites) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  Env trusted("NNCLIENT_TRUSTED_USERS", nullptr);
  struct stat run {};
  if (stat("/run", &run) != 0 || run.st_uid != 0 || (run.st_mode & (S_IWGRP | S_IWOTH))) {
    GTEST_SKIP() << "/run is not a directory only root can write";
  }
  struct Case {
    fs::path parent;
    bool trusted;
  };
  const std::string tag = "nnclient-dir-" + std::to_string(getpid());
  for (const Case& k : {Case{"/run", true}, Case{"/tmp", false}}) {
    const fs::path dir = k.parent / tag;
    fs::remove_all(dir);
    ASSERT_TRUE(fs::create_directory(dir)) << dir;
    ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
    ASSERT_EQ(chown(dir.c_str(), who->uid, who->gid), 0);
    const std::string path = (dir / "nnd.sock").string();
    {
      FakeDaemon fake(impostor(path, *who));
      nnclient_status st = NNCLIENT_OK;
      nnclient_t* c = nnclient_open(path.c_str(), &st);
      if (k.trusted) {
        EXPECT_NE(c, nullptr) << dir << ": " << nnclient_last_error(nullptr);
        if (c) expect_serves(c);
      } else {
        EXPECT_EQ(c, nullptr) << dir;
        EXPECT_EQ(st, NNCLIENT_E_ACCESS) << dir;
      }
      nnclient_close(c);
    }
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace nnd::test
