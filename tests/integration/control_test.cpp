// The control thread under a flood of control messages: other clients' hand-shakes take turns
// with the flooding client instead of waiting for its queue to drain.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "client/nnclient.h"
#include "ipc/nnd_ipc.h"
#include "tests/integration/daemon_harness.h"

namespace nnd::integ {
namespace {

// A client that floods control queries without reading the answers took the control thread for
// as long as it kept sending: others' hand-shakes waited (24 ms typical, 285 ms worst, and
// without bound while the flood kept the queue full). The control thread now takes turns.
TEST(Control, AFloodOfQueriesDoesNotStarveHandshakes) {
  Daemon d("flood");
  const auto cfg = d.write_config("nnd.yaml", "  - name: ball\n    path: " + model_path("ball_patch.h5") + "\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, d.socket_path().c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  nnd_ipc_hello h{};
  h.type = NND_MSG_HELLO;
  h.magic = NND_IPC_MAGIC;
  h.version = NND_IPC_VERSION;
  std::strcpy(h.client_name, "flooder");
  ASSERT_EQ(::send(fd, &h, sizeof h, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof h));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> sent{0};
  std::thread flood([&] {
    nnd_ipc_model_query q{};
    q.type = NND_MSG_STATS;
    // Blocking sends keep the daemon's queue for this socket full; the answers are never read
    // (the daemon drops them when the socket buffer is full, as it should).
    while (!stop.load()) {
      if (::send(fd, &q, sizeof q, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof q)) ++sent;
      else break;
    }
  });
  while (sent.load() < 1000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int opened = 0;
  int64_t worst_us = 0;
  for (int i = 0; i < 20; ++i) {
    nnclient_status st = NNCLIENT_OK;
    const int64_t t0 = now_us();
    nnclient_t* c = nnclient_open(d.socket_path().c_str(), &st);
    worst_us = std::max(worst_us, now_us() - t0);
    if (!c) {
      ADD_FAILURE() << "open " << i << ": " << nnclient_status_name(st) << ": "
                    << nnclient_last_error(nullptr);
      break;
    }
    ++opened;
    nnclient_close(c);
  }
  stop.store(true);
  ::shutdown(fd, SHUT_RDWR);
  flood.join();
  ::close(fd);
  // A figure, not a threshold: the slowest hand-shake while the flood ran.
  std::printf("%d hand-shakes during a flood of %llu queries, slowest %.2f ms\n", opened,
              static_cast<unsigned long long>(sent.load()), static_cast<double>(worst_us) / 1e3);
  EXPECT_EQ(opened, 20);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

}  // namespace
}  // namespace nnd::integ
