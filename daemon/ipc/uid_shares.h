// What each peer uid holds of the daemon's sessions and shared memory, for the fair shares
// (ServingSettings::max_clients_per_uid, max_shared_memory_bytes_per_uid) and the control
// reserve.
//
// Threads: the control thread adds a session at the welcome and removes it when the connection
// ends; a session's bytes are released when its segment is unmapped (~Session, on whichever
// thread drops the last reference: a request in flight may hold one). One mutex.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace nnd::daemon::ipc {

class UidShares {
 public:
  struct Usage {
    uint32_t sessions = 0;
    uint32_t reserved = 0;  // of which in the control reserve
    uint64_t bytes = 0;
  };

  Usage usage(uid_t uid) const;
  uint32_t reserved_total() const;

  void add_session(uid_t uid, uint64_t bytes, bool reserved);
  void remove_session(uid_t uid, bool reserved);  // the connection ended
  void release_bytes(uid_t uid, uint64_t bytes);  // its segment is gone

 private:
  mutable std::mutex mu_;
  std::unordered_map<uid_t, Usage> by_uid_;
  uint32_t reserved_total_ = 0;
};

}  // namespace nnd::daemon::ipc
