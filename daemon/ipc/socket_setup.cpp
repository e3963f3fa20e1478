#include "daemon/ipc/socket_setup.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "daemon/base/daemon_error.h"
#include "ipc/nnd_endpoint.h"

namespace nnd::daemon {

namespace {

constexpr LogLevel kWarn = LogLevel::kWarning, kNotice = LogLevel::kNotice, kInfo = LogLevel::kInfo;

std::string errno_text(const std::string& what, int e) { return what + ": " + std::strerror(e); }

std::string octal_mode(mode_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0%o", static_cast<unsigned>(m & 07777));
  return buf;
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

const char* file_kind(mode_t m) {
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "a file";
}

bool is_own_or_listed(uid_t uid, const std::vector<uid_t>& owners) {
  return uid == 0 || uid == ::geteuid() ||
         std::find(owners.begin(), owners.end(), uid) != owners.end();
}

// What answers on the socket at `addr`, if anything.
struct Probe {
  enum { kNobody, kLive, kUnknown } state = kUnknown;
  std::optional<ucred> peer;  // the listener's credentials (from its listen() call), when known
  int error = 0;              // errno of a failed connect
};

Probe probe_socket(const sockaddr_un& addr) {
  Probe p;
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    p.error = errno;
    return p;
  }
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    p.state = Probe::kLive;
    ucred c{};
    socklen_t len = sizeof c;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0) p.peer = c;
  } else {
    p.error = errno;
    // ECONNREFUSED: a socket file nobody listens on. EAGAIN: a listener whose backlog is full.
    // ENOENT: gone meanwhile. Anything else (EACCES, EPROTOTYPE ...) leaves it unknown.
    if (p.error == ECONNREFUSED || p.error == ENOENT) p.state = Probe::kNobody;
    if (p.error == EAGAIN) p.state = Probe::kLive;
  }
  ::close(fd);
  return p;
}

// The program name of process `pid` (/proc/PID/comm), "" when it cannot be read.
std::string program_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// Who serves on a live socket: "another nnd (pid 123, user 'nnd' (uid 998))", or for a program
// that is not nnd "pid 123 ('python3', user ...)"; without credentials, the socket file's owner.
std::string describe_listener(const Probe& p, uid_t file_owner) {
  if (!p.peer) return "a process of " + describe_uid(file_owner);
  const std::string program = program_of(p.peer->pid);
  const std::string who = "pid " + std::to_string(p.peer->pid);
  if (program == "nnd") return "another nnd (" + who + ", " + describe_uid(p.peer->uid) + ")";
  return who + " (" + (program.empty() ? "" : "'" + program + "', ") + describe_uid(p.peer->uid) +
         ")";
}

// A live socket at `path` that is nnd's own kind of listener (another daemon): say so.
std::string in_use(const std::string& path, const Probe& p, uid_t file_owner) {
  return path + " is in use: " + describe_listener(p, file_owner) + " is serving on it. Stop it "
         "first (`systemctl stop nnd` when it is the service), or give this daemon another "
         "endpoint (--endpoint or daemon.endpoint)";
}

// Whether `uid` (not root) could remove an entry owned by `entry_owner` from the directory `dir`
// (approximately: supplementary groups are not looked at).
bool can_remove_entry(const struct stat& dir, uid_t uid, uid_t entry_owner) {
  const bool writable = (dir.st_uid == uid && (dir.st_mode & S_IWUSR)) || (dir.st_mode & S_IWOTH);
  if (!writable) return false;
  return !(dir.st_mode & S_ISVTX) || entry_owner == uid || dir.st_uid == uid;
}

}  // namespace

std::string socket_path_for_endpoint(const std::string& endpoint) {
  return nnd_endpoint_path_string(endpoint);  // the rule is ipc/nnd_endpoint.h's
}

std::string describe_uid(uid_t uid) {
  char buf[4096];
  passwd pw{};
  passwd* res = nullptr;
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res != nullptr) {
    return "user '" + std::string(res->pw_name) + "' (uid " + std::to_string(uid) + ")";
  }
  return "uid " + std::to_string(uid);
}

std::string check_socket_directory(const std::string& dir, const std::vector<uid_t>& owners) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int e = errno;
    return errno_text("socket directory " + dir, e) +
           " (create it, e.g. with systemd's RuntimeDirectory=nnd, or point NND_RUNTIME_DIR or "
           "daemon.endpoint elsewhere)";
  }
  if (!S_ISDIR(st.st_mode)) return "socket directory " + dir + " is not a directory";
  // Whoever owns the directory can replace the socket in it with their own.
  if (!is_own_or_listed(st.st_uid, owners)) {
    return "socket directory " + dir + " belongs to " + describe_uid(st.st_uid) +
           ": its owner could replace the daemon's socket, so only root or the daemon's own user (" +
           describe_uid(::geteuid()) + ") may own it; run this daemon as " +
           describe_uid(st.st_uid) + " (daemon.run_as), or point NND_RUNTIME_DIR or "
           "daemon.endpoint at another directory that root or the daemon's user owns";
  }
  // Anyone who may write it could too, unless it is sticky (like /tmp: there only a file's
  // owner may remove or rename the file).
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
    return "socket directory " + dir + " is writable by " +
           ((st.st_mode & S_IWOTH) ? "everyone" : "its group") + " (mode " +
           octal_mode(st.st_mode) + ") and not sticky, so others could replace the daemon's "
           "socket; chmod go-w " + dir + " (or chmod +t for a shared directory like /tmp)";
  }
  return {};
}

int bind_listening_socket(const SocketSetup& setup, const Logger& log) {
  const std::string& path = setup.path;
  if (path.empty()) throw DaemonError(DaemonErrorCode::kSystem, "empty endpoint: no socket path");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) throw DaemonError(DaemonErrorCode::kSystem, "socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  const std::string dir = directory_of(path);
  if (std::string why = check_socket_directory(dir, setup.directory_owners); !why.empty()) {
    // A second `sudo nnd` while the service runs finds /run/nnd owned by the service's user: what
    // stops it is the daemon serving there, not the folder. (Connecting is harmless in a folder
    // nnd would not bind in: it only reads the listener's credentials.)
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      if (const Probe p = probe_socket(addr); p.state == Probe::kLive) {
        throw DaemonError(DaemonErrorCode::kSystem, in_use(path, p, st.st_uid));
      }
    }
    throw DaemonError(DaemonErrorCode::kSystem, why);
  }

  // Something is there already: replace it only when it is a socket nobody answers on (left by
  // a daemon killed with -9).
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    const std::string owner = describe_uid(st.st_uid);
    if (!S_ISSOCK(st.st_mode)) {
      throw DaemonError(DaemonErrorCode::kSystem, path + " exists and is not a socket (" + file_kind(st.st_mode) +
                               " of " + owner + "); nnd does not remove it: delete it if it is "
                               "not needed, or choose another daemon.endpoint");
    }
    const Probe p = probe_socket(addr);
    if (p.state == Probe::kLive) {
      const uid_t listener = p.peer ? p.peer->uid : st.st_uid;
      const std::string pid = p.peer ? ", served by pid " + std::to_string(p.peer->pid) : "";
      if (is_own_or_listed(listener, setup.directory_owners)) {
        throw DaemonError(DaemonErrorCode::kSystem, in_use(path, p, st.st_uid));
      }
      throw DaemonError(DaemonErrorCode::kSystem, path + " is a live socket of " + describe_uid(listener) + pid +
                               ", not of the daemon's user: another program has taken the "
                               "endpoint (clients refuse to talk to it). Stop that program or "
                               "remove the socket, and use a socket directory only root and the "
                               "daemon's user can write (/run/nnd, see config/SCHEMA.md)");
    }
    if (p.state == Probe::kUnknown) {
      throw DaemonError(DaemonErrorCode::kSystem, errno_text("cannot tell whether anyone serves on " + path + " (" +
                                              owner + ")",
                                          p.error) +
                               "; remove it if nothing does");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      const int e = errno;
      throw DaemonError(DaemonErrorCode::kSystem, errno_text("cannot remove the stale socket " + path + " of " + owner, e) +
                               "; remove it as root or as that user");
    }
    log(kInfo, "removed the stale socket " + path + " (" + owner + ", nobody answered on it)");
  }

  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw DaemonError(DaemonErrorCode::kSystem, errno_text("socket", errno));
  auto fail = [fd, &path](const std::string& what, int e) {
    ::close(fd);
    throw DaemonError(DaemonErrorCode::kSystem, errno_text(what + " " + path, e));
  };
  // Create the socket file with no access and open it up once owner and mode are right.
  const mode_t old = ::umask(0777);
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  ::umask(old);
  if (rc != 0) fail("bind", bind_errno);
  // The allowed user owns the socket file and the allowed group is its group, so each can connect
  // through the 0660 mode whether or not the other is configured (a user without a group used to
  // leave it root:root). Who is admitted is still decided by peer credentials.
  if (setup.owner || setup.group) {
    const uid_t u = setup.owner ? *setup.owner : static_cast<uid_t>(-1);
    const gid_t g = setup.group ? *setup.group : static_cast<gid_t>(-1);
    if (::chown(path.c_str(), u, g) != 0) {
      log(kWarn, errno_text("chown " + path + " to the configured user/group", errno) +
                     " (only the daemon's own user and root can connect)");
    }
  }
  // Never wider than 0660 (config/SCHEMA.md): others get no access to the socket file.
  if (::chmod(path.c_str(), setup.mode & 0660) != 0) fail("chmod", errno);
  if (::listen(fd, 64) != 0) fail("listen", errno);

  // The daemon is about to switch users (daemon.run_as): say now if it will not be able to
  // remove the socket at exit. That is harmless (the next start replaces a socket nobody answers
  // on), but worth knowing.
  struct stat dst {};
  const uid_t file_owner = setup.owner ? *setup.owner : ::geteuid();
  for (uid_t u : setup.directory_owners) {
    if (u != 0 && ::stat(dir.c_str(), &dst) == 0 && !can_remove_entry(dst, u, file_owner)) {
      log(kNotice, describe_uid(u) + " cannot remove " + path + " at exit (" + dir +
                       " is not writable for it): the socket file stays behind until the next "
                       "start replaces it");
    }
  }
  return fd;
}

}  // namespace nnd::daemon
