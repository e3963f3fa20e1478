// What the attack tests (tests/integration/attacks_*_test.cpp) share: each replays an attack of
// issue 36 against a real `nnd` on a private endpoint, bounded in time and count, and prints the
// figure it gives as "FIGURE <name>: <value>" (docs/soak.md, "Attack figures").
#pragma once

#include <grp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/nnclient.h"
#include "daemon_harness.h"
#include "tests/daemon/ipc_test_client.h"

namespace nnd::integ::attack {

inline std::string fixture(const char* file) { return (kSource / "tests" / "integration" / "fixtures" / file).string(); }

inline std::string model_yaml(const std::string& name, const std::string& path, const std::string& extra = "") {
  return "  - name: " + name + "\n    path: " + path + "\n" + extra;
}

inline std::string ball(uint32_t max_batch = 16, const std::string& extra = "") {
  return model_yaml("ball", model_path("ball_patch.h5"),
                    "    engine: jit\n    max_batch: " + std::to_string(max_batch) + "\n" + extra);
}

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

inline void figure(const std::string& name, const std::string& value) {
  std::printf("FIGURE %s: %s\n", name.c_str(), value.c_str());
  std::fflush(stdout);
}

// Lets processes of other uids reach the daemon's socket folder (search permission only).
inline void open_folders(const Daemon& d) {
  const auto reachable = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                         fs::perms::others_read | fs::perms::others_exec;
  fs::permissions(d.dir(), reachable);
  fs::permissions(d.dir() / "run", reachable);
}

// In a forked child: become uid/gid for good (no supplementary groups).
inline bool become(uid_t uid, gid_t gid) {
  return ::setgroups(0, nullptr) == 0 && ::setgid(gid) == 0 && ::setuid(uid) == 0;
}

constexpr uid_t kMember = 12345;    // daemon.user: admitted, may not reload
constexpr uid_t kOther = 12346;     // admitted through daemon.group 65534
constexpr gid_t kGroup = 65534;

// Who the attack tests admit besides root: kMember by user, kOther by group.
inline std::string admit_strangers() { return "  user: \"12345\"\n  group: \"65534\"\n"; }

#define NEEDS_ROOT()                                                                         \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to run clients as other uids)";          \
  if (!::getgrgid(kGroup)) GTEST_SKIP() << "no group 65534 on this system"

// Opens sessions as uid/gid until one is refused (at most `cap`), reports how many and the
// refusal's status, then holds them until killed.
inline Child hold_sessions(const Daemon& d, uid_t uid, gid_t gid, int cap, uint32_t slots, uint64_t slot_bytes) {
  return fork_child([&d, uid, gid, cap, slots, slot_bytes](const ChildIo& io) {
    if (!become(uid, gid)) return 100;
    std::vector<std::unique_ptr<nnd::test::RawClient>> held;
    int status = 0;
    while (static_cast<int>(held.size()) < cap) {
      auto r = std::make_unique<nnd::test::RawClient>();
      status = r->connect_and_hello(d.socket_path(), slots, "greedy", slot_bytes);
      if (status != NND_IPC_OK) break;
      held.push_back(std::move(r));
    }
    io.report(std::to_string(held.size()) + " " + std::to_string(status));
    io.signal_ready();
    for (;;) ::pause();
  });
}

inline std::pair<int, int> held(Child& c) {
  if (!wait_ready(c, 20000)) return {-1, -1};
  char buf[64] = {};
  (void)::read(c.out_fd, buf, sizeof buf - 1);
  int n = -1, st = -1;
  std::sscanf(buf, "%d %d", &n, &st);
  return {n, st};
}

inline std::string reload_summary(const std::string& log) {
  const size_t p = log.rfind("reload OK");
  return p == std::string::npos ? "(no reload OK)" : log.substr(p, log.find('\n', p) - p);
}

inline uint64_t vm_size_bytes(pid_t pid) {
  const std::string s = read_text("/proc/" + std::to_string(pid) + "/status");
  const size_t p = s.find("VmSize:");
  return p == std::string::npos ? 0 : std::stoull(s.substr(p + 7)) * 1024;
}

inline uint64_t vm_rss_bytes(pid_t pid) {
  const std::string s = read_text("/proc/" + std::to_string(pid) + "/status");
  const size_t p = s.find("VmRSS:");
  return p == std::string::npos ? 0 : std::stoull(s.substr(p + 6)) * 1024;
}

inline std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 19)) >> 20) + " MiB"; }

// The longest run of `file`'s bytes (at least 4) that appears in `out`.
inline size_t longest_quoted(const std::string& file, const std::string& out) {
  size_t best = 0;
  for (size_t i = 0; i < file.size(); ++i) {
    for (size_t n = best + 1; i + n <= file.size(); ++n) {
      if (out.find(file.substr(i, n)) == std::string::npos) break;
      best = n;
    }
  }
  return best;
}

}  // namespace nnd::integ::attack
