// How much shared memory a client gets: the number of request slots and the data bytes of each,
// from what its hello asks for, the sizes of the served models' requests and what is left of
// the daemon's shared-memory budget.
//
// Why per client: one size for everybody (the largest request of any model at its max_batch)
// made a client that runs one small model hold as much memory as the biggest batch of the
// biggest model, 16 times over; with a large model served, the budget took only one or two
// clients. A client now says the largest request it will send (libnnclient works it out from the
// models and max_batch it is opened with, or grows when a request does not fit), and the
// daemon bounds what it may ask.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "daemon/ipc/segment.h"

namespace nnd::daemon::ipc {

// Data bytes (nnd_ipc.h layout: inputs, then outputs, each 64-byte aligned, rounded up to 64) of
// the requests the served models take.
struct RequestSizes {
  uint64_t one_sample = 0;  // the largest one-sample request of any model
  uint64_t largest = 0;     // the largest request of any model at its max_batch
  std::vector<uint64_t> each_one_sample;  // every model's one-sample request, ascending
};

struct SlotGrant {
  SegmentLayout layout;
  bool fewer_slots = false;  // the budget held fewer slots than asked
};

// The segment for a client that asks for `asked_slots` slots (0: `default_slots`) of
// `asked_bytes` data bytes each. 0 bytes (a plain nnclient_open, which does not say which models
// it will use) gets slots for the largest one-sample request whose slots fit in `default_share`
// (the equal share of the budget, max_shared_memory_bytes / max_clients), else for the smallest
// model's: one huge model must not make every default client's slots huge (a 256 MiB-per-sample
// model locked out every plain client). A client that later needs more asks again for exactly
// that. The slot size is capped at sizes.largest (a client cannot reserve more than any request
// can use) and is at least one alignment unit; the slot count is cut to what `budget_free` bytes
// hold, down to one. nullopt when not even one slot fits.
std::optional<SlotGrant> grant_slots(uint32_t asked_slots, uint64_t asked_bytes,
                                     uint32_t default_slots, const RequestSizes& sizes,
                                     uint64_t budget_free, uint64_t default_share = UINT64_MAX);

}  // namespace nnd::daemon::ipc
