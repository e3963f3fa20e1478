/* nnd_endpoint.h — where the socket of an nnd endpoint lives: the one rule shared by the daemon
 * (daemon/config, daemon/ipc) and libnnclient, so that they can never disagree.
 *
 * Header-only and plain C11 (also valid C++20), like nnd_ipc.h; it includes nothing but libc (and
 * <string> for the one C++ convenience at the end).
 *
 * The rule:
 *   - An endpoint containing '/' is the socket path itself ("/srv/robot/nnd.sock", "./x.sock").
 *   - Any other endpoint is a name: the socket is <dir>/<name>.sock, where <dir> is
 *       $NND_RUNTIME_DIR when it is set and not empty, else
 *       /run/nnd when that is a directory (systemd's RuntimeDirectory=nnd makes it), else
 *       /tmp (the fallback: a developer machine, or a robot without the systemd unit).
 *   - An empty endpoint names nothing (an error). Choosing a default name ("nnd", or
 *     $NND_ENDPOINT in libnnclient) is the caller's business, before applying the rule.
 *
 * Who may be found at that path is not part of the rule: the daemon checks the socket's directory
 * before it binds (daemon/ipc/socket_setup.h) and the client checks the daemon's credentials after
 * it connects (client/nnclient_trust.c), so that in a directory anyone can write (the /tmp
 * fallback) an impostor can at worst keep the daemon from starting, never be talked to.
 */
#ifndef NND_ENDPOINT_H
#define NND_ENDPOINT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NND_ENDPOINT_DEFAULT_NAME "nnd"
#define NND_ENDPOINT_ENV_RUNTIME_DIR "NND_RUNTIME_DIR"
#define NND_ENDPOINT_SYSTEM_DIR "/run/nnd"
#define NND_ENDPOINT_FALLBACK_DIR "/tmp"

/* The directory endpoint names resolve in, from explicit inputs (tests pass their own
 * directories): `runtime_dir` (the value of $NND_RUNTIME_DIR, may be NULL) when not empty, else
 * `system_dir` when it is a directory, else `fallback_dir`. Returns one of the three pointers. */
static inline const char* nnd_endpoint_dir_from(const char* runtime_dir, const char* system_dir,
                                                const char* fallback_dir) {
  if (runtime_dir && runtime_dir[0]) return runtime_dir;
  struct stat st;
  if (system_dir && stat(system_dir, &st) == 0 && S_ISDIR(st.st_mode)) return system_dir;
  return fallback_dir;
}

/* The directory endpoint names resolve in for this process, by the rule above. */
static inline const char* nnd_endpoint_dir(void) {
  return nnd_endpoint_dir_from(getenv(NND_ENDPOINT_ENV_RUNTIME_DIR), NND_ENDPOINT_SYSTEM_DIR,
                               NND_ENDPOINT_FALLBACK_DIR);
}

/* Writes the socket path of `endpoint` to out[n] (NUL-terminated; `out` may be NULL when n is 0):
 * the endpoint itself when it contains '/', else <dir>/<endpoint>.sock. Returns the length of the
 * full path like snprintf (a value >= n means it was cut short), or -1 for a NULL or empty
 * endpoint. The caller checks the length against its limit (sockaddr_un's sun_path). */
static inline int nnd_endpoint_path_in(const char* endpoint, const char* dir, char* out,
                                       size_t n) {
  if (!endpoint || !endpoint[0]) {
    if (out && n) out[0] = '\0';
    return -1;
  }
  if (strchr(endpoint, '/')) return snprintf(out, n, "%s", endpoint);
  return snprintf(out, n, "%s/%s.sock", dir, endpoint);
}

/* nnd_endpoint_path_in with this process's directory (nnd_endpoint_dir()). */
static inline int nnd_endpoint_path(const char* endpoint, char* out, size_t n) {
  return nnd_endpoint_path_in(endpoint, nnd_endpoint_dir(), out, n);
}

#ifdef __cplusplus
#include <string>
/* For the daemon's C++ (config, IPC server): the socket path of `endpoint` for this process, or
 * an empty string for an empty endpoint. */
inline std::string nnd_endpoint_path_string(const std::string& endpoint) {
  const char* dir = nnd_endpoint_dir();
  const int len = nnd_endpoint_path_in(endpoint.c_str(), dir, nullptr, 0);
  if (len < 0) return std::string();
  std::string path(static_cast<size_t>(len), '\0');
  nnd_endpoint_path_in(endpoint.c_str(), dir, path.data(), path.size() + 1);
  return path;
}
#endif

#endif /* NND_ENDPOINT_H */
