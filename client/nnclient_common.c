/* nnclient_common.c — libnnclient's errors and status text, its version, and the small helpers
 * every unit uses. */
#define _GNU_SOURCE 1

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nnclient.h"
#include "nnclient_internal.h"

_Thread_local char nnc_open_err[NNC_ERR_BYTES];

/* ---- small helpers ------------------------------------------------------------------------ */

int64_t nnc_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

nnclient_status nnc_set_err(nnclient_t* c, nnclient_status st, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
  return st;
}

/* A system call failed: errno text in the message. */
nnclient_status nnc_sys_err(nnclient_t* c, const char* what) {
  const int e = errno;
  char buf[128];
  const char* text = strerror_r(e, buf, sizeof buf); /* GNU variant */
  return nnc_set_err(c, NNCLIENT_E_SYSTEM, "%s: %s (errno %d)", what, text, e);
}

void nnc_copy_name(char* dst, const char* src, size_t n) {
  size_t i = 0;
  for (; i + 1 < n && src[i]; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

/* Status of a slot or control reply as the API's status. The codes share their numbers; an
 * unknown value is a protocol error. */
nnclient_status nnc_from_ipc(int32_t s) {
  switch (s) {
    case NND_IPC_OK: return NNCLIENT_OK;
    case NND_IPC_E_UNKNOWN_MODEL: return NNCLIENT_E_UNKNOWN_MODEL;
    case NND_IPC_E_MODEL_CHANGED: return NNCLIENT_E_MODEL_CHANGED;
    case NND_IPC_E_SHAPE: return NNCLIENT_E_SHAPE;
    case NND_IPC_E_DEADLINE: return NNCLIENT_E_DEADLINE;
    case NND_IPC_E_BAD_REQUEST: return NNCLIENT_E_PROTOCOL;
    case NND_IPC_E_OVERLOADED: return NNCLIENT_E_OVERLOADED;
    case NND_IPC_E_INTERNAL: return NNCLIENT_E_INTERNAL;
    case NND_IPC_E_SHUTTING_DOWN: return NNCLIENT_E_SHUTTING_DOWN;
    case NND_IPC_E_ACCESS: return NNCLIENT_E_ACCESS;
    case NND_IPC_E_TOO_MANY_CLIENTS: return NNCLIENT_E_TOO_MANY_CLIENTS;
    case NND_IPC_E_TOO_MANY_REQUESTS: return NNCLIENT_E_TOO_MANY_REQUESTS;
    case NND_IPC_E_REQUEST_TOO_LARGE: return NNCLIENT_E_REQUEST_TOO_LARGE;
    case NND_IPC_E_MEMORY_LIMIT: return NNCLIENT_E_MEMORY_LIMIT;
    case NND_IPC_E_RELOAD_FAILED: return NNCLIENT_E_RELOAD_FAILED;
    default: return NNCLIENT_E_PROTOCOL;
  }
}

/* ---- version ------------------------------------------------------------------------------ */

#define NNC_STR_(x) #x
#define NNC_STR(x) NNC_STR_(x)

/* Built from the header's macros at library build time, so an application compiled against
 * another header still learns which library it runs with. */
NNC_EXPORT const char* nnclient_version(void) {
  return NNC_STR(NNCLIENT_VERSION_MAJOR) "." NNC_STR(NNCLIENT_VERSION_MINOR) "." NNC_STR(
      NNCLIENT_VERSION_PATCH);
}

/* ---- status text -------------------------------------------------------------------------- */

NNC_EXPORT const char* nnclient_strerror(nnclient_status s) {
  switch (s) {
    case NNCLIENT_OK: return "success";
    case NNCLIENT_E_DAEMON_NOT_RUNNING: return "daemon not running";
    case NNCLIENT_E_UNKNOWN_MODEL: return "unknown model";
    case NNCLIENT_E_MODEL_CHANGED: return "model changed by a reload";
    case NNCLIENT_E_SHAPE: return "batch or buffer size does not fit the model";
    case NNCLIENT_E_TIMEOUT: return "timed out waiting for the daemon";
    case NNCLIENT_E_DEADLINE: return "deadline passed before the request could run";
    case NNCLIENT_E_DAEMON_RESTARTED: return "daemon restarted or went away";
    case NNCLIENT_E_INVALID_ARGUMENT: return "invalid argument";
    case NNCLIENT_E_PROTOCOL: return "protocol error (daemon speaks another protocol version?)";
    case NNCLIENT_E_OVERLOADED: return "daemon overloaded";
    case NNCLIENT_E_INTERNAL: return "daemon failed running the model";
    case NNCLIENT_E_SHUTTING_DOWN: return "daemon shutting down";
    case NNCLIENT_E_ACCESS: return "access refused by the daemon";
    case NNCLIENT_E_NO_SLOT: return "all request slots are in flight";
    case NNCLIENT_E_SYSTEM: return "system call failed";
    case NNCLIENT_E_TOO_MANY_CLIENTS: return "the daemon serves its maximum number of clients";
    case NNCLIENT_E_TOO_MANY_REQUESTS: return "too many requests of this client in the daemon";
    case NNCLIENT_E_REQUEST_TOO_LARGE: return "request input larger than the daemon allows";
    case NNCLIENT_E_MEMORY_LIMIT: return "the daemon's shared-memory limit is reached";
    case NNCLIENT_E_RELOAD_FAILED: return "reload failed: the config or a model has errors";
  }
  return "unknown status";
}

NNC_EXPORT const char* nnclient_status_name(nnclient_status s) {
  switch (s) {
    case NNCLIENT_OK: return "NNCLIENT_OK";
    case NNCLIENT_E_DAEMON_NOT_RUNNING: return "NNCLIENT_E_DAEMON_NOT_RUNNING";
    case NNCLIENT_E_UNKNOWN_MODEL: return "NNCLIENT_E_UNKNOWN_MODEL";
    case NNCLIENT_E_MODEL_CHANGED: return "NNCLIENT_E_MODEL_CHANGED";
    case NNCLIENT_E_SHAPE: return "NNCLIENT_E_SHAPE";
    case NNCLIENT_E_TIMEOUT: return "NNCLIENT_E_TIMEOUT";
    case NNCLIENT_E_DEADLINE: return "NNCLIENT_E_DEADLINE";
    case NNCLIENT_E_DAEMON_RESTARTED: return "NNCLIENT_E_DAEMON_RESTARTED";
    case NNCLIENT_E_INVALID_ARGUMENT: return "NNCLIENT_E_INVALID_ARGUMENT";
    case NNCLIENT_E_PROTOCOL: return "NNCLIENT_E_PROTOCOL";
    case NNCLIENT_E_OVERLOADED: return "NNCLIENT_E_OVERLOADED";
    case NNCLIENT_E_INTERNAL: return "NNCLIENT_E_INTERNAL";
    case NNCLIENT_E_SHUTTING_DOWN: return "NNCLIENT_E_SHUTTING_DOWN";
    case NNCLIENT_E_ACCESS: return "NNCLIENT_E_ACCESS";
    case NNCLIENT_E_NO_SLOT: return "NNCLIENT_E_NO_SLOT";
    case NNCLIENT_E_SYSTEM: return "NNCLIENT_E_SYSTEM";
    case NNCLIENT_E_TOO_MANY_CLIENTS: return "NNCLIENT_E_TOO_MANY_CLIENTS";
    case NNCLIENT_E_TOO_MANY_REQUESTS: return "NNCLIENT_E_TOO_MANY_REQUESTS";
    case NNCLIENT_E_REQUEST_TOO_LARGE: return "NNCLIENT_E_REQUEST_TOO_LARGE";
    case NNCLIENT_E_MEMORY_LIMIT: return "NNCLIENT_E_MEMORY_LIMIT";
    case NNCLIENT_E_RELOAD_FAILED: return "NNCLIENT_E_RELOAD_FAILED";
  }
  return "NNCLIENT_E_UNKNOWN_STATUS";
}

NNC_EXPORT const char* nnclient_last_error(const nnclient_t* c) {
  return c ? c->err : nnc_open_err;
}

/* Waits up to timeout_ms for the socket to become readable. 1 ready, 0 timeout, -1 error. */
int nnc_wait_readable(int fd, int timeout_ms) {
  const int64_t end = nnc_mono_ns() + (int64_t)timeout_ms * 1000000LL;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int64_t left = (end - nnc_mono_ns()) / 1000000LL;
    if (left < 0) left = 0;
    const int r = poll(&p, 1, (int)left);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return -1;
  }
}
