// `nnd --check` as the service: the files the daemon will read (its config, every model), checked
// as the user it will run as, and against the folders its systemd unit hides. A model only root
// can read passes a root check and then fails in the daemon ("model file not readable"); a model
// under /home passes and is then not found by a daemon whose unit says ProtectHome=yes.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "daemon/base/service_unit.h"
#include "daemon/config/config.h"

namespace nnd::daemon {

struct ServiceUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;          // primary group (or daemon.run_as_group)
  std::string because;    // "daemon.run_as", "User= of /usr/lib/systemd/system/nnd.service"
};

// The user the daemon will read its files as: daemon.run_as when set (it becomes that user
// before loading any model), else the unit's User=. nullopt when neither says (a daemon started
// by hand runs as whoever starts it). Throws std::runtime_error for a User= the user database
// does not know.
std::optional<ServiceUser> service_user(const DaemonSettings& d, const std::optional<ServiceUnit>& unit);

// For each of `paths`: "" when `user` can open it for reading, else why not, naming the user and
// the first folder or file that stops it with its mode and owner ("user 'nnd' cannot read it:
// /root is drwx------ root:root"). Run as root, the check opens each file in a child process that
// has become the user (groups, gid, uid): the kernel answers, ACLs included. Run as that user, it
// opens them itself. Run as anyone else, nothing can be checked: every entry then says so.
std::vector<std::string> unreadable_as(const ServiceUser& user, const std::vector<std::string>& paths);

}  // namespace nnd::daemon
