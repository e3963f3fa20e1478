#include "daemon/ipc/segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nnd::daemon::ipc {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t round_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

bool checked_add(uint64_t a, uint64_t b, uint64_t* r) { return !__builtin_add_overflow(a, b, r); }
bool checked_mul(uint64_t a, uint64_t b, uint64_t* r) { return !__builtin_mul_overflow(a, b, r); }

}  // namespace

SegmentLayout plan_segment(uint32_t slots, uint64_t slot_data_bytes) {
  SegmentLayout l;
  l.slots = slots < 1 ? 1 : (slots > NND_IPC_MAX_SLOTS ? NND_IPC_MAX_SLOTS : slots);
  l.slot_data_bytes = nnd_ipc_align(slot_data_bytes < NND_IPC_DATA_ALIGN ? NND_IPC_DATA_ALIGN : slot_data_bytes);
  l.slots_offset = nnd_ipc_align(sizeof(nnd_ipc_header));
  l.data_offset = round_up(l.slots_offset + uint64_t{l.slots} * sizeof(nnd_ipc_slot), kPage);
  l.segment_bytes = round_up(l.data_offset + uint64_t{l.slots} * l.slot_data_bytes, kPage);
  return l;
}

void init_header(nnd_ipc_header* h, const SegmentLayout& l) {
  std::memset(h, 0, sizeof(*h));
  h->magic = NND_IPC_MAGIC;
  h->version = NND_IPC_VERSION;
  h->slots = l.slots;
  h->slot_data_bytes = l.slot_data_bytes;
  h->segment_bytes = l.segment_bytes;
  h->slots_offset = l.slots_offset;
  h->data_offset = l.data_offset;
  h->daemon_sleeping = 1;
}

std::unique_ptr<Segment> Segment::create(const SegmentLayout& layout, const std::string& name,
                                         std::string* error) {
  std::unique_ptr<Segment> s(new Segment());
  s->layout_ = layout;
  auto fail = [&](const char* what) {
    if (error) *error = std::string(what) + ": " + std::strerror(errno);
    return nullptr;
  };
  s->memfd_ = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (s->memfd_ < 0) return fail("memfd_create");
  if (ftruncate(s->memfd_, static_cast<off_t>(layout.segment_bytes)) != 0) return fail("ftruncate");
  if (fcntl(s->memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) return fail("F_ADD_SEALS");
  void* p = mmap(nullptr, layout.segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd_, 0);
  if (p == MAP_FAILED) return fail("mmap");
  s->base_ = static_cast<uint8_t*>(p);
  s->eventfd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->eventfd_ < 0) return fail("eventfd");
  init_header(s->header(), layout);
  return s;
}

Segment::~Segment() {
  if (base_) munmap(base_, layout_.segment_bytes);
  if (memfd_ >= 0) close(memfd_);
  if (eventfd_ >= 0) close(eventfd_);
}

SubmitConsumer::Result SubmitConsumer::pop(nnd_ipc_header* h, uint32_t slots, uint32_t* slot,
                                           const char** why) {
  switch (nnd_ipc_ring_pop_checked(&h->submit, &tail, slots, slot)) {
    case NND_IPC_POP_EMPTY:
      return Result::kEmpty;
    case NND_IPC_POP_OK:
      return Result::kSlot;
    case NND_IPC_POP_BAD_HEAD:
      *why = "submit ring head is out of range (more entries than the ring holds)";
      return Result::kCorrupt;
    case NND_IPC_POP_BAD_ENTRY:
      break;
  }
  *why = "submit ring entry is not a valid slot index";
  return Result::kCorrupt;
}

bool CompleteProducer::push(nnd_ipc_header* h, uint32_t slot, const char** why) {
  if (!nnd_ipc_ring_push_checked(&h->complete, &head, slot)) {
    *why = "complete ring is full or its tail is out of range";
    return false;
  }
  if (nnd_ipc_complete_needs_wake(h)) {
    syscall(SYS_futex, &h->complete_seq, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
  }
  return true;
}

bool compute_layout(const size_t* in_sample_bytes, size_t num_inputs, const size_t* out_sample_bytes,
                    size_t num_outputs, uint64_t batch, DataLayout* out) {
  if (num_inputs > NND_IPC_MAX_TENSORS || num_outputs > NND_IPC_MAX_TENSORS) return false;
  DataLayout l;
  l.num_inputs = static_cast<uint32_t>(num_inputs);
  l.num_outputs = static_cast<uint32_t>(num_outputs);
  uint64_t pos = 0;
  for (size_t k = 0; k < num_inputs; ++k) {
    uint64_t bytes;
    if (!checked_mul(batch, in_sample_bytes[k], &bytes)) return false;
    l.in_off[k] = pos;
    l.in_bytes[k] = bytes;
    if (!checked_add(pos, bytes, &pos) || pos > UINT64_MAX / 2) return false;
    l.inputs_end = pos;
    pos = nnd_ipc_align(pos);
  }
  l.outputs_begin = nnd_ipc_align(l.inputs_end);
  pos = l.outputs_begin;
  l.outputs_end = pos;
  for (size_t k = 0; k < num_outputs; ++k) {
    uint64_t bytes;
    if (!checked_mul(batch, out_sample_bytes[k], &bytes)) return false;
    l.out_off[k] = pos;
    l.out_bytes[k] = bytes;
    if (!checked_add(pos, bytes, &pos) || pos > UINT64_MAX / 2) return false;
    l.outputs_end = pos;
    pos = nnd_ipc_align(pos);
  }
  l.total = nnd_ipc_align(l.outputs_end);
  *out = l;
  return true;
}

}  // namespace nnd::daemon::ipc
