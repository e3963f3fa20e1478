// The daemon's side of "who talks to whom" (issue 18, defect 4): before it binds, the server
// checks the socket's directory (owned by root or its own user, not writable by others unless
// sticky) and what is already at the path (a live socket of another user, or a file that is not a
// socket, is refused with a message naming the owner; a socket nobody answers on is replaced).
// Tests that need a second user switch a forked child to `nobody` and skip when not root.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "daemon/ipc/server.h"

namespace {

namespace fs = std::filesystem;
using nnd::daemon::ModelRegistry;
using nnd::daemon::ModelSet;
using nnd::daemon::Server;
using nnd::daemon::ServerOptions;

struct User {
  uid_t uid;
  gid_t gid;
};

std::optional<User> nobody() {
  if (geteuid() != 0) return std::nullopt;
  const passwd* pw = getpwnam("nobody");
  if (!pw || pw->pw_uid == 0) return std::nullopt;
  return User{pw->pw_uid, pw->pw_gid};
}

// A fresh directory of the test's user, mode `mode`.
class TempDir {
 public:
  explicit TempDir(mode_t mode) {
    char t[] = "/tmp/nnd-sock-dir-XXXXXX";
    if (!mkdtemp(t)) throw std::runtime_error("mkdtemp");
    path_ = t;
    chmod(path_.c_str(), mode);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string socket() const { return path_ + "/nnd.sock"; }

 private:
  std::string path_;
};

// A Server on `socket_path` with no models; start() is what the tests look at.
struct EmptyServer {
  ModelRegistry registry;
  std::unique_ptr<Server> server;
  explicit EmptyServer(const std::string& socket_path) {
    auto set = std::make_shared<ModelSet>();
    set->generation = 1;
    registry.publish(set);
    ServerOptions o;
    o.endpoint = socket_path;
    server = std::make_unique<Server>(o, registry, [](nnd::daemon::LogLevel, const std::string&) {});
  }
};

// The message start() throws with, or "" when it starts.
std::string start_error(const std::string& socket_path) {
  EmptyServer s(socket_path);
  try {
    s.server->start();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A process listening on `path` until killed: of `who` (the impostor, or a daemon of another
// user), or of the test's own user; named `program` (/proc/PID/comm) when given.
class ForeignListener {
 public:
  ForeignListener(const std::string& path, std::optional<User> who, const char* program = nullptr) {
    int ready[2];
    if (pipe(ready) != 0) throw std::runtime_error("pipe");
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      char ok = '0';
      if (!who || (setgroups(1, &who->gid) == 0 && setgid(who->gid) == 0 && setuid(who->uid) == 0)) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (program) prctl(PR_SET_NAME, program);
        const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
        if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 4) == 0) {
          ok = '1';
        }
      }
      (void)!write(ready[1], &ok, 1);
      if (ok != '1') _exit(1);
      for (;;) pause();
    }
    close(ready[1]);
    pollfd p{ready[0], POLLIN, 0};
    char ok = '0';
    ok_ = poll(&p, 1, 10000) == 1 && read(ready[0], &ok, 1) == 1 && ok == '1';
    close(ready[0]);
  }
  ~ForeignListener() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return ok_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool ok_ = false;
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(SocketSetup, DirectoryOfAnotherUserIsRefused) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  TempDir dir(0755);
  ASSERT_EQ(chown(dir.path().c_str(), who->uid, who->gid), 0);
  const std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, "socket directory " + dir.path())) << why;
  EXPECT_TRUE(contains(why, "user 'nobody' (uid " + std::to_string(who->uid) + ")")) << why;
  // What to do names the way out, not the folder it just refused.
  EXPECT_TRUE(contains(why, "run this daemon as user 'nobody'")) << why;
  EXPECT_FALSE(contains(why, "e.g. " + dir.path())) << why;
  EXPECT_FALSE(fs::exists(dir.socket()));
}

// Issue 37: a second `sudo nnd` while the service (User=nnd) serves in /run/nnd, which belongs to
// the service's user. What stops it is the daemon already running, and that is what it says,
// not that the folder is wrong.
TEST(SocketSetup, SecondDaemonInTheServiceUsersFolderSaysOneIsRunning) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  TempDir dir(0755);  // like /run/nnd: RuntimeDirectory= of the service's user
  ASSERT_EQ(chown(dir.path().c_str(), who->uid, who->gid), 0);
  ForeignListener service(dir.socket(), *who, "nnd");
  ASSERT_TRUE(service.ok());
  const std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, dir.socket() + " is in use: another nnd (pid " +
                                std::to_string(service.pid()) + ", user 'nobody' (uid " +
                                std::to_string(who->uid) + ")) is serving on it"))
      << why;
  EXPECT_TRUE(contains(why, "systemctl stop nnd")) << why;
  EXPECT_TRUE(contains(why, "another endpoint")) << why;
  EXPECT_FALSE(contains(why, "socket directory")) << why;
  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0);  // the running daemon's socket is left alone
  EXPECT_EQ(st.st_uid, who->uid);
}

// The same in a folder the daemon may use: a live socket of its own user is another daemon (or
// another program of that user: named by its program name).
TEST(SocketSetup, LiveSocketOfTheDaemonsUserSaysTheSocketIsInUse) {
  TempDir dir(0755);
  {
    ForeignListener first(dir.socket(), std::nullopt, "nnd");
    ASSERT_TRUE(first.ok());
    const std::string why = start_error(dir.socket());
    EXPECT_TRUE(contains(why, dir.socket() + " is in use: another nnd (pid " +
                                  std::to_string(first.pid()) + ", ")) << why;
  }
  fs::remove(dir.socket());
  ForeignListener other(dir.socket(), std::nullopt, "robot_vision");
  ASSERT_TRUE(other.ok());
  const std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, dir.socket() + " is in use: pid " + std::to_string(other.pid()) +
                                " ('robot_vision', ")) << why;
  EXPECT_FALSE(contains(why, "another nnd")) << why;
}

TEST(SocketSetup, DirectoryWritableByOthersIsRefusedUnlessSticky) {
  TempDir dir(0777);
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);  // whatever the umask
  std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, "writable by everyone (mode 0777)")) << why;
  EXPECT_TRUE(contains(why, "chmod go-w " + dir.path())) << why;

  ASSERT_EQ(chmod(dir.path().c_str(), 0775), 0);
  why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, "writable by its group (mode 0775)")) << why;

  // Sticky, like /tmp: only a file's owner may remove or rename it there.
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  EXPECT_EQ(start_error(dir.socket()), "");
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  EXPECT_EQ(start_error(dir.socket()), "");
}

// Somebody else bound the path first and is listening: refused, naming who, and left alone.
TEST(SocketSetup, LiveSocketOfAnotherUserIsRefused) {
  const auto who = nobody();
  if (!who) GTEST_SKIP() << "needs root and a 'nobody' user";
  TempDir dir(01777);  // like /tmp: the impostor can bind there
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  ForeignListener impostor(dir.socket(), *who);
  ASSERT_TRUE(impostor.ok());
  const std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, "live socket of user 'nobody' (uid " + std::to_string(who->uid) +
                                "), served by pid " + std::to_string(impostor.pid())))
      << why;
  EXPECT_TRUE(contains(why, "another program has taken the endpoint")) << why;
  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0);  // not removed
  EXPECT_EQ(st.st_uid, who->uid);
}

TEST(SocketSetup, FileThatIsNotASocketIsRefusedNamingItsOwner) {
  TempDir dir(0755);
  std::ofstream(dir.socket()) << "not a socket";
  const std::string why = start_error(dir.socket());
  EXPECT_TRUE(contains(why, dir.socket() + " exists and is not a socket (a regular file of ")) << why;
  EXPECT_TRUE(contains(why, "(uid " + std::to_string(geteuid()) + ")")) << why;
  EXPECT_TRUE(fs::is_regular_file(dir.socket()));
}

// A socket nobody answers on (a daemon killed with -9) is replaced, whoever owned it.
TEST(SocketSetup, StaleSocketIsReplaced) {
  TempDir dir(0755);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", dir.socket().c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  close(fd);  // the file stays, nobody listens
  if (const auto who = nobody()) {
    ASSERT_EQ(lchown(dir.socket().c_str(), who->uid, who->gid), 0);
  }
  EXPECT_EQ(start_error(dir.socket()), "");
}

// listen() binds before start() (the daemon does it before dropping root); a server destroyed
// without ever starting removes the socket it bound.
TEST(SocketSetup, ListenBeforeStartAndCleanUpWithoutStart) {
  TempDir dir(0755);
  {
    EmptyServer s(dir.socket());
    s.server->listen();
    struct stat st {};
    ASSERT_EQ(stat(dir.socket().c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    s.server->listen();  // idempotent
  }
  EXPECT_FALSE(fs::exists(dir.socket()));
  {
    EmptyServer s(dir.socket());
    s.server->listen();
    s.server->start();  // uses the bound socket
    EXPECT_EQ(s.server->socket_path(), dir.socket());
  }
  EXPECT_FALSE(fs::exists(dir.socket()));
}

}  // namespace
