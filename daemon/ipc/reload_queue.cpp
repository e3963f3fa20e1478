#include "daemon/ipc/reload_queue.h"

#include <sys/socket.h>

#include <algorithm>
#include <exception>

namespace nnd::daemon::ipc {

void send_reload_reply(const Session& s, int32_t status, const std::string& message) {
  nnd_ipc_reply r{};
  r.type = NND_MSG_RELOAD;
  r.status = status;
  copy_name(r.message, sizeof(r.message), message);
  (void)!send(s.sock, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ReloadQueue::set_callback(ReloadCallback cb) {
  std::lock_guard lk(mu_);
  cb_ = std::move(cb);
}

void ReloadQueue::ask(const std::shared_ptr<Session>& s) {
  std::lock_guard lk(mu_);
  if (!cb_ || stop_) {
    send_reload_reply(*s, stop_ ? NND_IPC_E_SHUTTING_DOWN : NND_IPC_E_INTERNAL,
                      stop_ ? "the daemon is shutting down" : "reload is not supported by this daemon");
    return;
  }
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Asker& a) { return a.session == s; });
  if (it != waiting_.end()) {
    ++it->replies;  // the same run answers every message of this session
    return;
  }
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::exception& e) {
      // Out of threads or address space: this request fails, nothing else does.
      send_reload_reply(*s, NND_IPC_E_INTERNAL, std::string("cannot start the reload thread: ") + e.what());
      log_(kLogWarn, s->name + " asked for a reload: cannot start the reload thread: " + e.what());
      return;
    }
  }
  log_(kLogInfo, s->name + " asked for a reload");
  waiting_.push_back({s, 1});
  cv_.notify_one();
}

void ReloadQueue::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !waiting_.empty(); });
    if (stop_) break;
    std::vector<Asker> askers = std::move(waiting_);
    waiting_.clear();
    ReloadCallback cb = cb_;
    lk.unlock();
    ReloadResult res;
    // A failed reload is the config's or a model's fault (the message says which), not the
    // daemon's: RELOAD_FAILED. An exception out of the callback is the daemon's: INTERNAL.
    int32_t failure = NND_IPC_E_RELOAD_FAILED;
    try {
      res = cb();
    } catch (const std::exception& e) {
      res.ok = false;
      res.message = e.what();
      failure = NND_IPC_E_INTERNAL;
    }
    for (const Asker& a : askers) {
      for (uint32_t k = 0; k < a.replies; ++k) {
        send_reload_reply(*a.session, res.ok ? NND_IPC_OK : failure, res.message);
      }
    }
    lk.lock();
  }
  // Stopping: whoever still waits gets an answer instead of a reload that will not happen.
  for (const Asker& a : waiting_) {
    for (uint32_t k = 0; k < a.replies; ++k) {
      send_reload_reply(*a.session, NND_IPC_E_SHUTTING_DOWN, "the daemon is shutting down");
    }
  }
  waiting_.clear();
}

void ReloadQueue::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace nnd::daemon::ipc
