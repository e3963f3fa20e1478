// State shared between nnd_soak and its client processes: one MAP_SHARED anonymous block created
// before the first fork. Clients only write their own ClientCounters; the parent only writes the
// phase sequences. Every field is a lock-free atomic, so a client killed with SIGKILL between two
// updates leaves a block the parent can still read (each counter holds its last stored value).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nnd::soak {

inline constexpr int kMaxClients = 32;
inline constexpr int kNumStatus = 32;   // room for every nnclient_status value (0..19 today)
inline constexpr size_t kNoteBytes = 240;

// Which generated config is (or is becoming) live.
enum Config : uint32_t { kConfigA = 0, kConfigB = 1 };

// One client process's counters. A request is "submitted" when the client starts it (before
// nnclient_request_begin / nnclient_infer) and "resolved" when it is counted in exactly one of
// done / wrong / lost / err_expected / err_unexpected. A killed client's submitted - resolved
// requests were interrupted by the kill.
struct ClientCounters {
  std::atomic<uint64_t> submitted{0};
  std::atomic<uint64_t> done{0};            // right answer
  std::atomic<uint64_t> wrong{0};           // answer differs from every acceptable expectation
  std::atomic<uint64_t> lost{0};            // no answer nor error within the request timeout
  std::atomic<uint64_t> err_expected[kNumStatus]{};    // errors explained by a reload/restart
  std::atomic<uint64_t> err_unexpected[kNumStatus]{};  // all other errors
  std::atomic<uint64_t> served_a{0}, served_b{0};      // ball answers of config A's / B's engine
  std::atomic<uint64_t> stale_version{0};   // ball answered by the other config's engine although
                                            // no reload overlapped the request (also in done)
  std::atomic<uint64_t> info_errors_expected{0};    // failed nnclient_open / model_info, expected
  std::atomic<uint64_t> info_errors_unexpected{0};  // ... unexpected
  std::atomic<uint32_t> note_len{0};        // first problem's description (wrong / unexpected)
  char note[kNoteBytes]{};

  uint64_t resolved() const {
    uint64_t r = done.load() + wrong.load() + lost.load();
    for (int i = 0; i < kNumStatus; ++i) r += err_expected[i].load() + err_unexpected[i].load();
    return r;
  }
};

// The parent's view of the chaos, read by clients to decide whether an error was expected.
// Both sequences are odd while their phase runs: cfg_seq from just before SIGHUP until the
// reload's READY=1, daemon_seq from just before kill -9 until the restarted daemon's READY=1.
struct SharedState {
  std::atomic<uint64_t> cfg_seq{0};
  std::atomic<uint32_t> cfg_live{kConfigA};  // set to the new config before cfg_seq turns odd
  std::atomic<uint64_t> daemon_seq{0};
  std::atomic<bool> stop{false};              // clients finish in-flight work and exit
  ClientCounters clients[kMaxClients];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

}  // namespace nnd::soak
