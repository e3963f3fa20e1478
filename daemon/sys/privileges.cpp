#include "daemon/sys/privileges.h"


#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "daemon/base/daemon_error.h"

namespace nnd::daemon {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw DaemonError(DaemonErrorCode::kSystem, what + ": " + std::strerror(errno));
}

// Sets the calling thread's permitted and effective capabilities to CAP_SYS_NICE alone, or to
// nothing (raw capset: libcap is not worth a dependency for one call).
bool set_capabilities(bool sys_nice) {
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  static_assert(CAP_SYS_NICE < 32, "CAP_SYS_NICE lives in the first word");
  if (sys_nice) data[0].permitted = data[0].effective = 1u << CAP_SYS_NICE;
  return ::syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

bool must_switch_user(const RunAs& target) {
  const uid_t euid = ::geteuid();
  if (euid == 0) return target.uid != 0;
  if (euid == target.uid && ::getuid() == target.uid) return false;  // e.g. systemd's User=
  throw DaemonError(DaemonErrorCode::kSystem, "daemon.run_as: nnd runs as uid " + std::to_string(euid) +
                           ", not as root, so it cannot switch to '" + target.user + "' (uid " +
                           std::to_string(target.uid) + ", gid " + std::to_string(target.gid) +
                           "); start it as root, or as that user (systemd: User=), or remove "
                           "daemon.run_as");
}

std::string drop_privileges(const RunAs& target, bool keep_sys_nice) {
  // Groups first: setgid and setgroups need the privilege setuid gives up.
  if (::initgroups(target.user.c_str(), target.gid) != 0) fail("initgroups(" + target.user + ")");
  if (::setgid(target.gid) != 0) fail("setgid(" + std::to_string(target.gid) + ")");
  // Without PR_SET_KEEPCAPS, setuid from root to another user clears every capability.
  if (keep_sys_nice && ::prctl(PR_SET_KEEPCAPS, 1L, 0L, 0L, 0L) != 0) fail("prctl(PR_SET_KEEPCAPS)");
  if (::setuid(target.uid) != 0) fail("setuid(" + std::to_string(target.uid) + ")");
  std::string warning;
  if (keep_sys_nice) {
    ::prctl(PR_SET_KEEPCAPS, 0L, 0L, 0L, 0L);
    if (!set_capabilities(true)) {
      warning = std::string("cannot keep CAP_SYS_NICE after switching to '") + target.user +
                "': " + std::strerror(errno) + "; the workers will not get SCHED_FIFO "
                "(realtime_priority)";
      // PR_SET_KEEPCAPS kept all of root's permitted capabilities: they must go.
      if (!set_capabilities(false)) fail("capset(no capabilities)");
    }
  }
  if (::getuid() != target.uid || ::geteuid() != target.uid || ::getgid() != target.gid ||
      ::getegid() != target.gid) {
    throw DaemonError(DaemonErrorCode::kSystem, "after switching to '" + target.user +
                             "' the process ids are not the requested ones");
  }
  // setuid() from root to another user sets the saved uid too; make sure there is no way back.
  if (target.uid != 0 && ::setuid(0) == 0) {
    throw DaemonError(DaemonErrorCode::kSystem, "after switching to '" + target.user + "' setuid(0) still works");
  }
  return warning;
}

}  // namespace nnd::daemon
