// The daemon's side of one client's shared-memory segment: creation (sealed memfd + eventfd),
// the daemon's private copies of every size and ring index, and the two ring endpoints with the
// validation that makes a hostile client harmless.
//
// Rule: everything in the segment is written by an untrusted process at any time. The daemon
// reads each field once (relaxed atomic load into a local), checks it, and uses only the local
// copy. Sizes and offsets come from the daemon's own SegmentLayout, never from the header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"

namespace nnd::daemon::ipc {

// Loads a scalar from shared memory exactly once (no re-read by the compiler).
template <typename T>
inline T shm_load(const T* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <typename T>
inline void shm_store(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

struct SegmentLayout {
  uint32_t slots = 0;
  uint64_t slot_data_bytes = 0;  // multiple of 64
  uint64_t slots_offset = 0;     // nnd_ipc_slot[slots]
  uint64_t data_offset = 0;      // page aligned
  uint64_t segment_bytes = 0;    // page multiple
};

// Layout for `slots` slots (1..NND_IPC_MAX_SLOTS) of `slot_data_bytes` (rounded up to 64) each.
SegmentLayout plan_segment(uint32_t slots, uint64_t slot_data_bytes);

// Writes the header of a fresh segment (magic, sizes, empty rings, daemon_sleeping = 1 so the
// client's first submit wakes a daemon that may be asleep).
void init_header(nnd_ipc_header* h, const SegmentLayout& l);

// A mapped segment with its file descriptors. The memfd is sealed against shrinking and growing
// (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so a client cannot truncate it under the daemon's
// mapping (no SIGBUS).
class Segment {
 public:
  // Creates the memfd, the eventfd (non-blocking) and the mapping; nullptr and *error on failure.
  static std::unique_ptr<Segment> create(const SegmentLayout& layout, const std::string& name,
                                         std::string* error);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  const SegmentLayout& layout() const { return layout_; }
  nnd_ipc_header* header() const { return reinterpret_cast<nnd_ipc_header*>(base_); }
  nnd_ipc_slot* slot(uint32_t i) const {
    return reinterpret_cast<nnd_ipc_slot*>(base_ + layout_.slots_offset) + i;
  }
  uint8_t* data(uint32_t i) const { return base_ + layout_.data_offset + uint64_t{i} * layout_.slot_data_bytes; }
  int memfd() const { return memfd_; }
  int eventfd() const { return eventfd_; }

 private:
  Segment() = default;
  SegmentLayout layout_;
  uint8_t* base_ = nullptr;
  int memfd_ = -1;
  int eventfd_ = -1;
};

// Daemon = consumer of the submit ring (ipc/nnd_ipc_ring.h does the work; this adds the reasons
// for the log). `tail` is the daemon's private copy; the shared tail is only written, never read
// back.
struct SubmitConsumer {
  enum class Result { kEmpty, kSlot, kCorrupt };
  uint32_t tail = 0;

  // Pops one slot index. kCorrupt (with *why set) when the client's head is more than a ring's
  // capacity ahead of the tail (or behind it) or the entry is not a slot index < slots.
  Result pop(nnd_ipc_header* h, uint32_t slots, uint32_t* slot, const char** why);
  // True when the client's head differs from the tail (used to re-check before sleeping).
  bool pending(const nnd_ipc_header* h) const { return nnd_ipc_ring_nonempty(&h->submit, tail); }
};

// Daemon = producer of the complete ring. `head` is private; the client's tail is read and
// checked. Not thread-safe: the caller serialises pushes per session.
struct CompleteProducer {
  uint32_t head = 0;

  // Pushes `slot` and bumps complete_seq; wakes the client with a shared futex wake when it
  // announced that it sleeps. false (with *why) when the ring is full or the client's tail is
  // impossible: the session is corrupt.
  bool push(nnd_ipc_header* h, uint32_t slot, const char** why);
};

// Result of checking one request's slot against a model.
struct DataLayout {
  uint32_t num_inputs = 0, num_outputs = 0;
  uint64_t in_off[NND_IPC_MAX_TENSORS] = {}, in_bytes[NND_IPC_MAX_TENSORS] = {};
  uint64_t out_off[NND_IPC_MAX_TENSORS] = {}, out_bytes[NND_IPC_MAX_TENSORS] = {};
  uint64_t inputs_end = 0;     // end of the last input (unaligned)
  uint64_t outputs_begin = 0;  // nnd_ipc_align(inputs_end)
  uint64_t outputs_end = 0;    // end of the last output (unaligned)
  uint64_t total = 0;          // nnd_ipc_align(outputs_end): data area bytes the request needs
};

// Data-area layout of a request of `batch` samples for a model with the given per-sample byte
// counts (nnd_ipc.h: inputs then outputs, each 64-byte aligned). false on overflow or too many
// tensors.
bool compute_layout(const size_t* in_sample_bytes, size_t num_inputs, const size_t* out_sample_bytes,
                    size_t num_outputs, uint64_t batch, DataLayout* out);

}  // namespace nnd::daemon::ipc
