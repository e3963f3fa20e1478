// grant_slots: how many slots of what size a client's hello gets.
#include <gtest/gtest.h>

#include "daemon/ipc/slot_sizing.h"

namespace nnd::daemon::ipc {
namespace {

constexpr uint64_t kBig = uint64_t{1} << 40;
const RequestSizes kSizes{/*one_sample=*/4096, /*largest=*/4096 * 64, /*each_one_sample=*/{}};

TEST(SlotSizing, DefaultsAreOneSampleAndTheConfiguredSlotCount) {
  const auto g = grant_slots(0, 0, 16, kSizes, kBig);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->layout.slots, 16u);
  EXPECT_EQ(g->layout.slot_data_bytes, 4096u);
  EXPECT_FALSE(g->fewer_slots);
}

TEST(SlotSizing, AskedBytesAreRoundedAndCappedAtTheLargestRequest) {
  EXPECT_EQ(grant_slots(2, 100, 16, kSizes, kBig)->layout.slot_data_bytes, 128u);
  EXPECT_EQ(grant_slots(2, 1, 16, kSizes, kBig)->layout.slot_data_bytes, 64u);
  EXPECT_EQ(grant_slots(2, kBig, 16, kSizes, kBig)->layout.slot_data_bytes, 4096u * 64);
  EXPECT_EQ(grant_slots(2, 0, 16, RequestSizes{}, kBig)->layout.slot_data_bytes, 64u);  // no model
}

TEST(SlotSizing, SlotCountIsClampedToTheRing) {
  EXPECT_EQ(grant_slots(1000, 0, 16, kSizes, kBig)->layout.slots, NND_IPC_MAX_SLOTS);
  EXPECT_EQ(grant_slots(0, 0, 0, kSizes, kBig)->layout.slots, 1u);
}

TEST(SlotSizing, TheBudgetCutsSlotsDownToOne) {
  const SegmentLayout four = plan_segment(4, 4096);
  const auto g = grant_slots(16, 4096, 16, kSizes, four.segment_bytes);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->layout.slots, 4u);
  EXPECT_TRUE(g->fewer_slots);
  const SegmentLayout one = plan_segment(1, 4096);
  EXPECT_EQ(grant_slots(16, 4096, 16, kSizes, one.segment_bytes)->layout.slots, 1u);
  EXPECT_FALSE(grant_slots(16, 4096, 16, kSizes, one.segment_bytes - 1));
}

TEST(SlotSizing, EverySegmentFitsTheBudgetItWasGranted) {
  for (uint64_t budget : {uint64_t{0}, uint64_t{4096}, uint64_t{1} << 16, uint64_t{1} << 20, kBig}) {
    for (uint32_t slots : {0u, 1u, 7u, 64u}) {
      for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{5000}, kBig}) {
        const auto g = grant_slots(slots, bytes, 16, kSizes, budget);
        if (g) {
          EXPECT_LE(g->layout.segment_bytes, budget);
        }
      }
    }
  }
}

}  // namespace
}  // namespace nnd::daemon::ipc
