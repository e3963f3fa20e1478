// The daemon's listening socket: where it lives (the endpoint rule of ipc/nnd_endpoint.h), the
// checks that keep anyone else from sitting on it or swapping it, and the bind itself.
//
// Threat: in a directory other users can write (the /tmp fallback when there is no /run/nnd), an
// unprivileged user can bind the socket path before the daemon, or put something else there. The
// daemon therefore
//   - binds only in a directory owned by root or by its own user (the one it runs as or will
//     switch to, daemon.run_as) that no one else can write, or that is sticky like /tmp (there
//     only a file's owner may remove or rename it);
//   - replaces a socket nobody answers on (a daemon killed with -9 leaves one behind), but refuses
//     a live socket, or any file that is not a socket, naming its owner and what to do.
// An impostor that gets there first can therefore keep the daemon from starting (the log says who
// it is), but clients never talk to it: libnnclient checks the daemon's credentials after it
// connects (client/README.md, "Who is the daemon?").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/logger.h"

namespace nnd::daemon {

// The socket path of `endpoint` (a name or a path containing '/'); "" for an empty endpoint.
std::string socket_path_for_endpoint(const std::string& endpoint);

struct SocketSetup {
  std::string path;
  std::optional<uid_t> owner;  // chown the socket file to this user (unset: leave it)
  std::optional<gid_t> group;  // and to this group
  uint32_t mode = 0660;        // chmod of the socket file, never wider than 0660
  // Users besides root and the effective uid who may own the socket's directory (the user the
  // daemon is about to switch to, daemon.run_as).
  std::vector<uid_t> directory_owners;
};



// "" when `dir` may hold the daemon's socket, else why not and what to do (see the header
// comment: owned by root, the effective uid or one of `owners`; not writable by group or others
// unless sticky).
std::string check_socket_directory(const std::string& dir, const std::vector<uid_t>& owners);

// Checks the directory, clears a stale socket, binds, applies owner/group/mode and listens.
// Returns the listening descriptor (SOCK_SEQPACKET, non-blocking, close-on-exec). Throws
// std::runtime_error saying what is wrong and what to do.
int bind_listening_socket(const SocketSetup& setup, const Logger& log);

// "user 'nobody' (uid 65534)", or "uid 1234" when the user database has no name for it.
std::string describe_uid(uid_t uid);

}  // namespace nnd::daemon
