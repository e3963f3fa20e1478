// Dropping root for good (daemon.run_as): nnd started as root (by hand, or from an init script
// on the robot) binds its socket, then becomes the configured user before it opens any model
// file, so a model file that exploits the HDF5 parser, or a bug in the daemon, gets that user's
// rights and not root's. Under systemd the unit's User= does this before nnd starts.
//
// What keeps working after the drop, and what does not:
//  - realtime_priority: SCHED_FIFO needs CAP_SYS_NICE. With realtime_priority set, the drop keeps
//    that one capability (PR_SET_KEEPCAPS, then capset to CAP_SYS_NICE alone), as the systemd
//    unit's AmbientCapabilities=CAP_SYS_NICE does; every other capability is gone. CPU affinity
//    needs nothing.
//  - the socket: bound while still root. Removing it at exit needs write access to its directory
//    (daemon/ipc/socket_setup.h logs a notice when the user lacks it); a file left behind is
//    replaced by the next start.
//  - reloads run as the user: the config file and every model file must be readable by it.
#pragma once

#include <sys/types.h>

#include <string>

namespace nnd::daemon {

struct RunAs {
  std::string user;  // name in the user database (initgroups takes the supplementary groups from it)
  uid_t uid = 0;
  gid_t gid = 0;     // primary group after the drop
};

// Whether start-up must switch to `target`: true when running as root and `target` is not root;
// false when the process runs as `target`'s uid already (e.g. systemd's User= with the same user;
// its groups are then left as they are). Throws
// std::runtime_error when it is neither root nor `target` (it could not switch).
bool must_switch_user(const RunAs& target);

// initgroups (the user's supplementary groups), setgid, setuid, then checks that the ids are the
// target's and that setuid(0) now fails. With keep_sys_nice, CAP_SYS_NICE (and nothing else)
// survives the switch. nnd calls it before it starts any thread. Throws std::runtime_error naming
// the call that failed; returns "" or a warning to log (CAP_SYS_NICE could not be kept).
std::string drop_privileges(const RunAs& target, bool keep_sys_nice);

}  // namespace nnd::daemon
