#include "daemon/ipc/uid_shares.h"

namespace nnd::daemon::ipc {

UidShares::Usage UidShares::usage(uid_t uid) const {
  std::lock_guard lk(mu_);
  const auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? Usage{} : it->second;
}

uint32_t UidShares::reserved_total() const {
  std::lock_guard lk(mu_);
  return reserved_total_;
}

void UidShares::add_session(uid_t uid, uint64_t bytes, bool reserved) {
  std::lock_guard lk(mu_);
  Usage& u = by_uid_[uid];
  ++u.sessions;
  u.bytes += bytes;
  if (reserved) {
    ++u.reserved;
    ++reserved_total_;
  }
}

void UidShares::remove_session(uid_t uid, bool reserved) {
  std::lock_guard lk(mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  Usage& u = it->second;
  if (u.sessions) --u.sessions;
  if (reserved && u.reserved) {
    --u.reserved;
    --reserved_total_;
  }
  if (u.sessions == 0 && u.bytes == 0) by_uid_.erase(it);
}

void UidShares::release_bytes(uid_t uid, uint64_t bytes) {
  std::lock_guard lk(mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  Usage& u = it->second;
  u.bytes = u.bytes > bytes ? u.bytes - bytes : 0;
  if (u.sessions == 0 && u.bytes == 0) by_uid_.erase(it);
}

}  // namespace nnd::daemon::ipc
