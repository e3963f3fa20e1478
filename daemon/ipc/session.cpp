#include "daemon/ipc/session.h"

#include <sys/socket.h>
#include <unistd.h>

namespace nnd::daemon::ipc {

Session::~Session() {
  seg.reset();
  if (shm_total) shm_total->fetch_sub(shm_bytes);
  if (shares) shares->release_bytes(uid, shm_bytes);
  if (sock >= 0) close(sock);
}

void Session::write_result(uint32_t slot, const SlotResult& r) {
  nnd_ipc_slot* ss = seg->slot(slot);
  shm_store(&ss->status, r.status);
  shm_store(&ss->served_batch, r.served_batch);
  shm_store(&ss->output_bytes, r.output_bytes);
  shm_store(&ss->queue_ns, r.queue_ns);
  shm_store(&ss->run_ns, r.run_ns);
}

bool Session::push_complete(uint32_t slot, const Log& log, Counters& counters) {
  if (!alive()) return false;
  const char* why = nullptr;
  bool ok;
  {
    std::lock_guard lk(complete_mu);
    ok = complete.push(seg->header(), slot, &why);
  }
  if (!ok) mark_corrupt(why, log, counters);
  return ok;
}

void Session::mark_corrupt(const char* why, const Log& log, Counters& counters) {
  if (corrupt.exchange(true)) return;
  counters.sessions_corrupt.fetch_add(1);
  log(kLogWarn, name + ": ending the session: " + why);
  shutdown(sock, SHUT_RDWR);  // the control thread sees the hang-up and tears the session down
}

}  // namespace nnd::daemon::ipc
