// The shared ring and wake-up functions of ipc/nnd_ipc_ring.h, from both sides: what libnnclient
// calls (push, drain, sleep) against what the daemon calls (checked pop, checked push, wake-up),
// and the cache-line layout of the slots.
#include <gtest/gtest.h>

#include <memory>

#include "daemon/ipc/segment.h"
#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"

namespace nnd::daemon::ipc {
namespace {

std::unique_ptr<nnd_ipc_header> fresh_header() {
  auto h = std::make_unique<nnd_ipc_header>();
  init_header(h.get(), plan_segment(8, 1024));
  return h;
}

TEST(IpcRingProtocol, ClientPushDaemonPopInOrderAcrossTheWrap) {
  auto h = fresh_header();
  uint32_t client_head = 0xFFFFFFFCu, daemon_tail = 0xFFFFFFFCu;
  h->submit.head = h->submit.tail = client_head;
  for (uint32_t i = 0; i < 6; ++i) nnd_ipc_ring_push(&h->submit, &client_head, i);
  EXPECT_EQ(client_head, 2u);
  EXPECT_EQ(nnd_ipc_ring_ready(&h->submit, daemon_tail), 6);
  for (uint32_t i = 0; i < 6; ++i) {
    uint32_t v = 99;
    ASSERT_EQ(nnd_ipc_ring_pop_checked(&h->submit, &daemon_tail, 8, &v), NND_IPC_POP_OK);
    EXPECT_EQ(v, i);
  }
  uint32_t v;
  EXPECT_EQ(nnd_ipc_ring_pop_checked(&h->submit, &daemon_tail, 8, &v), NND_IPC_POP_EMPTY);
  EXPECT_EQ(h->submit.tail, 2u);  // published for the client
  EXPECT_FALSE(nnd_ipc_ring_nonempty(&h->submit, daemon_tail));
}

TEST(IpcRingProtocol, CheckedPopRejectsAHostileHeadAndEntry) {
  auto h = fresh_header();
  uint32_t tail = 0, v = 7;
  h->submit.head = NND_IPC_MAX_SLOTS + 1;
  EXPECT_EQ(nnd_ipc_ring_pop_checked(&h->submit, &tail, 8, &v), NND_IPC_POP_BAD_HEAD);
  EXPECT_EQ(tail, 0u);  // nothing consumed
  h->submit.head = 1;
  h->submit.entries[0] = 8;  // == slots
  EXPECT_EQ(nnd_ipc_ring_pop_checked(&h->submit, &tail, 8, &v), NND_IPC_POP_BAD_ENTRY);
  EXPECT_EQ(v, 7u);      // not written
  EXPECT_EQ(tail, 1u);   // but consumed
}

TEST(IpcRingProtocol, DaemonPushClientDrain) {
  auto h = fresh_header();
  uint32_t daemon_head = 0, client_tail = 0;
  for (uint32_t i = 0; i < NND_IPC_MAX_SLOTS; ++i) {
    ASSERT_TRUE(nnd_ipc_ring_push_checked(&h->complete, &daemon_head, i % 8));
  }
  EXPECT_FALSE(nnd_ipc_ring_push_checked(&h->complete, &daemon_head, 0));  // full
  ASSERT_EQ(nnd_ipc_ring_ready(&h->complete, client_tail), static_cast<int32_t>(NND_IPC_MAX_SLOTS));
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(nnd_ipc_ring_entry(&h->complete, client_tail++), i);
  nnd_ipc_ring_release(&h->complete, client_tail);
  EXPECT_TRUE(nnd_ipc_ring_push_checked(&h->complete, &daemon_head, 5));  // room again
  // A client tail ahead of the head is impossible: refused.
  nnd_ipc_ring_release(&h->complete, daemon_head + 1);
  EXPECT_FALSE(nnd_ipc_ring_push_checked(&h->complete, &daemon_head, 0));
  // A daemon head far from the client's tail reads as corrupt on the client's side.
  EXPECT_EQ(nnd_ipc_ring_ready(&h->complete, daemon_head + 1), -1);
}

TEST(IpcRingProtocol, ClientWakesTheDaemonOnlyWhenItAnnouncedSleep) {
  auto h = fresh_header();
  EXPECT_TRUE(nnd_ipc_submit_needs_wake(h.get()));  // a fresh segment: the daemon may sleep
  nnd_ipc_daemon_set_sleeping(h.get(), 0);
  EXPECT_FALSE(nnd_ipc_submit_needs_wake(h.get()));
  nnd_ipc_daemon_set_sleeping(h.get(), 1);
  EXPECT_TRUE(nnd_ipc_submit_needs_wake(h.get()));
}

TEST(IpcRingProtocol, DaemonWakesTheClientOnlyWhenItAnnouncedSleep) {
  auto h = fresh_header();
  uint32_t head = 0;
  ASSERT_TRUE(nnd_ipc_ring_push_checked(&h->complete, &head, 1));
  EXPECT_FALSE(nnd_ipc_complete_needs_wake(h.get()));
  EXPECT_EQ(h->complete_seq, 1u);  // bumped on every completion
  uint32_t seq = 0;
  // The client re-checks after announcing: a completion is there, so it must not sleep.
  EXPECT_FALSE(nnd_ipc_client_begin_sleep(h.get(), 0, &seq));
  EXPECT_TRUE(nnd_ipc_complete_needs_wake(h.get()));  // flag set: the daemon wakes it
  nnd_ipc_client_end_sleep(h.get());
  EXPECT_FALSE(nnd_ipc_complete_needs_wake(h.get()));
  // Nothing beyond its tail: it may sleep on the current sequence number.
  EXPECT_TRUE(nnd_ipc_client_begin_sleep(h.get(), 1, &seq));
  EXPECT_EQ(seq, h->complete_seq);
  nnd_ipc_client_end_sleep(h.get());
}

TEST(IpcRingProtocol, SlotsNeverShareACacheLine) {
  EXPECT_EQ(sizeof(nnd_ipc_slot) % NND_IPC_CACHE_LINE, 0u);
  EXPECT_EQ(alignof(nnd_ipc_slot), NND_IPC_CACHE_LINE);
  EXPECT_EQ(sizeof(nnd_ipc_header) % NND_IPC_CACHE_LINE, 0u);
  for (uint32_t slots : {1u, 3u, 16u, 64u}) {
    const SegmentLayout l = plan_segment(slots, 100);
    EXPECT_EQ(l.slots_offset % NND_IPC_CACHE_LINE, 0u);
    EXPECT_GE(l.data_offset, l.slots_offset + slots * sizeof(nnd_ipc_slot));
  }
}

}  // namespace
}  // namespace nnd::daemon::ipc
