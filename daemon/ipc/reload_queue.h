// The queue of clients waiting for a reload (NND_MSG_RELOAD), run on one thread of its own so the
// control thread keeps accepting clients and answering queries while models compile.
//
// Reloads run one at a time: requests that arrive while a reload runs wait for the next one
// (which starts after they asked), and every request waiting then is answered by that single run.
// So a client flooding RELOAD costs one thread and at most two callback runs in a row, never a
// thread per message. Whether a client may reload at all is the ControlPlane's decision.
//
// Threads and locks: ask() is called by the control thread, set_callback() by anyone, stop() by
// Server::stop(); the reload thread runs the callback without the lock. `mu_` guards everything
// below it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/ipc/server_support.h"
#include "daemon/ipc/session.h"

namespace nnd::daemon::ipc {

// Sends the answer to one RELOAD message. Never blocks (a client that does not read cannot hold
// up the others or stop()); fails harmlessly if the client left.
void send_reload_reply(const Session& s, int32_t status, const std::string& message);

class ReloadQueue {
 public:
  explicit ReloadQueue(const Log& log) : log_(log) {}
  ~ReloadQueue() { stop(); }
  ReloadQueue(const ReloadQueue&) = delete;
  ReloadQueue& operator=(const ReloadQueue&) = delete;

  void set_callback(ReloadCallback cb);

  // Queues one RELOAD message of `s` for the next run (starting the reload thread on first use),
  // or answers it at once when there is no callback or the queue is stopping.
  void ask(const std::shared_ptr<Session>& s);

  // Answers whoever still waits NND_IPC_E_SHUTTING_DOWN and joins the thread (which first
  // finishes a run in progress: the callback must return promptly once the daemon is stopping).
  // Idempotent.
  void stop();

 private:
  struct Asker {
    std::shared_ptr<Session> session;
    uint32_t replies = 0;  // RELOAD messages of this session to answer
  };
  void run();

  const Log& log_;
  std::mutex mu_;
  std::condition_variable cv_;
  ReloadCallback cb_;
  std::vector<Asker> waiting_;  // answered by the next run
  bool stop_ = false;
  std::thread thread_;          // started with the first request
};

}  // namespace nnd::daemon::ipc
