// Issue 36, attack 1: log floods are rate-limited per client and kind.
#include <gtest/gtest.h>

#include "attack_support.h"

namespace {

using namespace nnd::integ;
using namespace nnd::integ::attack;

// ---- 1. Log floods ---------------------------------------------------------------------------

// A member who may not reload sends RELOAD as fast as it can for 1 s: one refusal per message
// was logged (379k-479k lines in 2 s). Now a few lines per client and kind, then one "N more like
// this suppressed" line.
TEST(Attack, RefusedReloadFloodIsRateLimited) {
  NEEDS_ROOT();
  Daemon d("flood_reload");
  open_folders(d);
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(), admit_strangers() + "  log_level: info\n"))) << d.log();
  Child c = fork_child([&](const ChildIo& io) {
    if (!become(kMember, kMember)) return 100;
    nnd::test::RawClient r;
    if (r.connect_and_hello(d.socket_path(), 1) != NND_IPC_OK) return 101;
    nnd_ipc_model_query q{};
    q.type = NND_MSG_RELOAD;
    uint64_t sent = 0;
    const int64_t end = now_us() + 1'000'000;
    char buf[512];
    while (now_us() < end) {
      if (::send(r.sock(), &q, sizeof q, MSG_NOSIGNAL | MSG_DONTWAIT) == sizeof q) ++sent;
      while (::recv(r.sock(), buf, sizeof buf, MSG_DONTWAIT) > 0) {
      }
    }
    io.report(std::to_string(sent));
    return 0;
  });
  const ChildResult res = collect(c, 20000);
  ASSERT_EQ(res.code, 0) << res.text;
  const uint64_t sent = std::stoull(res.text);
  EXPECT_GT(sent, 1000u) << "the flood did not happen";
  // The summary comes when the client's window has passed, or at the latest when the daemon stops.
  EXPECT_EQ(d.stop(), 0);
  const std::string log = d.log();
  // One summary counts the refusals left out (those the daemon read before the client left).
  const size_t p = log.find("uid 12345: ");
  ASSERT_NE(p, std::string::npos) << log.substr(0, 4000);
  const uint64_t suppressed = std::stoull(log.substr(p + 11));
  EXPECT_NE(log.find(" more like this suppressed in the last 5 s (reload refused)", p), std::string::npos) << log.substr(p, 200);
  EXPECT_GT(suppressed, sent / 2);
  const size_t lines = count(log, "asked for a reload: refused");
  EXPECT_LE(lines, 20u) << "of " << sent << " refused reloads";
  figure("refused RELOAD flood: lines logged in 1 s of flood", std::to_string(lines) + " (of " + std::to_string(sent) + " messages)");
}

// Bad hellos and connect/close cycles for 1 s each: 22k and 30k lines in 2 s before.
TEST(Attack, HandshakeFloodsAreRateLimited) {
  Daemon d("flood_hello");
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(), "  log_level: info\n"))) << d.log();
  uint64_t bad = 0, cycles = 0;
  for (int64_t end = now_us() + 1'000'000; now_us() < end; ++bad) {
    const int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, d.socket_path().c_str(), sizeof a.sun_path - 1);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      nnd_ipc_hello h{};
      h.type = NND_MSG_HELLO;
      h.magic = 0xBAD;
      (void)::send(s, &h, sizeof h, MSG_NOSIGNAL);
      char buf[512];
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, 1000) > 0) (void)::recv(s, buf, sizeof buf, 0);
    }
    ::close(s);
  }
  for (int64_t end = now_us() + 1'000'000; now_us() < end; ++cycles) {
    nnd::test::RawClient r;
    if (r.connect_and_hello(d.socket_path(), 1) != NND_IPC_OK) break;
  }
  EXPECT_GT(bad, 100u);
  EXPECT_GT(cycles, 100u);
  EXPECT_EQ(d.stop(), 0);
  const std::string log = d.log();
  EXPECT_GE(count(log, "more like this suppressed"), 3u) << log.substr(0, 4000);
  const size_t refused = count(log, "refused: protocol mismatch");
  const size_t connected = count(log, ") connected (uid");
  const size_t disconnected = count(log, ") disconnected (");
  EXPECT_LE(refused, 20u) << "of " << bad;
  EXPECT_LE(connected, 20u) << "of " << cycles;
  EXPECT_LE(disconnected, 20u) << "of " << cycles;
  figure("bad hello flood: lines logged in 1 s", std::to_string(refused) + " (of " + std::to_string(bad) + " hellos)");
  figure("connect/close flood: lines logged in 1 s",
         std::to_string(connected + disconnected) + " (of " + std::to_string(cycles) + " cycles)");
}

}  // namespace
