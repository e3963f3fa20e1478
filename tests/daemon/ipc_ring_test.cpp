// The daemon's ring endpoints and layout arithmetic against hostile segment contents.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "daemon/ipc/segment.h"

namespace nnd::daemon::ipc {
namespace {

struct HeapHeader {
  std::unique_ptr<nnd_ipc_header> h = std::make_unique<nnd_ipc_header>();
  HeapHeader() { init_header(h.get(), plan_segment(8, 1024)); }
};

TEST(IpcLayout, PlanSegment) {
  const auto l = plan_segment(8, 1000);
  EXPECT_EQ(l.slots, 8u);
  EXPECT_EQ(l.slot_data_bytes, 1024u);
  EXPECT_EQ(l.slots_offset % 64, 0u);
  EXPECT_GE(l.slots_offset, sizeof(nnd_ipc_header));
  EXPECT_EQ(l.data_offset % 4096, 0u);
  EXPECT_GE(l.data_offset, l.slots_offset + 8 * sizeof(nnd_ipc_slot));
  EXPECT_EQ(l.segment_bytes % 4096, 0u);
  EXPECT_GE(l.segment_bytes, l.data_offset + 8 * 1024);
  EXPECT_EQ(plan_segment(0, 0).slots, 1u);
  EXPECT_EQ(plan_segment(1000, 0).slots, NND_IPC_MAX_SLOTS);
}

TEST(IpcLayout, ComputeLayoutAlignsEveryTensor) {
  const size_t in[] = {3, 10};   // bytes per sample
  const size_t out[] = {8, 4};
  DataLayout l;
  ASSERT_TRUE(compute_layout(in, 2, out, 2, 5, &l));
  EXPECT_EQ(l.in_off[0], 0u);
  EXPECT_EQ(l.in_bytes[0], 15u);
  EXPECT_EQ(l.in_off[1], 64u);
  EXPECT_EQ(l.in_bytes[1], 50u);
  EXPECT_EQ(l.inputs_end, 114u);
  EXPECT_EQ(l.outputs_begin, 128u);
  EXPECT_EQ(l.out_off[0], 128u);
  EXPECT_EQ(l.out_off[1], 192u);
  EXPECT_EQ(l.outputs_end, 212u);
  EXPECT_EQ(l.total, 256u);
}

TEST(IpcLayout, ComputeLayoutRejectsOverflowAndTooManyTensors) {
  const size_t big[] = {SIZE_MAX / 2};
  const size_t one[] = {4};
  DataLayout l;
  EXPECT_FALSE(compute_layout(big, 1, one, 1, 4, &l));
  EXPECT_FALSE(compute_layout(one, 1, one, 1, UINT64_MAX, &l));
  const size_t nine[9] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
  EXPECT_FALSE(compute_layout(nine, 9, one, 1, 1, &l));
}

TEST(IpcRing, SubmitPopsInOrder) {
  HeapHeader hh;
  auto* h = hh.h.get();
  SubmitConsumer c;
  uint32_t slot = 99;
  const char* why = nullptr;
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kEmpty);
  h->submit.entries[0] = 3;
  h->submit.entries[1] = 7;
  nnd_ipc_store_release(&h->submit.head, 2);
  EXPECT_TRUE(c.pending(h));
  ASSERT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kSlot);
  EXPECT_EQ(slot, 3u);
  ASSERT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kSlot);
  EXPECT_EQ(slot, 7u);
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kEmpty);
  EXPECT_EQ(h->submit.tail, 2u);  // published for the client
}

TEST(IpcRing, SubmitWrapsAround2To32) {
  HeapHeader hh;
  auto* h = hh.h.get();
  SubmitConsumer c;
  c.tail = 0xFFFFFFFEu;
  h->submit.head = 0xFFFFFFFEu;
  for (uint32_t i = 0; i < 4; ++i) h->submit.entries[(0xFFFFFFFEu + i) % NND_IPC_MAX_SLOTS] = i;
  nnd_ipc_store_release(&h->submit.head, 2u);  // wrapped: 4 entries
  uint32_t slot;
  const char* why;
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kSlot);
    EXPECT_EQ(slot, i);
  }
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kEmpty);
}

TEST(IpcRing, HeadFarAheadIsCorrupt) {
  HeapHeader hh;
  auto* h = hh.h.get();
  SubmitConsumer c;
  uint32_t slot;
  const char* why = nullptr;
  h->submit.head = NND_IPC_MAX_SLOTS + 1;
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kCorrupt);
  EXPECT_NE(why, nullptr);
  h->submit.head = 0xFFFFFFF0u;  // "behind" the tail
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kCorrupt);
  h->submit.head = NND_IPC_MAX_SLOTS;  // exactly full is legal
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kSlot);
}

TEST(IpcRing, SlotIndexOutOfRangeIsCorrupt) {
  HeapHeader hh;
  auto* h = hh.h.get();
  SubmitConsumer c;
  uint32_t slot = 1234;
  const char* why = nullptr;
  h->submit.entries[0] = 8;  // slots = 8
  h->submit.head = 1;
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kCorrupt);
  EXPECT_EQ(slot, 1234u);
  h->submit.entries[1] = 0xFFFFFFFFu;
  h->submit.head = 2;
  EXPECT_EQ(c.pop(h, 8, &slot, &why), SubmitConsumer::Result::kCorrupt);
}

TEST(IpcRing, CompletePushAndHostileTail) {
  HeapHeader hh;
  auto* h = hh.h.get();
  CompleteProducer p;
  const char* why = nullptr;
  ASSERT_TRUE(p.push(h, 5, &why));
  EXPECT_EQ(h->complete.head, 1u);
  EXPECT_EQ(h->complete.entries[0], 5u);
  EXPECT_EQ(h->complete_seq, 1u);
  // Client never consumes: full after MAX_SLOTS entries, then refused (session corrupt).
  for (uint32_t i = 1; i < NND_IPC_MAX_SLOTS; ++i) ASSERT_TRUE(p.push(h, 0, &why));
  EXPECT_FALSE(p.push(h, 0, &why));
  EXPECT_NE(why, nullptr);
  // A tail ahead of the head is impossible.
  h->complete.tail = p.head + 5;
  EXPECT_FALSE(p.push(h, 0, &why));
  h->complete.tail = p.head;
  EXPECT_TRUE(p.push(h, 0, &why));
}

TEST(IpcRing, CompleteWakesOnlyASleepingClient) {
  HeapHeader hh;
  auto* h = hh.h.get();
  CompleteProducer p;
  const char* why;
  h->client_sleeping = 1;  // nobody waits: the futex wake is harmless
  ASSERT_TRUE(p.push(h, 1, &why));
  EXPECT_EQ(h->complete_seq, 1u);
}

TEST(IpcSegment, CreateIsSealedAndInitialised) {
  std::string err;
  auto seg = Segment::create(plan_segment(4, 4096), "test", &err);
  ASSERT_TRUE(seg) << err;
  const auto* h = seg->header();
  EXPECT_EQ(h->magic, NND_IPC_MAGIC);
  EXPECT_EQ(h->version, NND_IPC_VERSION);
  EXPECT_EQ(h->slots, 4u);
  EXPECT_EQ(h->daemon_sleeping, 1u);
  EXPECT_EQ(h->data_offset, seg->layout().data_offset);
  // A client cannot shrink the memfd under the daemon's mapping.
  EXPECT_NE(ftruncate(seg->memfd(), 0), 0);
  EXPECT_NE(ftruncate(seg->memfd(), static_cast<off_t>(seg->layout().segment_bytes * 2)), 0);
  std::memset(seg->data(3), 0xAB, seg->layout().slot_data_bytes);  // the last byte is mapped
}

}  // namespace
}  // namespace nnd::daemon::ipc
