// A fake nnd for the client tests: a forked child process that speaks the wire protocol of
// ipc/nnd_ipc.h (hand-shake with memfd + eventfd, rings, futex wake-ups, control messages) and
// serves two tiny models computed in place:
//   "double": input  x float32 (4)            -> output y float32 (4) = 2 * x
//   "pair":   inputs a uint8 (3), b float32 (2) -> outputs sum float32 (1) = sum(a) + sum(b),
//                                                          copy float32 (2) = b
// It is a test double, not the daemon: one process, no batching, no access control.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace nnd::test {

struct FakeDaemonConfig {
  std::string socket_path;
  uint64_t instance = 1;
  uint64_t double_signature = 0x1111;  // change to simulate a reload that changed the model
  uint32_t double_version = 1;
  uint32_t slots = 8;
  uint64_t slot_data_bytes = 4096;
  uint32_t max_batch = 64;
  int answer_delay_ms = 0;  // sleep before answering each request
  int reload_delay_ms = 0;  // sleep before answering a RELOAD control message
  int rehandshake_delay_ms = 0;  // sleep before the welcome of every hand-shake but the first
  bool never_answer = false;
  // When >= 0 (the test runs as root): the serving child switches to this uid/gid and binds and
  // listens itself, so the socket's peer credentials are that user's (an impostor daemon).
  int listen_uid = -1;
  int listen_gid = -1;
};

class FakeDaemon {
 public:
  FakeDaemon() = default;
  explicit FakeDaemon(const FakeDaemonConfig& config) { start(config); }
  ~FakeDaemon() { kill(); }
  FakeDaemon(const FakeDaemon&) = delete;
  FakeDaemon& operator=(const FakeDaemon&) = delete;

  // Binds and listens in the calling process (so a client can connect as soon as this returns),
  // then forks the serving child. With listen_uid, the child binds and listens as that user and
  // this returns once it does.
  void start(const FakeDaemonConfig& config);
  // SIGKILL and reap the child (no clean-up on its side, like kill -9 of the real daemon).
  void kill();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// A unique socket path in a fresh temporary folder for one test.
std::string fresh_socket_path(const std::string& tag);

}  // namespace nnd::test
