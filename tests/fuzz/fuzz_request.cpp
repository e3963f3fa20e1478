// libFuzzer target: the daemon's request path over a client's shared memory — the bytes a hostile
// client controls — with the same functions the IPC server runs (daemon/ipc/segment.h ring
// endpoints, daemon/ipc/request_validation.h). Expected outcome for any bytes: each popped request
// is either validated (and then provably fits its slot and its model) or answered with an error
// status, and a broken ring ends the session; never a crash, an out-of-bounds access or UB.
//
// Input layout:
//   byte 0     slots of the session: 1 + b0 % 64
//   byte 1     max_request_bytes: 0 (no limit) or b1 * 16
//   bytes 2-3  the daemon's private submit tail at the start: b2 << 24 | b3, with 0x00FFFF00 set
//              too when b2 != 0 (so the ring indices can wrap at 2^32 within one input)
//   rest       the segment's bytes from offset 0 (header, rings, slots); the data areas after
//              them stay zero (validation never reads them). Shorter input: zero-filled.
// Bytes past the planned segment size are poisoned, so ASan flags any access beyond the segment.
//
// NND_FUZZ_WRITE_SEEDS=DIR in the environment writes the seed corpus (valid requests of every
// model of the table, several per ring, one wrapping the ring) into DIR and exits.
#include <sys/stat.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "daemon/ipc/request_validation.h"
#include "daemon/ipc/segment.h"
#include "tests/fuzz/fuzz_report.h"

namespace {

using namespace nnd::daemon::ipc;

constexpr int64_t kNow = 1'000'000'000;
constexpr size_t kParams = 4;

// The served models: small per-sample sizes so a whole segment stays small and fast to fuzz, two
// inputs of different sizes (padding between them), several outputs, and one model whose
// per-sample size overflows any batch computation.
struct Table {
  size_t ball_in[1] = {12}, ball_out[1] = {8};
  size_t pair_in[2] = {5, 16}, pair_out[3] = {4, 100, 1};
  size_t det_in[1] = {300}, det_out[2] = {40, 4};
  size_t huge_in[1] = {SIZE_MAX / 3}, huge_out[1] = {4};
  std::vector<ModelView> views;
  uint64_t slot_data_bytes = NND_IPC_DATA_ALIGN;
  Table() {
    views.push_back({"ball", 0xB0, 8, ball_in, 1, ball_out, 1});
    views.push_back({"pair", 0xB1, 4, pair_in, 2, pair_out, 3});
    views.push_back({"detector", 0xB2, 2, det_in, 1, det_out, 2});
    views.push_back({"huge", 0xB3, 4096, huge_in, 1, huge_out, 1});
    // As the server sizes slots: the largest request of any model that has a layout at all.
    for (const ModelView& m : views) {
      DataLayout l;
      if (compute_layout(m.input_sample_bytes, m.num_inputs, m.output_sample_bytes, m.num_outputs,
                         m.max_batch, &l) &&
          l.total > slot_data_bytes) {
        slot_data_bytes = l.total;
      }
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

// Checks what the rest of the daemon relies on once a request is validated.
void check_validated(const ValidatedRequest& v, const RequestFields& f, const RequestLimits& lim) {
  const ModelView& m = table().views.at(v.model);
  if (v.batch < 1 || v.batch > m.max_batch || v.batch != f.batch) __builtin_trap();
  if (v.deadline_ns != 0 && v.deadline_ns <= kNow) __builtin_trap();
  const DataLayout& l = v.layout;
  if (l.num_inputs != m.num_inputs || l.num_outputs != m.num_outputs) __builtin_trap();
  if (l.total > lim.slot_data_bytes) __builtin_trap();
  if (lim.max_request_bytes != 0 && l.inputs_end > lim.max_request_bytes) __builtin_trap();
  if (f.input_bytes != l.inputs_end && f.input_bytes != nnd_ipc_align(l.inputs_end)) __builtin_trap();
  for (uint32_t k = 0; k < l.num_inputs; ++k) {
    if (l.in_off[k] % NND_IPC_DATA_ALIGN != 0 || l.in_off[k] + l.in_bytes[k] > l.inputs_end ||
        l.in_bytes[k] != uint64_t{v.batch} * m.input_sample_bytes[k]) {
      __builtin_trap();
    }
  }
  for (uint32_t k = 0; k < l.num_outputs; ++k) {
    if (l.out_off[k] % NND_IPC_DATA_ALIGN != 0 || l.out_off[k] < l.outputs_begin ||
        l.out_off[k] + l.out_bytes[k] > l.total ||
        l.out_bytes[k] != uint64_t{v.batch} * m.output_sample_bytes[k]) {
      __builtin_trap();
    }
  }
}

uint32_t seed_tail(uint8_t hi, uint8_t lo) {
  return uint32_t{hi} << 24 | (hi ? 0x00FFFF00u : 0u) | lo;
}

// The segment: one buffer of the largest possible size, reused by every input (a fresh heap block
// per input made ASan's allocator the bottleneck, with a 10 s stall on a loaded machine). The part
// past the planned segment size is poisoned, so ASan still flags any access beyond the segment.
class SegmentBuffer {
 public:
  SegmentBuffer() : cap_(plan_segment(NND_IPC_MAX_SLOTS, table().slot_data_bytes).segment_bytes) {
    p_ = static_cast<uint8_t*>(::operator new(cap_, std::align_val_t{4096}));
  }
  // A zeroed segment of `bytes` (<= the capacity), the rest of the buffer poisoned.
  uint8_t* take(size_t bytes) {
    if (bytes > cap_) __builtin_trap();
    unpoison(p_, cap_);
    std::memset(p_, 0, bytes);
    poison(p_ + bytes, cap_ - bytes);
    return p_;
  }

 private:
  static void poison(void* p, size_t n) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    __asan_poison_memory_region(p, n);
#endif
#endif
    (void)p;
    (void)n;
  }
  static void unpoison(void* p, size_t n) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    __asan_unpoison_memory_region(p, n);
#endif
#endif
    (void)p;
    (void)n;
  }
  size_t cap_;
  uint8_t* p_;
};

// One ingest round as the server's poller does it (ingest_locked + ingest_request + answer_now),
// minus the scheduler: pop, validate, answer.
void run_session(const uint8_t* data, size_t size) {
  const uint32_t slots = 1 + data[0] % NND_IPC_MAX_SLOTS;
  RequestLimits lim;
  lim.slot_data_bytes = table().slot_data_bytes;
  lim.max_request_bytes = uint64_t{data[1]} * 16;
  const SegmentLayout layout = plan_segment(slots, lim.slot_data_bytes);
  static SegmentBuffer buffer;
  uint8_t* seg = buffer.take(layout.segment_bytes);
  const size_t n = std::min<size_t>(size - kParams, layout.data_offset);
  std::memcpy(seg, data + kParams, n);
  auto* h = reinterpret_cast<nnd_ipc_header*>(seg);
  auto* slot_array = reinterpret_cast<nnd_ipc_slot*>(seg + layout.slots_offset);

  SubmitConsumer submit;
  submit.tail = seed_tail(data[2], data[3]);
  CompleteProducer complete;
  complete.head = submit.tail;  // a session that has answered everything so far
  for (uint32_t budget = NND_IPC_MAX_SLOTS; budget > 0; --budget) {
    uint32_t slot = 0;
    const char* why = nullptr;
    const auto res = submit.pop(h, slots, &slot, &why);
    if (res == SubmitConsumer::Result::kEmpty) break;
    if (res == SubmitConsumer::Result::kCorrupt) {
      if (why == nullptr) __builtin_trap();
      nnd::fuzz::report(why);
      return;  // the server ends the session
    }
    if (slot >= slots) __builtin_trap();
    const RequestFields f = read_request_fields(slot_array + slot);
    ValidatedRequest v;
    size_t mi = SIZE_MAX;
    const int32_t status = validate_request(f, table().views, lim, kNow, &v, &mi);
    if (mi != SIZE_MAX && mi >= table().views.size()) __builtin_trap();
    if (nnd::fuzz::verbose()) {
      const std::string m = mi == SIZE_MAX ? "-" : std::string(table().views[mi].name);
      nnd::fuzz::report(("slot " + std::to_string(slot) + " model " + m + ": status " +
                         std::to_string(status)).c_str());
    }
    if (status == NND_IPC_OK) {
      check_validated(v, f, lim);
      // The worker's view of the data area: the whole request lies inside the segment.
      if (layout.data_offset + uint64_t{slot} * layout.slot_data_bytes + v.layout.total >
          layout.segment_bytes) {
        __builtin_trap();
      }
    } else if (mi == SIZE_MAX && status != NND_IPC_E_BAD_REQUEST && status != NND_IPC_E_UNKNOWN_MODEL) {
      __builtin_trap();
    }
    // Answer as the server does; a complete ring the client broke ends the session.
    shm_store(&slot_array[slot].status, status);
    if (!complete.push(h, slot, &why)) {
      nnd::fuzz::report(why);
      return;
    }
  }
}

// ---- seed corpus ----------------------------------------------------------------------------

struct SeedRequest {
  uint32_t slot;
  const char* model;
  uint32_t batch;
  bool aligned_input_bytes;
};

std::vector<uint8_t> make_seed(uint32_t slots, uint8_t limit16, uint32_t tail,
                               const std::vector<SeedRequest>& reqs) {
  const Table& t = table();
  if (seed_tail(static_cast<uint8_t>(tail >> 24), static_cast<uint8_t>(tail & 0xff)) != tail) {
    std::fprintf(stderr, "seed tail %08x cannot be encoded\n", tail);
    std::exit(1);
  }
  const SegmentLayout layout = plan_segment(slots, t.slot_data_bytes);
  std::vector<uint8_t> seg(layout.data_offset);
  auto* h = reinterpret_cast<nnd_ipc_header*>(seg.data());
  init_header(h, layout);
  h->submit.head = h->submit.tail = tail;
  h->complete.head = h->complete.tail = tail;
  auto* sl = reinterpret_cast<nnd_ipc_slot*>(seg.data() + layout.slots_offset);
  for (const SeedRequest& r : reqs) {
    const ModelView* m = nullptr;
    for (const ModelView& v : t.views) {
      if (v.name == r.model) m = &v;
    }
    nnd_ipc_slot& s = sl[r.slot];
    std::strncpy(s.model, r.model, sizeof(s.model) - 1);
    s.signature = m ? m->signature : 0;
    s.batch = r.batch;
    DataLayout l;
    if (m && compute_layout(m->input_sample_bytes, m->num_inputs, m->output_sample_bytes,
                            m->num_outputs, r.batch, &l)) {
      s.input_bytes = r.aligned_input_bytes ? nnd_ipc_align(l.inputs_end) : l.inputs_end;
    }
    s.deadline_ns = r.slot % 2 ? kNow + 5'000'000 : 0;
    h->submit.entries[h->submit.head % NND_IPC_MAX_SLOTS] = r.slot;
    ++h->submit.head;
  }
  std::vector<uint8_t> out = {static_cast<uint8_t>(slots - 1), limit16, static_cast<uint8_t>(tail >> 24),
                              static_cast<uint8_t>(tail & 0xff)};
  out.insert(out.end(), seg.begin(), seg.end());
  return out;
}

void write_seeds(const char* dir) {
  ::mkdir(dir, 0755);
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds = {
      {"ball_one", make_seed(4, 0, 0, {{0, "ball", 1, false}})},
      {"ball_max_batch_aligned", make_seed(4, 0, 0, {{2, "ball", 8, true}})},
      {"pair_two_inputs", make_seed(8, 0, 0, {{1, "pair", 3, false}, {5, "pair", 4, true}})},
      {"detector_limit", make_seed(2, 30, 0, {{0, "detector", 2, false}, {1, "detector", 1, false}})},
      {"mixed_full_ring", make_seed(16, 0, 0,
                                    {{0, "ball", 2, false}, {1, "pair", 1, true}, {2, "detector", 1, false},
                                     {3, "huge", 1, false}, {4, "nope", 1, false}, {5, "ball", 0, false}})},
      {"wrapping_tail", make_seed(4, 0, 0xFFFFFFFE, {{0, "ball", 1, false}, {1, "ball", 3, false},
                                                      {2, "ball", 5, true}})},
  };
  for (const auto& [name, bytes] : seeds) {
    const std::string path = std::string(dir) + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      std::exit(1);
    }
    std::fclose(f);
  }
  std::fprintf(stderr, "wrote %zu seeds to %s\n", seeds.size(), dir);
  std::exit(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("NND_FUZZ_WRITE_SEEDS"); dir && *dir) write_seeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kParams) return 0;
  run_session(data, size);
  return 0;
}
