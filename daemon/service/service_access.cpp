#include "daemon/service/service_access.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace nnd::daemon {

namespace {

namespace fs = std::filesystem;

std::optional<ServiceUser> lookup(const std::string& name, const std::string& because) {
  struct passwd pw {}, *res = nullptr;
  std::vector<char> buf(16384);
  uid_t uid = 0;
  char* end = nullptr;
  const unsigned long n = std::strtoul(name.c_str(), &end, 10);
  const bool numeric = !name.empty() && end && *end == '\0';
  if (numeric) uid = static_cast<uid_t>(n);
  const int rc = numeric ? ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &res)
                         : ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res);
  if (rc != 0 || !res) return std::nullopt;
  return ServiceUser{res->pw_name, res->pw_uid, res->pw_gid, because};
}

std::string user_name(uid_t u) {
  struct passwd pw {}, *res = nullptr;
  char buf[4096];
  if (::getpwuid_r(u, &pw, buf, sizeof buf, &res) == 0 && res) return res->pw_name;
  return std::to_string(u);
}

std::string group_name(gid_t g) {
  struct group gr {}, *res = nullptr;
  char buf[4096];
  if (::getgrgid_r(g, &gr, buf, sizeof buf, &res) == 0 && res) return res->gr_name;
  return std::to_string(g);
}

// "drwx------ root:root", as ls shows it.
std::string mode_and_owner(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string("(cannot stat: ") + std::strerror(errno) + ")";
  char m[11] = "----------";
  if (S_ISDIR(st.st_mode)) m[0] = 'd';
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i) {
    if (st.st_mode & (1u << (8 - i))) m[i + 1] = rwx[i];
  }
  return std::string(m) + " " + user_name(st.st_uid) + ":" + group_name(st.st_gid);
}

// In the calling process (already the user): "" or the first component that stops a read of
// `path`, with errno.
std::string first_obstacle(const std::string& path, int* err) {
  const fs::path p = fs::path(path).lexically_normal();
  fs::path prefix;
  for (auto it = p.begin(); it != p.end(); ++it) {
    prefix /= *it;
    if (std::next(it) == p.end()) break;
    if (prefix == "/") continue;
    if (::access(prefix.c_str(), X_OK) != 0) {
      *err = errno;
      return prefix.string();
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return path;
  }
  ::close(fd);
  return "";
}

std::string describe(const ServiceUser& u, const std::string& obstacle, int err) {
  std::string why = "user '" + u.name + "' (" + u.because + ") cannot read it: ";
  if (err == EACCES || err == EPERM) return why + obstacle + " is " + mode_and_owner(obstacle);
  return why + obstacle + ": " + std::strerror(err);
}

}  // namespace

std::optional<ServiceUser> service_user(const DaemonSettings& d, const std::optional<ServiceUnit>& unit) {
  if (!d.run_as.empty()) {
    std::optional<ServiceUser> u = lookup(d.run_as, "daemon.run_as");
    if (u && d.run_as_gid) u->gid = *d.run_as_gid;
    return u;  // the config check already refused a run_as the user database lacks
  }
  if (unit && !unit->user.empty()) {
    std::optional<ServiceUser> u = lookup(unit->user, "User= of " + unit->source);
    if (!u) throw std::runtime_error(unit->source + ": User=" + unit->user + " is not in the user database");
    return u;
  }
  return std::nullopt;
}

std::vector<std::string> unreadable_as(const ServiceUser& user, const std::vector<std::string>& paths) {
  std::vector<std::string> out(paths.size());
  if (::geteuid() == user.uid) {
    for (size_t i = 0; i < paths.size(); ++i) {
      int err = 0;
      const std::string obstacle = first_obstacle(paths[i], &err);
      if (!obstacle.empty()) out[i] = describe(user, obstacle, err);
    }
    return out;
  }
  if (::geteuid() != 0) {
    for (std::string& s : out) {
      s = "not checked as user '" + user.name + "' (" + user.because + "): run nnd --check as root or as " + user.name;
    }
    return out;
  }
  // Root: a child becomes the user and reports, per path, the obstacle and errno ("i errno path").
  int fd[2];
  if (::pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fd[0]);
    if (::initgroups(user.name.c_str(), user.gid) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) {
      ::_exit(3);
    }
    std::string report;
    for (size_t i = 0; i < paths.size(); ++i) {
      int err = 0;
      const std::string obstacle = first_obstacle(paths[i], &err);
      if (!obstacle.empty()) report += std::to_string(i) + " " + std::to_string(err) + " " + obstacle + "\n";
    }
    const char* p = report.data();
    size_t left = report.size();
    while (left > 0) {
      const ssize_t n = ::write(fd[1], p, left);
      if (n <= 0) ::_exit(4);
      p += n;
      left -= static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fd[1]);
  std::string report;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) report.append(buf, static_cast<size_t>(n));
  }
  ::close(fd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("could not become user '" + user.name + "' to check the files (child status " +
                             std::to_string(status) + ")");
  }
  size_t pos = 0;
  while (pos < report.size()) {
    const size_t eol = report.find('\n', pos);
    const std::string line = report.substr(pos, eol - pos);
    pos = eol == std::string::npos ? report.size() : eol + 1;
    const size_t s1 = line.find(' '), s2 = line.find(' ', s1 + 1);
    if (s1 == std::string::npos || s2 == std::string::npos) continue;
    const size_t i = std::stoul(line.substr(0, s1));
    if (i < out.size()) out[i] = describe(user, line.substr(s2 + 1), std::stoi(line.substr(s1 + 1, s2 - s1 - 1)));
  }
  return out;
}

}  // namespace nnd::daemon
