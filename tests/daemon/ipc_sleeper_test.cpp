// The poller's sleep protocol (daemon/ipc/sleeper.h): flags, the re-check after the fence, and
// what wakes it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "daemon/ipc/sleeper.h"

namespace nnd::daemon::ipc {
namespace {

std::shared_ptr<Session> make_session(uint64_t id) {
  auto s = std::make_shared<Session>();
  s->id = id;
  std::string err;
  s->seg = Segment::create(plan_segment(4, 256), "nnd-test", &err);
  EXPECT_TRUE(s->seg) << err;
  s->slots = 4;
  return s;
}

// What a client does: push a slot on the submit ring; write the eventfd if the daemon sleeps.
void client_submit(Session& s, uint32_t slot) {
  nnd_ipc_header* h = s.seg->header();
  const uint32_t head = nnd_ipc_load_relaxed(&h->submit.head);
  h->submit.entries[head % NND_IPC_MAX_SLOTS] = slot;
  nnd_ipc_store_release(&h->submit.head, head + 1);
  nnd_ipc_fence_seq_cst();
  if (nnd_ipc_load_relaxed(&h->daemon_sleeping)) {
    const uint64_t one = 1;
    ASSERT_EQ(write(s.seg->eventfd(), &one, sizeof(one)), 8);
  }
}

uint32_t sleeping_flag(const Session& s) { return nnd_ipc_load_acquire(&s.seg->header()->daemon_sleeping); }

struct SleeperFixture {
  std::mutex mu;
  Sleeper sleeper;
  Sleeper::Sessions sessions{make_session(1), make_session(2)};
  SleeperFixture() {
    sleeper.open(0);
    std::lock_guard lk(mu);
    for (auto& s : sessions) sleeper.watch(*s);
  }
};

TEST(IpcSleeper, WatchedSessionsStartAwake) {
  SleeperFixture f;
  // A fresh segment says "sleeping" (so a client's first submit wakes a daemon); watching it
  // while the poller is awake clears that.
  for (auto& s : f.sessions) EXPECT_EQ(sleeping_flag(*s), 0u);
  for (auto& s : f.sessions) EXPECT_TRUE(s->in_epoll);
}

TEST(IpcSleeper, PendingRequestCancelsTheSleep) {
  SleeperFixture f;
  client_submit(*f.sessions[1], 0);
  std::unique_lock lk(f.mu);
  EXPECT_FALSE(f.sleeper.sleep(lk, f.sessions, -1));  // returns at once, no timeout needed
  EXPECT_TRUE(lk.owns_lock());
  for (auto& s : f.sessions) EXPECT_EQ(sleeping_flag(*s), 0u);
}

TEST(IpcSleeper, TimeoutEndsTheSleep) {
  SleeperFixture f;
  std::unique_lock lk(f.mu);
  EXPECT_TRUE(f.sleeper.sleep(lk, f.sessions, 1'000'000));
  for (auto& s : f.sessions) EXPECT_EQ(sleeping_flag(*s), 0u);
}

TEST(IpcSleeper, ClientSubmitWakesTheSleeperAndFlagsAreSetMeanwhile) {
  SleeperFixture f;
  std::thread client([&] {
    // Wait until the poller announced its sleep on every session (it sets the flags one after
    // the other, so seeing the first is not yet seeing the second), then submit, which must
    // write the eventfd. A flag never set fails here after 10 s.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto all_set = [&] {
      for (auto& s : f.sessions) {
        if (sleeping_flag(*s) == 0) return false;
      }
      return true;
    };
    while (!all_set() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    for (auto& s : f.sessions) EXPECT_EQ(sleeping_flag(*s), 1u);
    client_submit(*f.sessions[0], 3);
  });
  std::unique_lock lk(f.mu);
  EXPECT_TRUE(f.sleeper.sleep(lk, f.sessions, -1));
  client.join();
  for (auto& s : f.sessions) EXPECT_EQ(sleeping_flag(*s), 0u);
  // The eventfd was drained: a second sleep with a short timeout is not woken by it.
  uint64_t v;
  EXPECT_LT(read(f.sessions[0]->seg->eventfd(), &v, sizeof(v)), 0);
}

TEST(IpcSleeper, PokeWakesTheSleeper) {
  SleeperFixture f;
  std::thread poker([&] {
    while (sleeping_flag(*f.sessions[0]) == 0) std::this_thread::yield();
    f.sleeper.poke();
  });
  std::unique_lock lk(f.mu);
  EXPECT_TRUE(f.sleeper.sleep(lk, f.sessions, -1));
  poker.join();
}

TEST(IpcSleeper, UnwatchedSessionNoLongerWakesIt) {
  SleeperFixture f;
  {
    std::lock_guard lk(f.mu);
    f.sleeper.unwatch(*f.sessions[0]);
    EXPECT_FALSE(f.sessions[0]->in_epoll);
  }
  const uint64_t one = 1;
  ASSERT_EQ(write(f.sessions[0]->seg->eventfd(), &one, sizeof(one)), 8);
  Sleeper::Sessions rest{f.sessions[1]};
  std::unique_lock lk(f.mu);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(f.sleeper.sleep(lk, rest, 20'000'000));  // only the timeout ends it
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(19));
}

TEST(IpcSleeper, SpinsOnlyWithinTheSpinTime) {
  Sleeper s;
  s.open(1000);
  EXPECT_TRUE(s.should_spin(1500, 1000, INT64_MAX));
  EXPECT_FALSE(s.should_spin(2500, 1000, INT64_MAX));
  EXPECT_TRUE(s.should_spin(2500, 1000, 3000));   // a queue becomes due within the spin time
  EXPECT_FALSE(s.should_spin(2500, 1000, 5000));
  Sleeper none;
  none.open(0);
  EXPECT_FALSE(none.should_spin(1000, 1000, INT64_MAX));
}

}  // namespace
}  // namespace nnd::daemon::ipc
