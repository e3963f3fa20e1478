#include "daemon/ipc/slot_sizing.h"

#include <algorithm>

namespace nnd::daemon::ipc {

std::optional<SlotGrant> grant_slots(uint32_t asked_slots, uint64_t asked_bytes,
                                     uint32_t default_slots, const RequestSizes& sizes,
                                     uint64_t budget_free, uint64_t default_share) {
  const uint32_t want = std::clamp<uint32_t>(asked_slots ? asked_slots : default_slots, 1,
                                             NND_IPC_MAX_SLOTS);
  uint64_t bytes = asked_bytes ? asked_bytes : sizes.one_sample;
  if (asked_bytes == 0 && !sizes.each_one_sample.empty()) {
    const uint64_t share = std::min(default_share, budget_free);
    bytes = sizes.each_one_sample.front();
    for (uint64_t s : sizes.each_one_sample) {
      if (plan_segment(want, s).segment_bytes <= share) bytes = std::max(bytes, s);
    }
  }
  // A client asking for more than any request can use gets what the largest one needs. With no
  // model served (sizes 0) it gets the minimum; it reconnects for more when a model appears.
  bytes = std::min(bytes, std::max<uint64_t>(sizes.largest, NND_IPC_DATA_ALIGN));
  SlotGrant g;
  for (uint32_t slots = want; slots >= 1; --slots) {
    g.layout = plan_segment(slots, bytes);
    if (g.layout.segment_bytes <= budget_free) {
      g.fewer_slots = slots < want;
      return g;
    }
  }
  return std::nullopt;
}

}  // namespace nnd::daemon::ipc
