// Completing a slot (daemon/ipc/session.h): result fields, the push on the complete ring, and a
// client that broke its complete ring ending only its own session.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "daemon/ipc/session.h"

namespace nnd::daemon::ipc {
namespace {

struct SessionFixture {
  std::vector<std::string> logs;
  Log log{[this](nnd::daemon::LogLevel, const std::string& m) { logs.push_back(m); }};
  Counters counters;
  std::shared_ptr<Session> s = std::make_shared<Session>();
  int peer = -1;  // the client's end of the control socket

  SessionFixture() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    s->sock = sv[0];
    peer = sv[1];
    s->name = "client 'test' (pid 1)";
    std::string err;
    s->seg = Segment::create(plan_segment(4, 256), "nnd-test", &err);
    EXPECT_TRUE(s->seg) << err;
    s->slots = 4;
  }
  ~SessionFixture() { close(peer); }
  nnd_ipc_header* h() { return s->seg->header(); }
  bool peer_sees_hangup() {
    char c;
    return recv(peer, &c, 1, MSG_DONTWAIT) == 0;
  }
};

TEST(IpcSession, CompletingWritesTheResultAndPushesTheSlot) {
  SessionFixture f;
  SlotResult r;
  r.status = NND_IPC_E_DEADLINE;
  r.served_batch = 5;
  r.output_bytes = 40;
  r.queue_ns = 7;
  r.run_ns = 9;
  f.s->write_result(2, r);
  const uint32_t seq0 = f.h()->complete_seq;
  ASSERT_TRUE(f.s->push_complete(2, f.log, f.counters));
  const nnd_ipc_slot* sl = f.s->seg->slot(2);
  EXPECT_EQ(sl->status, NND_IPC_E_DEADLINE);
  EXPECT_EQ(sl->served_batch, 5u);
  EXPECT_EQ(sl->output_bytes, 40u);
  EXPECT_EQ(sl->queue_ns, 7u);
  EXPECT_EQ(sl->run_ns, 9u);
  EXPECT_EQ(nnd_ipc_load_acquire(&f.h()->complete.head), 1u);
  EXPECT_EQ(f.h()->complete.entries[0], 2u);
  EXPECT_EQ(f.h()->complete_seq, seq0 + 1);
  EXPECT_FALSE(f.s->corrupt.load());
}

TEST(IpcSession, BrokenCompleteRingEndsTheSessionOnce) {
  SessionFixture f;
  // The client claims to have consumed completions that were never pushed.
  nnd_ipc_store_release(&f.h()->complete.tail, 1000);
  EXPECT_FALSE(f.s->push_complete(0, f.log, f.counters));
  EXPECT_TRUE(f.s->corrupt.load());
  EXPECT_FALSE(f.s->alive());
  EXPECT_EQ(f.counters.sessions_corrupt.load(), 1u);
  ASSERT_EQ(f.logs.size(), 1u);
  EXPECT_NE(f.logs[0].find("ending the session"), std::string::npos);
  EXPECT_TRUE(f.peer_sees_hangup());  // the control thread notices it the same way
  // Later completions are not pushed and not counted again.
  EXPECT_FALSE(f.s->push_complete(1, f.log, f.counters));
  f.s->mark_corrupt("again", f.log, f.counters);
  EXPECT_EQ(f.counters.sessions_corrupt.load(), 1u);
  EXPECT_EQ(f.logs.size(), 1u);
}

TEST(IpcSession, DeadSessionGetsNoCompletion) {
  SessionFixture f;
  f.s->dead.store(true);
  EXPECT_FALSE(f.s->push_complete(0, f.log, f.counters));
  EXPECT_EQ(nnd_ipc_load_acquire(&f.h()->complete.head), 0u);
  EXPECT_EQ(f.counters.sessions_corrupt.load(), 0u);
}

TEST(IpcSession, SegmentBytesAreReturnedWithTheLastReference) {
  Counters counters;
  auto s = std::make_shared<Session>();
  s->shm_total = counters.shared_memory_bytes;
  s->shm_bytes = 8192;
  counters.shared_memory_bytes->fetch_add(8192);
  std::shared_ptr<Session> in_flight = s;  // a request still holds the session
  s.reset();
  EXPECT_EQ(counters.shared_memory_bytes->load(), 8192u);
  in_flight.reset();
  EXPECT_EQ(counters.shared_memory_bytes->load(), 0u);
}

}  // namespace
}  // namespace nnd::daemon::ipc
