/* nnclient.c — libnnclient: the client side of the nnd IPC protocol (ipc/nnd_ipc.h).
 *
 * Plain C11 plus Linux system calls; links nothing but libc. One handle owns one connection: the
 * control socket, the eventfd that wakes the daemon and the mapping of the client's segment
 * ("seg" below). A reconnect makes a new seg; the old one stays mapped until every request that
 * still points into it has been released, so a pointer from nnclient_request_input never dangles.
 *
 * Data path (no lock, no system call while the daemon keeps up; the ring and wake-flag steps are
 * the shared functions of ipc/nnd_ipc_ring.h):
 *   submit: write the slot, push its index on the submit ring (release), then — only if the
 *           daemon announced it may sleep — write the eventfd.
 *   wait:   pop the complete ring; spin up to spin_us with a pause instruction; then announce
 *           client_sleeping, re-check, and FUTEX_WAIT (shared, not private) on complete_seq in
 *           slices of at most 20 ms, polling the control socket between slices so a dead daemon
 *           is noticed (POLLHUP/EOF) within the caller's timeout.
 */
#define _GNU_SOURCE 1

#include "nnclient.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc/nnd_endpoint.h"
#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"
#include "nnclient_private.h"

#define NNC_EXPORT __attribute__((visibility("default")))

#define NNC_MAX_REQUESTS (2u * NND_IPC_MAX_SLOTS) /* request objects per handle */
#define NNC_SIG_CACHE 16u                         /* validated (model, signature) per connection */
#define NNC_LIVENESS_NS (50LL * 1000 * 1000)      /* idle time after which a call polls the socket */
#define NNC_SLEEP_SLICE_NS (20LL * 1000 * 1000)   /* longest futex sleep between socket checks */
#define NNC_CONTROL_TIMEOUT_MS 5000               /* hand-shake, model info, list, stats */
#define NNC_RELOAD_TIMEOUT_MS 120000              /* a reload compiles models */
#define NNC_DEFAULT_SPIN_US 30u
#define NNC_ERR_BYTES 512u

enum { REQ_FREE = 0, REQ_BEGUN, REQ_SUBMITTED, REQ_DONE };

struct nnc_seg {
  unsigned char* base;
  size_t bytes;
  struct nnd_ipc_header* hdr;
  struct nnd_ipc_slot* slots;
  unsigned char* data;
  uint32_t nslots;
  uint64_t slot_data_bytes;
  uint32_t submit_head;   /* local copy: only this client writes submit.head */
  uint32_t complete_tail; /* local copy: only this client writes complete.tail */
  uint32_t free_slots[NND_IPC_MAX_SLOTS];
  uint32_t nfree;
  struct nnclient_request* slot_req[NND_IPC_MAX_SLOTS]; /* NULL: free or abandoned */
  unsigned char slot_busy[NND_IPC_MAX_SLOTS];
  int refs; /* 1 while current + one per request object pointing here */
  int dead;
  struct {
    char name[NND_IPC_MAX_NAME];
    uint64_t signature;
  } cache[NNC_SIG_CACHE];
  uint32_t ncache, cache_next;
};

struct nnclient_request {
  nnclient_t* owner;
  struct nnc_seg* seg;
  struct nnclient_request* next_free;
  uint32_t state, slot, batch, sequence;
  nnclient_status status;
  uint32_t n_in, n_out;
  uint64_t in_off[NNCLIENT_MAX_TENSORS], in_len[NNCLIENT_MAX_TENSORS];
  uint64_t out_off[NNCLIENT_MAX_TENSORS], out_len[NNCLIENT_MAX_TENSORS];
  uint64_t input_end;
  uint64_t signature;
  char model[NND_IPC_MAX_NAME];
};

struct nnclient_handle {
  char path[sizeof(((struct sockaddr_un*)0)->sun_path)];
  int sock, efd;
  struct nnc_seg* seg; /* current connection's segment; NULL while disconnected */
  int broken;          /* the connection is known dead/desynchronised: reconnect on next call */
  uint64_t daemon_instance;
  /* What the hand-shake asks for (nnd_ipc_hello): kept across reconnects, so a handle that grew
   * its slots gets the same size from a restarted daemon. */
  uint32_t want_slots;      /* 0: the daemon's default */
  uint64_t want_slot_bytes; /* 0: one sample of the largest served model */
  unsigned spin_us;
  int ctl_timeout_ms; /* bound of control waits in the current call (the caller's timeout) */
  uint32_t next_sequence;
  int64_t last_alive_ns;
  struct nnclient_request* free_reqs;
  struct nnclient_request reqs[NNC_MAX_REQUESTS];
  char err[NNC_ERR_BYTES];
};

static _Thread_local char nnc_open_err[NNC_ERR_BYTES];

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static nnclient_status set_err(nnclient_t* c, nnclient_status st, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
static nnclient_status set_err(nnclient_t* c, nnclient_status st, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
  return st;
}

/* A system call failed: errno text in the message. */
static nnclient_status sys_err(nnclient_t* c, const char* what) {
  const int e = errno;
  char buf[128];
  const char* text = strerror_r(e, buf, sizeof buf); /* GNU variant */
  return set_err(c, NNCLIENT_E_SYSTEM, "%s: %s (errno %d)", what, text, e);
}

static void copy_name(char* dst, const char* src, size_t n) {
  size_t i = 0;
  for (; i + 1 < n && src[i]; ++i) dst[i] = src[i];
  dst[i] = '\0';
}

/* Status of a slot or control reply as the API's status. The codes share their numbers; an
 * unknown value is a protocol error. */
static nnclient_status from_ipc(int32_t s) {
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
  }
  return "NNCLIENT_E_UNKNOWN_STATUS";
}

NNC_EXPORT const char* nnclient_last_error(const nnclient_t* c) {
  return c ? c->err : nnc_open_err;
}

/* ---- endpoint ----------------------------------------------------------------------------- */

nnclient_status nnclient_resolve_endpoint(const char* endpoint, char* out, size_t n) {
  if (!out || n == 0) return NNCLIENT_E_INVALID_ARGUMENT;
  out[0] = '\0';
  if (!endpoint) {
    const char* env = getenv("NND_ENDPOINT");
    endpoint = (env && env[0]) ? env : NND_ENDPOINT_DEFAULT_NAME;
  }
  const size_t max = sizeof(((struct sockaddr_un*)0)->sun_path);
  const int len = nnd_endpoint_path(endpoint, out, n); /* the rule of ipc/nnd_endpoint.h */
  if (len < 0 || (size_t)len >= n || (size_t)len >= max) {
    out[0] = '\0';
    return NNCLIENT_E_INVALID_ARGUMENT;
  }
  return NNCLIENT_OK;
}

unsigned nnclient_spin_us(const nnclient_t* c) { return c ? c->spin_us : 0; }

static unsigned choose_spin_us(void) {
  unsigned spin = NNC_DEFAULT_SPIN_US;
  const char* env = getenv("NNCLIENT_SPIN_US");
  if (env && env[0]) {
    char* end = NULL;
    const unsigned long v = strtoul(env, &end, 10);
    if (end && *end == '\0') spin = v > 1000 ? 1000u : (unsigned)v;
  }
  /* Spinning while the daemon needs the only CPU we may run on only delays it. */
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) <= 1) spin = 0;
  return spin;
}

/* ---- segments ----------------------------------------------------------------------------- */

static void seg_unref(struct nnc_seg* s) {
  if (!s || --s->refs > 0) return;
  munmap(s->base, s->bytes);
  free(s);
}

static void disconnect(nnclient_t* c) {
  if (c->seg) {
    c->seg->dead = 1;
    seg_unref(c->seg);
    c->seg = NULL;
  }
  if (c->sock >= 0) close(c->sock);
  if (c->efd >= 0) close(c->efd);
  c->sock = c->efd = -1;
  c->broken = 0;
}

/* Reports whether the control socket is still connected (no hang-up, no EOF). Never blocks. */
static int socket_alive(nnclient_t* c) {
  if (c->sock < 0) return 0;
  struct pollfd p = {.fd = c->sock, .events = POLLIN};
  int r;
  do r = poll(&p, 1, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0) return 0;
  if (r == 0) return 1;
  if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) return 0;
  if (p.revents & POLLIN) {
    /* The daemon sends nothing unasked: EOF means it is gone; anything else is discarded. */
    char buf[16];
    const ssize_t n = recv(c->sock, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) return 0;
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    (void)recv(c->sock, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
  }
  return 1;
}

/* Waits up to timeout_ms for the socket to become readable. 1 ready, 0 timeout, -1 error. */
static int wait_readable(int fd, int timeout_ms) {
  const int64_t end = mono_ns() + (int64_t)timeout_ms * 1000000LL;
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int64_t left = (end - mono_ns()) / 1000000LL;
    if (left < 0) left = 0;
    const int r = poll(&p, 1, (int)left);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

/* ---- who is the daemon? ------------------------------------------------------------------ */

/* Before the hand-shake the client makes sure that whoever listens on the socket is trusted to be
 * the daemon: anyone may bind the path in a directory others can write (the /tmp fallback), and
 * the daemon is handed the requests' data. SO_PEERCRED gives the user of the process that called
 * listen() on the socket (nnd binds and listens before it drops root, so a daemon started as root
 * with daemon.run_as shows as root). Trusted: root; this process's effective user; the owner of
 * the socket's directory when nobody else could have put the socket there (every directory from
 * it up to '/' is owned by root or that owner and writable by no one else: /run/nnd, not /tmp);
 * the system user "nnd" when it exists; users listed in $NNCLIENT_TRUSTED_USERS. */

#define NNC_DAEMON_USER "nnd"
#define NNC_TRUSTED_USERS_ENV "NNCLIENT_TRUSTED_USERS"

/* The uid of user `name` (a user name, or a number). 1 when known. */
static int uid_of(const char* name, uid_t* out) {
  char* end = NULL;
  errno = 0;
  const unsigned long v = strtoul(name, &end, 10);
  if (end != name && *end == '\0' && errno == 0 && isdigit((unsigned char)name[0])) {
    *out = (uid_t)v;
    return 1;
  }
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwnam_r(name, &pw, buf, sizeof buf, &res) != 0 || !res) return 0;
  *out = res->pw_uid;
  return 1;
}

/* Whether `uid` is one of the comma-separated users in `list` (may be NULL). */
static int uid_listed(const char* list, uid_t uid) {
  char name[256];
  while (list && *list) {
    const char* comma = strchr(list, ',');
    const size_t len = comma ? (size_t)(comma - list) : strlen(list);
    uid_t u;
    if (len > 0 && len < sizeof name) {
      memcpy(name, list, len);
      name[len] = '\0';
      if (uid_of(name, &u) && u == uid) return 1;
    }
    list = comma ? comma + 1 : NULL;
  }
  return 0;
}

/* The owner of the directory holding `socket_path`, when that directory and every one above it is
 * owned by root or that owner and writable by no one else. 1 when so. */
static int trusted_directory_owner(const char* socket_path, uid_t* owner) {
  char dir[PATH_MAX], real[PATH_MAX];
  const char* slash = strrchr(socket_path, '/');
  if (!slash) {
    snprintf(dir, sizeof dir, ".");
  } else if (slash == socket_path) {
    snprintf(dir, sizeof dir, "/");
  } else {
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - socket_path), socket_path);
  }
  if (!realpath(dir, real)) return 0;
  struct stat st;
  if (stat(real, &st) != 0) return 0;
  const uid_t candidate = st.st_uid;
  for (;;) {
    if (stat(real, &st) != 0) return 0;
    if ((st.st_uid != 0 && st.st_uid != candidate) || (st.st_mode & (S_IWGRP | S_IWOTH))) return 0;
    char* last = strrchr(real, '/');
    if (!last || (last == real && real[1] == '\0')) break; /* checked "/" */
    if (last == real) {
      real[1] = '\0';
    } else {
      *last = '\0';
    }
  }
  *owner = candidate;
  return 1;
}

/* Refuses (NNCLIENT_E_ACCESS) a peer on c->sock that is not trusted to be the daemon. */
static nnclient_status verify_daemon(nnclient_t* c) {
  struct ucred peer;
  socklen_t len = sizeof peer;
  if (getsockopt(c->sock, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    return sys_err(c, "getsockopt(SO_PEERCRED)");
  }
  uid_t u;
  if (peer.uid == 0 || peer.uid == geteuid()) return NNCLIENT_OK;
  if (uid_listed(getenv(NNC_TRUSTED_USERS_ENV), peer.uid)) return NNCLIENT_OK;
  if (uid_of(NNC_DAEMON_USER, &u) && u == peer.uid) return NNCLIENT_OK;
  if (trusted_directory_owner(c->path, &u) && u == peer.uid) return NNCLIENT_OK;

  char name[128] = "", who[160], number[16];
  snprintf(number, sizeof number, "%u", (unsigned)peer.uid);
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwuid_r(peer.uid, &pw, buf, sizeof buf, &res) == 0 && res) {
    snprintf(name, sizeof name, "%s", res->pw_name);
  }
  if (name[0]) {
    snprintf(who, sizeof who, "user '%s' (uid %u, pid %d)", name, (unsigned)peer.uid,
             (int)peer.pid);
  } else {
    snprintf(who, sizeof who, "uid %u (pid %d)", (unsigned)peer.uid, (int)peer.pid);
  }
  return set_err(c, NNCLIENT_E_ACCESS,
                 "refusing the daemon on %s: it runs as %s, which this client does not trust "
                 "(root, your own user, the owner of a socket directory only it and root can "
                 "write, the user '" NNC_DAEMON_USER "', or " NNC_TRUSTED_USERS_ENV "); another "
                 "program may have taken the endpoint. If it is your daemon, set "
                 NNC_TRUSTED_USERS_ENV "=%s",
                 c->path, who, name[0] ? name : number);
}

static nnclient_status connect_daemon(nnclient_t* c) {
  int fds[2] = {-1, -1};
  int nfds = 0;
  unsigned char* base = MAP_FAILED;
  size_t map_bytes = 0;
  nnclient_status st = NNCLIENT_OK;

  c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (c->sock < 0) return sys_err(c, "socket(AF_UNIX, SOCK_SEQPACKET)");
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, c->path, strlen(c->path) + 1);
  if (connect(c->sock, (struct sockaddr*)&addr, sizeof addr) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) {
      st = set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "no daemon listens on %s: %s", c->path,
                   strerror(e));
    } else if (e == EACCES || e == EPERM) {
      st = set_err(c, NNCLIENT_E_ACCESS, "cannot connect to %s: %s", c->path, strerror(e));
    } else if (e == EAGAIN) {
      st = set_err(c, NNCLIENT_E_OVERLOADED, "the daemon's listen queue on %s is full", c->path);
    } else {
      errno = e;
      st = sys_err(c, "connect");
    }
    goto fail;
  }
  /* Nothing goes to a peer that may be an impostor, not even the hello. */
  st = verify_daemon(c);
  if (st != NNCLIENT_OK) goto fail;

  struct nnd_ipc_hello hello;
  memset(&hello, 0, sizeof hello);
  hello.type = NND_MSG_HELLO;
  hello.magic = NND_IPC_MAGIC;
  hello.version = NND_IPC_VERSION;
  hello.requested_slots = c->want_slots;
  hello.requested_slot_bytes = c->want_slot_bytes;
  copy_name(hello.client_name, program_invocation_short_name, sizeof hello.client_name);
  if (send(c->sock, &hello, sizeof hello, MSG_NOSIGNAL) != (ssize_t)sizeof hello) {
    if (errno == EPIPE || errno == ECONNRESET) {
      st = set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s closed the connection",
                   c->path);
    } else {
      st = sys_err(c, "send(hello)");
    }
    goto fail;
  }

  const int ready = wait_readable(c->sock, c->ctl_timeout_ms);
  if (ready <= 0) {
    st = ready == 0 ? set_err(c, NNCLIENT_E_TIMEOUT, "no welcome from the daemon on %s within %d ms",
                              c->path, c->ctl_timeout_ms)
                    : sys_err(c, "poll(control socket)");
    goto fail;
  }
  union {
    struct nnd_ipc_welcome w;
    unsigned char raw[sizeof(struct nnd_ipc_welcome) + 64];
  } msg;
  union {
    struct cmsghdr h;
    unsigned char buf[CMSG_SPACE(sizeof(int) * 4)];
  } ctl;
  struct iovec iov = {.iov_base = &msg, .iov_len = sizeof msg};
  struct msghdr mh;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.buf;
  mh.msg_controllen = sizeof ctl.buf;
  ssize_t n;
  do n = recvmsg(c->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    st = (errno == ECONNRESET)
             ? set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s reset the connection",
                       c->path)
             : sys_err(c, "recvmsg(welcome)");
    goto fail;
  }
  for (struct cmsghdr* h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
      const size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
        if (nfds < 2) fds[nfds++] = fd;
        else close(fd);
      }
    }
  }
  if (n == 0) {
    st = set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s closed the connection during "
                 "the hand-shake", c->path);
    goto fail;
  }
  if ((size_t)n < 16 || msg.w.type != NND_MSG_WELCOME) {
    st = set_err(c, NNCLIENT_E_PROTOCOL, "bad welcome from %s (%zd bytes, type %u)", c->path, n,
                 (size_t)n >= 4 ? msg.w.type : 0u);
    goto fail;
  }
  if (msg.w.status != NND_IPC_OK) {
    const nnclient_status why = from_ipc(msg.w.status);
    msg.w.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
    st = set_err(c, why, "daemon on %s refused the connection: %s",
                 c->path, (size_t)n == sizeof msg.w ? msg.w.message : nnclient_strerror(why));
    goto fail;
  }
  if (msg.w.version != NND_IPC_VERSION || (size_t)n != sizeof msg.w) {
    st = set_err(c, NNCLIENT_E_PROTOCOL,
                 "daemon on %s speaks protocol version %u (welcome %zd bytes), this client %u "
                 "(%zu bytes)", c->path, msg.w.version, n, NND_IPC_VERSION, sizeof msg.w);
    goto fail;
  }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || nfds != 2) {
    st = set_err(c, NNCLIENT_E_PROTOCOL, "welcome from %s carried %d file descriptors, expected "
                 "2 (memfd, eventfd)", c->path, nfds);
    goto fail;
  }
  const struct nnd_ipc_welcome w = msg.w;
  if (w.slots == 0 || w.slots > NND_IPC_MAX_SLOTS || w.slot_data_bytes == 0 ||
      w.slot_data_bytes % NND_IPC_DATA_ALIGN != 0 ||
      w.segment_bytes < sizeof(struct nnd_ipc_header) || w.segment_bytes > (uint64_t)SIZE_MAX) {
    st = set_err(c, NNCLIENT_E_PROTOCOL, "welcome has impossible sizes (slots %u, slot data %llu, "
                 "segment %llu bytes)", w.slots, (unsigned long long)w.slot_data_bytes,
                 (unsigned long long)w.segment_bytes);
    goto fail;
  }
  struct stat sb;
  if (fstat(fds[0], &sb) != 0) {
    st = sys_err(c, "fstat(segment)");
    goto fail;
  }
  if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != w.segment_bytes) {
    st = set_err(c, NNCLIENT_E_PROTOCOL, "segment fd is %lld bytes, welcome says %llu",
                 (long long)sb.st_size, (unsigned long long)w.segment_bytes);
    goto fail;
  }
  map_bytes = (size_t)w.segment_bytes;
  base = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  if (base == MAP_FAILED) {
    st = sys_err(c, "mmap(segment)");
    goto fail;
  }
  close(fds[0]);
  fds[0] = -1;

  struct nnd_ipc_header* hdr = (struct nnd_ipc_header*)base;
  const uint64_t slots_end = hdr->slots_offset + (uint64_t)w.slots * sizeof(struct nnd_ipc_slot);
  const uint64_t data_bytes = (uint64_t)w.slots * w.slot_data_bytes;
  if (hdr->magic != NND_IPC_MAGIC || hdr->version != NND_IPC_VERSION || hdr->slots != w.slots ||
      hdr->slot_data_bytes != w.slot_data_bytes || hdr->segment_bytes != w.segment_bytes ||
      hdr->slots_offset < sizeof *hdr || hdr->slots_offset % 8 != 0 ||
      hdr->slots_offset > w.segment_bytes || slots_end > w.segment_bytes ||
      hdr->data_offset % NND_IPC_DATA_ALIGN != 0 || hdr->data_offset < sizeof *hdr ||
      hdr->data_offset > w.segment_bytes || data_bytes / w.slots != w.slot_data_bytes ||
      data_bytes > w.segment_bytes - hdr->data_offset) {
    st = set_err(c, NNCLIENT_E_PROTOCOL, "segment header does not match the welcome (magic %#x, "
                 "version %u, slots %u, slots at %llu, data at %llu)", hdr->magic, hdr->version,
                 hdr->slots, (unsigned long long)hdr->slots_offset,
                 (unsigned long long)hdr->data_offset);
    goto fail;
  }

  struct nnc_seg* s = calloc(1, sizeof *s);
  if (!s) {
    errno = ENOMEM;
    st = sys_err(c, "calloc(segment state)");
    goto fail;
  }
  s->base = base;
  s->bytes = map_bytes;
  s->hdr = hdr;
  s->slots = (struct nnd_ipc_slot*)(base + hdr->slots_offset);
  s->data = base + hdr->data_offset;
  s->nslots = w.slots;
  s->slot_data_bytes = w.slot_data_bytes;
  s->submit_head = nnd_ipc_load_acquire(&hdr->submit.head);
  s->complete_tail = nnd_ipc_load_acquire(&hdr->complete.tail);
  for (uint32_t i = 0; i < w.slots; ++i) s->free_slots[i] = w.slots - 1 - i;
  s->nfree = w.slots;
  s->refs = 1;
  nnd_ipc_client_end_sleep(hdr); /* awake: the daemon need not wake us */

  c->seg = s;
  c->efd = fds[1];
  c->broken = 0;
  c->daemon_instance = w.daemon_instance;
  c->last_alive_ns = mono_ns();
  return NNCLIENT_OK;

fail:
  if (base != MAP_FAILED) munmap(base, map_bytes);
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
  }
  if (c->sock >= 0) close(c->sock);
  c->sock = -1;
  return st;
}

/* Makes sure the handle has a live connection: reconnects after a known failure, and — when the
 * handle was idle for a while — checks the socket for a hang-up first (one poll; none while
 * requests flow). */
static nnclient_status ensure_connected(nnclient_t* c) {
  if (c->seg && !c->broken) {
    const int64_t now = mono_ns();
    if (now - c->last_alive_ns < NNC_LIVENESS_NS) return NNCLIENT_OK;
    if (socket_alive(c)) {
      c->last_alive_ns = now;
      return NNCLIENT_OK;
    }
  }
  disconnect(c);
  return connect_daemon(c);
}

/* ---- control requests --------------------------------------------------------------------- */

/* Sends `q` and receives a reply of exactly `rn` bytes into `reply` (or an nnd_ipc_reply
 * carrying an error). On a timeout or a broken connection the handle is marked broken. */
static nnclient_status control_sized(nnclient_t* c, const void* q, size_t qn, void* reply,
                                     size_t rn, size_t rn_min, uint32_t type1, uint32_t type2,
                                     int timeout_ms);
static nnclient_status control(nnclient_t* c, const void* q, size_t qn, void* reply, size_t rn,
                               uint32_t type1, uint32_t type2, int timeout_ms) {
  return control_sized(c, q, qn, reply, rn, rn, type1, type2, timeout_ms);
}

/* As control(), for replies that may be longer or shorter than `rn` (appended fields, see the
 * struct_bytes fields of nnd_ipc.h): accepts rn_min..sizeof(raw buffer) bytes, copies the prefix
 * both sides know and zeroes the rest of `reply`. */
static nnclient_status control_sized(nnclient_t* c, const void* q, size_t qn, void* reply,
                                     size_t rn, size_t rn_min, uint32_t type1, uint32_t type2,
                                     int timeout_ms) {
  ssize_t n;
  do n = send(c->sock, q, qn, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)qn) {
    c->broken = 1;
    if (n < 0 && errno != EPIPE && errno != ECONNRESET && errno != ENOTCONN) {
      return sys_err(c, "send(control request)");
    }
    return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection");
  }
  if (timeout_ms > c->ctl_timeout_ms) timeout_ms = c->ctl_timeout_ms;
  const int ready = wait_readable(c->sock, timeout_ms);
  if (ready <= 0) {
    c->broken = 1; /* a late reply would be taken for the next request's */
    return ready == 0 ? set_err(c, NNCLIENT_E_TIMEOUT, "no reply from the daemon within %d ms",
                                timeout_ms)
                      : sys_err(c, "poll(control socket)");
  }
  union {
    struct nnd_ipc_model_info info;
    struct nnd_ipc_model_stats stats;
    struct nnd_ipc_reply reply;
    unsigned char raw[2048];
  } buf;
  do n = recv(c->sock, &buf, sizeof buf, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    c->broken = 1;
    if (n < 0 && errno != ECONNRESET) return sys_err(c, "recv(control reply)");
    return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection");
  }
  c->last_alive_ns = mono_ns();
  if ((size_t)n == sizeof buf.reply && rn != sizeof buf.reply) {
    const nnclient_status s = from_ipc(buf.reply.status);
    buf.reply.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
    if (s == NNCLIENT_OK) {
      return set_err(c, NNCLIENT_E_PROTOCOL, "daemon answered with a bare OK reply");
    }
    return set_err(c, s, "daemon: %s", buf.reply.message[0] ? buf.reply.message
                                                             : nnclient_strerror(s));
  }
  uint32_t type;
  memcpy(&type, &buf, sizeof type);
  const int size_ok = rn_min == rn ? (size_t)n == rn : (size_t)n >= rn_min;
  if (!size_ok || (type != type1 && type != type2)) {
    c->broken = 1;
    return set_err(c, NNCLIENT_E_PROTOCOL, "unexpected control reply (%zd bytes, type %u; "
                   "expected %zu bytes, type %u)", n, type, rn, type1);
  }
  memset(reply, 0, rn);
  memcpy(reply, &buf, (size_t)n < rn ? (size_t)n : rn);
  return NNCLIENT_OK;
}

/* control() on a live connection, reconnecting first if needed and retrying once when the daemon
 * turns out to have gone away (for idempotent queries). */
static nnclient_status control_retry(nnclient_t* c, const void* q, size_t qn, void* reply,
                                     size_t rn, uint32_t type1, uint32_t type2, int timeout_ms,
                                     int retry) {
  nnclient_status st = ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = control(c, q, qn, reply, rn, type1, type2, timeout_ms);
  if (st == NNCLIENT_E_DAEMON_RESTARTED && retry) {
    st = ensure_connected(c);
    if (st != NNCLIENT_OK) return st;
    st = control(c, q, qn, reply, rn, type1, type2, timeout_ms);
  }
  return st;
}

static nnclient_status control_retry_sized(nnclient_t* c, const void* q, size_t qn, void* reply,
                                           size_t rn, size_t rn_min, uint32_t type,
                                           int timeout_ms) {
  nnclient_status st = ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = control_sized(c, q, qn, reply, rn, rn_min, type, type, timeout_ms);
  if (st == NNCLIENT_E_DAEMON_RESTARTED) {
    st = ensure_connected(c);
    if (st != NNCLIENT_OK) return st;
    st = control_sized(c, q, qn, reply, rn, rn_min, type, type, timeout_ms);
  }
  return st;
}

static void cache_add(struct nnc_seg* s, const char* name, uint64_t sig) {
  for (uint32_t i = 0; i < s->ncache; ++i) {
    if (strcmp(s->cache[i].name, name) == 0) {
      s->cache[i].signature = sig;
      return;
    }
  }
  uint32_t i;
  if (s->ncache < NNC_SIG_CACHE) {
    i = s->ncache++;
  } else {
    i = s->cache_next;
    s->cache_next = (s->cache_next + 1) % NNC_SIG_CACHE;
  }
  copy_name(s->cache[i].name, name, sizeof s->cache[i].name);
  s->cache[i].signature = sig;
}

static void cache_forget(struct nnc_seg* s, const char* name) {
  for (uint32_t i = 0; i < s->ncache; ++i) {
    if (strcmp(s->cache[i].name, name) == 0) s->cache[i].name[0] = '\0';
  }
}

static nnclient_status convert_info(nnclient_t* c, const struct nnd_ipc_model_info* w,
                                    nnclient_model_info_t* info) {
  memset(info, 0, sizeof *info);
  if (w->num_inputs > NNCLIENT_MAX_TENSORS || w->num_outputs > NNCLIENT_MAX_TENSORS) {
    return set_err(c, NNCLIENT_E_PROTOCOL, "model info with %u inputs, %u outputs", w->num_inputs,
                   w->num_outputs);
  }
  copy_name(info->name, w->model, sizeof info->name);
  copy_name(info->engine, w->engine, sizeof info->engine);
  info->version = w->version;
  info->max_batch = w->max_batch;
  info->num_inputs = w->num_inputs;
  info->num_outputs = w->num_outputs;
  info->signature = w->signature;
  for (uint32_t side = 0; side < 2; ++side) {
    const uint32_t count = side == 0 ? w->num_inputs : w->num_outputs;
    for (uint32_t k = 0; k < count; ++k) {
      const struct nnd_ipc_tensor_info* t = side == 0 ? &w->inputs[k] : &w->outputs[k];
      nnclient_tensor_info* o = side == 0 ? &info->inputs[k] : &info->outputs[k];
      if (t->rank > NNCLIENT_MAX_RANK || t->dtype > 1) {
        return set_err(c, NNCLIENT_E_PROTOCOL, "model info: tensor %u has rank %u, dtype %u", k,
                       t->rank, t->dtype);
      }
      copy_name(o->name, t->name, sizeof o->name);
      o->dtype = t->dtype == 1 ? NNCLIENT_UINT8 : NNCLIENT_FLOAT32;
      o->rank = t->rank;
      uint64_t bytes = o->dtype == NNCLIENT_UINT8 ? 1 : 4;
      for (uint32_t d = 0; d < t->rank; ++d) {
        if (t->dims[d] < 0 || __builtin_mul_overflow(bytes, (uint64_t)t->dims[d], &bytes)) {
          return set_err(c, NNCLIENT_E_PROTOCOL, "model info: bad dimension %lld",
                         (long long)t->dims[d]);
        }
        o->dims[d] = t->dims[d];
      }
      if (bytes > (uint64_t)SIZE_MAX) return set_err(c, NNCLIENT_E_PROTOCOL, "sample too big");
      o->sample_bytes = (size_t)bytes;
    }
  }
  return NNCLIENT_OK;
}

/* Edit distance (insert, delete, substitute; ASCII case differences cost nothing) between two
 * model names of at most NND_IPC_MAX_NAME - 1 bytes. */
static unsigned name_distance(const char* a, const char* b) {
  unsigned row[NND_IPC_MAX_NAME];
  const size_t la = strnlen(a, NND_IPC_MAX_NAME - 1), lb = strnlen(b, NND_IPC_MAX_NAME - 1);
  for (size_t j = 0; j <= lb; ++j) row[j] = (unsigned)j;
  for (size_t i = 1; i <= la; ++i) {
    unsigned diag = row[0];
    row[0] = (unsigned)i;
    for (size_t j = 1; j <= lb; ++j) {
      const unsigned up = row[j];
      const int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
      unsigned best = diag + (same ? 0u : 1u);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* NNCLIENT_E_UNKNOWN_MODEL for `name`, with the closest served name (if one is close) and the
 * list of served models in the message: "model 'bal' is not served (did you mean 'ball'?);
 * served: ball, detector". Costs one list query per served model, on the error path only. */
static nnclient_status unknown_model(nnclient_t* c, const char* name) {
  char served[NNC_ERR_BYTES - 128];
  char best[NND_IPC_MAX_NAME] = "";
  unsigned best_d = ~0u;
  size_t used = 0;
  uint32_t count = 0;
  served[0] = '\0';
  for (uint32_t i = 0; i < 1024; ++i) {
    struct nnd_ipc_model_query q;
    memset(&q, 0, sizeof q);
    q.type = NND_MSG_LIST_MODELS;
    q.index = i;
    struct nnd_ipc_model_info w;
    if (control(c, &q, sizeof q, &w, sizeof w, NND_MSG_MODEL_INFO, NND_MSG_LIST_MODELS,
                NNC_CONTROL_TIMEOUT_MS) != NNCLIENT_OK || w.status != NND_IPC_OK) {
      break;
    }
    w.model[NND_IPC_MAX_NAME - 1] = '\0';
    const unsigned d = name_distance(name, w.model);
    if (d < best_d) {
      best_d = d;
      copy_name(best, w.model, sizeof best);
    }
    const size_t len = strlen(w.model);
    if (used + len + 8 < sizeof served) {
      used += (size_t)snprintf(served + used, sizeof served - used, "%s%s", count ? ", " : "",
                               w.model);
    } else if (used + 5 < sizeof served && !strstr(served, "...")) {
      used += (size_t)snprintf(served + used, sizeof served - used, ", ...");
    }
    ++count;
  }
  /* Close enough to be a typo: at most a third of the longer name, at least 1, at most 3. */
  const size_t ln = strlen(name), lb = strlen(best);
  unsigned limit = (unsigned)((ln > lb ? ln : lb) / 3);
  if (limit < 1) limit = 1;
  if (limit > 3) limit = 3;
  char hint[NND_IPC_MAX_NAME + 24] = "";
  if (count && best_d <= limit) snprintf(hint, sizeof hint, " (did you mean '%s'?)", best);
  if (count == 0) {
    return set_err(c, NNCLIENT_E_UNKNOWN_MODEL, "model '%s' is not served; the daemon serves no "
                   "models", name);
  }
  return set_err(c, NNCLIENT_E_UNKNOWN_MODEL, "model '%s' is not served%s; served: %s", name, hint,
                 served);
}

static nnclient_status query_info(nnclient_t* c, uint32_t type, uint32_t index, const char* name,
                                  nnclient_model_info_t* info) {
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = type;
  q.index = index;
  if (name) copy_name(q.model, name, sizeof q.model);
  struct nnd_ipc_model_info w;
  nnclient_status st = control_retry(c, &q, sizeof q, &w, sizeof w, NND_MSG_MODEL_INFO, type,
                                     NNC_CONTROL_TIMEOUT_MS, 1);
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = from_ipc(w.status);
    if (name && st == NNCLIENT_E_UNKNOWN_MODEL) return unknown_model(c, name);
    if (name) return set_err(c, st, "model '%s': %s", name, nnclient_strerror(st));
    return set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  st = convert_info(c, &w, info);
  if (st == NNCLIENT_OK && c->seg) cache_add(c->seg, info->name, info->signature);
  return st;
}

NNC_EXPORT nnclient_status nnclient_model_info(nnclient_t* c, const char* name,
                                               nnclient_model_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!name || !info) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "name or info is NULL");
  const size_t len = strlen(name);
  if (len == 0 || len >= NND_IPC_MAX_NAME) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "model name must have 1 to %u bytes",
                   NND_IPC_MAX_NAME - 1);
  }
  return query_info(c, NND_MSG_MODEL_INFO, 0, name, info);
}

NNC_EXPORT nnclient_status nnclient_list_models(nnclient_t* c, uint32_t index,
                                                nnclient_model_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!info) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info is NULL");
  return query_info(c, NND_MSG_LIST_MODELS, index, NULL, info);
}

NNC_EXPORT nnclient_status nnclient_stats(nnclient_t* c, uint32_t index,
                                          nnclient_model_stats_t* stats) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!stats) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "stats is NULL");
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = NND_MSG_STATS;
  q.index = index;
  struct nnd_ipc_model_stats w;
  nnclient_status st = control_retry(c, &q, sizeof q, &w, sizeof w, NND_MSG_STATS, NND_MSG_STATS,
                                     NNC_CONTROL_TIMEOUT_MS, 1);
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = from_ipc(w.status);
    return set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  memset(stats, 0, sizeof *stats);
  copy_name(stats->name, w.model, sizeof stats->name);
  stats->requests = w.requests;
  stats->batches = w.batches;
  stats->samples = w.samples;
  stats->errors = w.errors;
  stats->deadline_misses = w.deadline_misses;
  stats->latency_p50_ns = w.latency_p50_ns;
  stats->latency_p99_ns = w.latency_p99_ns;
  stats->latency_max_ns = w.latency_max_ns;
  return NNCLIENT_OK;
}

/* The first fields of the metrics and daemon-info replies: type, status, struct_bytes. */
#define NNC_SIZED_REPLY_MIN (3 * sizeof(uint32_t))

/* A daemon that predates a message answers it with "unknown message type": say so plainly. */
static nnclient_status older_daemon(nnclient_t* c, nnclient_status st, const char* what) {
  if (st == NNCLIENT_E_PROTOCOL && strstr(c->err, "unknown message type")) {
    return set_err(c, NNCLIENT_E_PROTOCOL, "the daemon is older than this library and has no %s",
                   what);
  }
  return st;
}

/* A query whose reply starts with type, status and struct_bytes (metrics, daemon info, client
 * info): sends it, receives the reply into w[wn] (zero-filled past what the daemon sent). `what`
 * names the message for a daemon older than it. */
static nnclient_status sized_query(nnclient_t* c, uint32_t type, uint32_t index, void* w, size_t wn,
                                   const char* what) {
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = type;
  q.index = index;
  const nnclient_status st = control_retry_sized(c, &q, sizeof q, w, wn, NNC_SIZED_REPLY_MIN, type,
                                                 NNC_CONTROL_TIMEOUT_MS);
  return st == NNCLIENT_OK ? st : older_daemon(c, st, what);
}

NNC_EXPORT nnclient_status nnclient_model_metrics(nnclient_t* c, uint32_t index,
                                                  nnclient_model_metrics_t* m) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!m || m->struct_size < offsetof(nnclient_model_metrics_t, latency_sum_ns)) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "metrics is NULL or its struct_size is not set (sizeof(nnclient_model_metrics_t))");
  }
  struct nnd_ipc_model_metrics w;
  nnclient_status st = sized_query(c, NND_MSG_METRICS, index, &w, sizeof w, "metrics");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = from_ipc(w.status);
    return set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  nnclient_model_metrics_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = m->struct_size;
  out.queue_depth = w.queue_depth;
  copy_name(out.name, w.model, sizeof out.name);
  out.requests = w.requests;
  out.batches = w.batches;
  out.samples = w.samples;
  out.errors = w.errors;
  out.deadline_misses = w.deadline_misses;
  out.latency_p50_ns = w.latency_p50_ns;
  out.latency_p99_ns = w.latency_p99_ns;
  out.latency_max_ns = w.latency_max_ns;
  out.latency_sum_ns = w.latency_sum_ns;
  memcpy(out.latency_buckets, w.latency_buckets, sizeof out.latency_buckets);
  memcpy(out.batch_buckets, w.batch_buckets, sizeof out.batch_buckets);
  memcpy(out.errors_by_status, w.errors_by_status, sizeof out.errors_by_status);
  memcpy(m, &out, m->struct_size < sizeof out ? m->struct_size : sizeof out);
  return NNCLIENT_OK;
}

NNC_EXPORT uint32_t nnclient_latency_bucket_us(uint32_t b) {
  static const uint32_t bounds[NND_IPC_LATENCY_BUCKETS - 1] = NND_IPC_LATENCY_BOUNDS_US;
  return b < NND_IPC_LATENCY_BUCKETS - 1 ? bounds[b] : 0;
}

NNC_EXPORT nnclient_status nnclient_daemon_info(nnclient_t* c, nnclient_daemon_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!info || info->struct_size < offsetof(nnclient_daemon_info_t, uptime_ns)) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info is NULL or its struct_size is not set (sizeof(nnclient_daemon_info_t))");
  }
  struct nnd_ipc_daemon_info w;
  nnclient_status st = sized_query(c, NND_MSG_DAEMON_INFO, 0, &w, sizeof w, "daemon information");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = from_ipc(w.status);
    return set_err(c, st, "daemon info: %s", nnclient_strerror(st));
  }
  nnclient_daemon_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = info->struct_size;
  out.pid = w.pid;
  copy_name(out.version, w.version, sizeof out.version);
  copy_name(out.git_revision, w.git_revision, sizeof out.git_revision);
  out.uptime_ns = w.uptime_ns;
  out.rss_bytes = w.rss_bytes;
  out.clients = w.clients;
  out.clients_total = w.clients_total;
  out.clients_refused = w.clients_refused;
  out.reloads = w.reloads;
  out.reloads_failed = w.reloads_failed;
  out.requests_in_flight = w.requests_in_flight;
  out.shared_memory_bytes = w.shared_memory_bytes;
  out.models = w.models;
  memcpy(info, &out, info->struct_size < sizeof out ? info->struct_size : sizeof out);
  return NNCLIENT_OK;
}

NNC_EXPORT nnclient_status nnclient_client_info(nnclient_t* c, uint32_t index,
                                               nnclient_client_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!info || info->struct_size < offsetof(nnclient_client_info_t, name)) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info is NULL or its struct_size is not set (sizeof(nnclient_client_info_t))");
  }
  struct nnd_ipc_client_info w;
  nnclient_status st = sized_query(c, NND_MSG_LIST_CLIENTS, index, &w, sizeof w, "client list");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = from_ipc(w.status);
    if (st == NNCLIENT_E_UNKNOWN_MODEL) return set_err(c, st, "no client #%u", index);
    return set_err(c, st, "client #%u: %s", index, nnclient_strerror(st));
  }
  nnclient_client_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = info->struct_size;
  out.pid = w.pid;
  out.uid = w.uid;
  out.slots = w.slots;
  copy_name(out.name, w.name, sizeof out.name);
  out.slot_bytes = w.slot_bytes;
  out.shared_memory_bytes = w.shared_memory_bytes;
  out.requests_in_flight = w.requests_in_flight;
  out.connected_ns = w.connected_ns;
  memcpy(info, &out, info->struct_size < sizeof out ? info->struct_size : sizeof out);
  return NNCLIENT_OK;
}

NNC_EXPORT nnclient_status nnclient_reload(nnclient_t* c) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = NND_MSG_RELOAD;
  struct nnd_ipc_reply r;
  nnclient_status st = ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  /* control() bounds every wait by ctl_timeout_ms (the hand-shake/query bound, 5 s): a reload
   * compiles models and gets the longer bound the header promises. */
  c->ctl_timeout_ms = NNC_RELOAD_TIMEOUT_MS;
  st = control(c, &q, sizeof q, &r, sizeof r, NND_MSG_RELOAD, NND_MSG_RELOAD,
               NNC_RELOAD_TIMEOUT_MS);
  c->ctl_timeout_ms = NNC_CONTROL_TIMEOUT_MS;
  if (st != NNCLIENT_OK) return st;
  r.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
  st = from_ipc(r.status);
  if (st == NNCLIENT_OK) {
    set_err(c, NNCLIENT_OK, "%s", r.message);
    return NNCLIENT_OK;
  }
  return set_err(c, st, "reload refused: %s", r.message[0] ? r.message : nnclient_strerror(st));
}

/* ---- open / close ------------------------------------------------------------------------- */

static int layout_request(const nnclient_model_info_t* info, uint32_t batch,
                          struct nnclient_request* r, uint64_t* end);
static nnclient_status reconnect_with_slot_bytes(nnclient_t* c, uint64_t slot_bytes);
static nnclient_status wait_request(nnclient_t* c, struct nnclient_request* r, uint64_t timeout_us);

/* The slot size a handle opened with options needs: its largest request over the named models (or
 * every served model) at max_batch (capped per model). 0 when no model is served. */
static nnclient_status needed_slot_bytes(nnclient_t* c, const nnclient_open_options_t* o,
                                         uint64_t* need) {
  *need = 0;
  const uint32_t batch = o->max_batch ? o->max_batch : 1;
  for (uint32_t i = 0;; ++i) {
    nnclient_model_info_t info;
    nnclient_status st;
    if (o->num_models) {
      if (i == o->num_models) break;
      if (!o->models || !o->models[i]) {
        return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "options.models[%u] is NULL", i);
      }
      st = nnclient_model_info(c, o->models[i], &info);
    } else {
      st = nnclient_list_models(c, i, &info);
      if (st == NNCLIENT_E_UNKNOWN_MODEL) break;
    }
    if (st != NNCLIENT_OK) return st;
    const uint32_t b = info.max_batch && batch > info.max_batch ? info.max_batch : batch;
    struct nnclient_request tmp;
    uint64_t end = 0;
    if (!layout_request(&info, b, &tmp, &end)) {
      return set_err(c, NNCLIENT_E_SHAPE, "model '%s' at batch %u: request size overflows",
                     info.name, b);
    }
    if (nnd_ipc_align(end) > *need) *need = nnd_ipc_align(end);
  }
  return NNCLIENT_OK;
}

NNC_EXPORT nnclient_t* nnclient_open(const char* endpoint, nnclient_status* status) {
  nnclient_open_options_t o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.endpoint = endpoint;
  return nnclient_open_with(&o, status);
}

NNC_EXPORT nnclient_t* nnclient_open_with(const nnclient_open_options_t* options,
                                          nnclient_status* status) {
  nnclient_status dummy;
  if (!status) status = &dummy;
  nnc_open_err[0] = '\0';
  /* Fields past the caller's struct_size (an application built with an older header) are 0. */
  nnclient_open_options_t o;
  memset(&o, 0, sizeof o);
  if (options) {
    if (options->struct_size < offsetof(nnclient_open_options_t, endpoint)) {
      snprintf(nnc_open_err, sizeof nnc_open_err,
               "options.struct_size is %u: set it to sizeof(nnclient_open_options_t)",
               options->struct_size);
      *status = NNCLIENT_E_INVALID_ARGUMENT;
      return NULL;
    }
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
  }
  if (o.slots > NND_IPC_MAX_SLOTS) {
    snprintf(nnc_open_err, sizeof nnc_open_err, "options.slots is %u; at most %u", o.slots,
             NND_IPC_MAX_SLOTS);
    *status = NNCLIENT_E_INVALID_ARGUMENT;
    return NULL;
  }
  const char* endpoint = o.endpoint;
  char path[sizeof(((struct sockaddr_un*)0)->sun_path)];
  if (nnclient_resolve_endpoint(endpoint, path, sizeof path) != NNCLIENT_OK) {
    snprintf(nnc_open_err, sizeof nnc_open_err,
             "endpoint '%s' is empty or its socket path is longer than %zu bytes",
             endpoint ? endpoint : "(default)", sizeof path - 1);
    *status = NNCLIENT_E_INVALID_ARGUMENT;
    return NULL;
  }
  nnclient_t* c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(nnc_open_err, sizeof nnc_open_err, "out of memory");
    *status = NNCLIENT_E_SYSTEM;
    return NULL;
  }
  memcpy(c->path, path, sizeof path);
  c->sock = c->efd = -1;
  c->want_slots = o.slots;
  c->spin_us = choose_spin_us();
  c->ctl_timeout_ms = NNC_CONTROL_TIMEOUT_MS;
  for (uint32_t i = NNC_MAX_REQUESTS; i-- > 0;) {
    c->reqs[i].next_free = c->free_reqs;
    c->free_reqs = &c->reqs[i];
  }
  nnclient_status st = connect_daemon(c);
  if (st == NNCLIENT_OK && (o.max_batch || o.num_models)) {
    /* The first hand-shake got slots for one sample of the largest model; the models this
     * handle will run may need more (a larger batch) or less (smaller models). */
    uint64_t need = 0;
    st = needed_slot_bytes(c, &o, &need);
    if (st == NNCLIENT_OK && need && c->seg && need != c->seg->slot_data_bytes) {
      st = reconnect_with_slot_bytes(c, need);
    }
  }
  if (st != NNCLIENT_OK) {
    memcpy(nnc_open_err, c->err, sizeof nnc_open_err);
    disconnect(c);
    free(c);
    *status = st;
    return NULL;
  }
  *status = NNCLIENT_OK;
  return c;
}

NNC_EXPORT nnclient_status nnclient_slots(const nnclient_t* c, uint32_t* slots,
                                          uint64_t* slot_bytes) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  if (slots) *slots = c->seg ? c->seg->nslots : 0;
  if (slot_bytes) *slot_bytes = c->seg ? c->seg->slot_data_bytes : 0;
  return c->seg ? NNCLIENT_OK : NNCLIENT_E_DAEMON_RESTARTED;
}

NNC_EXPORT void nnclient_close(nnclient_t* c) {
  if (!c) return;
  /* Requests still held by the caller are abandoned: drop their references to the segments. */
  for (uint32_t i = 0; i < NNC_MAX_REQUESTS; ++i) {
    struct nnclient_request* r = &c->reqs[i];
    if (r->state != REQ_FREE) {
      r->state = REQ_FREE;
      seg_unref(r->seg);
      r->seg = NULL;
    }
  }
  disconnect(c);
  free(c);
}

/* ---- data path ---------------------------------------------------------------------------- */

static void free_slot(struct nnc_seg* s, uint32_t slot) {
  s->slot_busy[slot] = 0;
  s->slot_req[slot] = NULL;
  s->free_slots[s->nfree++] = slot;
}

/* Pops every completed slot. Returns the number popped, or -1 if the ring is corrupt. */
static int drain(nnclient_t* c, struct nnc_seg* s) {
  struct nnd_ipc_header* h = s->hdr;
  uint32_t tail = s->complete_tail;
  const int32_t ready = nnd_ipc_ring_ready(&h->complete, tail);
  if (ready == 0) return 0;
  if (ready < 0) {
    c->broken = 1;
    return -1;
  }
  for (int32_t count = 0; count < ready; ++count) {
    const uint32_t slot = nnd_ipc_ring_entry(&h->complete, tail);
    ++tail;
    if (slot >= s->nslots || !s->slot_busy[slot]) continue; /* daemon bug: ignore */
    struct nnclient_request* r = s->slot_req[slot];
    if (!r) {
      free_slot(s, slot); /* abandoned by a timed-out request */
      continue;
    }
    if (r->state != REQ_SUBMITTED) continue;
    const struct nnd_ipc_slot* sl = &s->slots[slot];
    r->status = from_ipc(sl->status);
    if (r->status == NNCLIENT_OK && sl->sequence != r->sequence) r->status = NNCLIENT_E_PROTOCOL;
    r->state = REQ_DONE;
  }
  nnd_ipc_ring_release(&h->complete, tail);
  s->complete_tail = tail;
  c->last_alive_ns = mono_ns();
  return ready;
}

static nnclient_status check_request_model(nnclient_t* c, const nnclient_model_info_t* info) {
  struct nnc_seg* s = c->seg;
  for (uint32_t i = 0; i < s->ncache; ++i) {
    if (s->cache[i].signature == info->signature && strcmp(s->cache[i].name, info->name) == 0) {
      return NNCLIENT_OK;
    }
  }
  /* First use of this model on this connection (after a reconnect, or info from another
   * handle): re-validate the layout the caller holds. */
  nnclient_model_info_t now;
  char err_name[NND_IPC_MAX_NAME];
  copy_name(err_name, info->name, sizeof err_name);
  const nnclient_status st = query_info(c, NND_MSG_MODEL_INFO, 0, err_name, &now);
  if (st != NNCLIENT_OK) return st;
  if (now.signature != info->signature) {
    return set_err(c, NNCLIENT_E_MODEL_CHANGED, "model '%s' changed (version %u -> %u, signature "
                   "%016llx -> %016llx): call nnclient_model_info again", err_name,
                   info->version, now.version, (unsigned long long)info->signature,
                   (unsigned long long)now.signature);
  }
  return NNCLIENT_OK;
}

static nnclient_status validate_info(nnclient_t* c, const nnclient_model_info_t* info) {
  if (memchr(info->name, '\0', sizeof info->name) == NULL || info->name[0] == '\0' ||
      info->num_inputs > NNCLIENT_MAX_TENSORS || info->num_outputs > NNCLIENT_MAX_TENSORS) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info does not come from nnclient_model_info (bad name or tensor counts)");
  }
  return NNCLIENT_OK;
}

/* Lays out a request of `batch` samples in a slot's data area (nnd_ipc.h: inputs, then outputs,
 * each 64-byte aligned) into r's offsets; *end = end of the last output. false on overflow. */
static int layout_request(const nnclient_model_info_t* info, uint32_t batch,
                          struct nnclient_request* r, uint64_t* end) {
  uint64_t off = 0;
  for (uint32_t side = 0; side < 2; ++side) {
    const uint32_t count = side == 0 ? info->num_inputs : info->num_outputs;
    for (uint32_t k = 0; k < count; ++k) {
      const size_t sample = side == 0 ? info->inputs[k].sample_bytes : info->outputs[k].sample_bytes;
      uint64_t len;
      if (__builtin_mul_overflow((uint64_t)sample, (uint64_t)batch, &len) ||
          len > (UINT64_MAX >> 4) || off > (UINT64_MAX >> 4)) {
        return 0;
      }
      off = nnd_ipc_align(off);
      if (side == 0) {
        r->in_off[k] = off;
        r->in_len[k] = len;
      } else {
        r->out_off[k] = off;
        r->out_len[k] = len;
      }
      off += len;
    }
    if (side == 0) r->input_end = off;
  }
  *end = off;
  return 1;
}

/* Reconnects asking for slots of `slot_bytes` (the daemon keeps nothing of the old session; the
 * caller made sure no request is in flight on it). */
static nnclient_status reconnect_with_slot_bytes(nnclient_t* c, uint64_t slot_bytes) {
  c->want_slot_bytes = nnd_ipc_align(slot_bytes);
  disconnect(c);
  return connect_daemon(c);
}

/* A request of `need` bytes does not fit this handle's slots: grow them with a new hand-shake
 * asking for that size. Requests in flight are waited for first (at most the control bound):
 * their answers stay readable in the old segment, which stays mapped while a request object
 * refers to it. A request begun but not submitted holds a slot of the old segment it would be
 * sent from, so it keeps the handle from growing. */
static nnclient_status grow_slots(nnclient_t* c, const nnclient_model_info_t* info, uint32_t batch,
                                  uint64_t need) {
  struct nnc_seg* s = c->seg;
  const int64_t end = mono_ns() + (int64_t)NNC_CONTROL_TIMEOUT_MS * 1000000LL;
  for (uint32_t i = 0; i < s->nslots; ++i) {
    struct nnclient_request* r = s->slot_busy[i] ? s->slot_req[i] : NULL;
    if (r && r->state == REQ_BEGUN) {
      return set_err(c, NNCLIENT_E_SHAPE, "model '%s' with batch %u needs %llu bytes of inputs and "
                     "outputs, this handle's request slots hold %llu; it cannot grow them while "
                     "a begun request (model '%s') is not submitted or released", info->name,
                     batch, (unsigned long long)need, (unsigned long long)s->slot_data_bytes,
                     r->model);
    }
  }
  for (uint32_t i = 0; i < s->nslots && !c->broken; ++i) {
    struct nnclient_request* r = s->slot_busy[i] ? s->slot_req[i] : NULL;
    if (!r || r->state != REQ_SUBMITTED) continue;
    const int64_t left_us = (end - mono_ns()) / 1000;
    if (wait_request(c, r, left_us > 0 ? (uint64_t)left_us : 1) == NNCLIENT_E_TIMEOUT) {
      return set_err(c, NNCLIENT_E_SHAPE, "model '%s' with batch %u needs %llu bytes of inputs and "
                     "outputs, this handle's request slots hold %llu, and the requests in flight "
                     "were not answered within %d ms to let it grow them; say the largest batch "
                     "at open (nnclient_open_with, max_batch)", info->name, batch,
                     (unsigned long long)need, (unsigned long long)s->slot_data_bytes,
                     NNC_CONTROL_TIMEOUT_MS);
    }
  }
  c->err[0] = '\0';  /* an answered request's error is its own, reported by its wait */
  const nnclient_status st = reconnect_with_slot_bytes(c, need);
  if (st != NNCLIENT_OK) return st;
  if (need > c->seg->slot_data_bytes) {
    return set_err(c, NNCLIENT_E_SHAPE, "model '%s' with batch %u needs %llu bytes of inputs and "
                   "outputs; the daemon grants at most %llu per slot (the largest request any "
                   "served model accepts)", info->name, batch, (unsigned long long)need,
                   (unsigned long long)c->seg->slot_data_bytes);
  }
  return NNCLIENT_OK;
}

static nnclient_status begin(nnclient_t* c, const nnclient_model_info_t* info, uint32_t batch,
                             struct nnclient_request** out) {
  nnclient_status st = ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = check_request_model(c, info);
  if (st != NNCLIENT_OK) return st;
  if (!c->seg) return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon went away");
  if (info->max_batch && batch > info->max_batch) {
    return set_err(c, NNCLIENT_E_SHAPE, "batch %u exceeds model '%s' max_batch %u", batch,
                   info->name, info->max_batch);
  }
  struct nnclient_request tmp;
  memset(&tmp, 0, sizeof tmp);
  uint64_t off = 0;
  if (!layout_request(info, batch, &tmp, &off)) {
    return set_err(c, NNCLIENT_E_SHAPE, "request size overflows");
  }
  if (off > c->seg->slot_data_bytes) {
    st = grow_slots(c, info, batch, off);
    if (st != NNCLIENT_OK) return st;
  }
  struct nnc_seg* s = c->seg;
  if (s->nfree == 0) drain(c, s); /* may return slots of abandoned requests */
  if (s->nfree == 0 || !c->free_reqs) {
    return set_err(c, NNCLIENT_E_NO_SLOT, "all %u request slots are in flight", s->nslots);
  }
  struct nnclient_request* r = c->free_reqs;
  c->free_reqs = r->next_free;
  const uint32_t slot = s->free_slots[--s->nfree];
  memcpy(r->in_off, tmp.in_off, sizeof r->in_off);
  memcpy(r->in_len, tmp.in_len, sizeof r->in_len);
  memcpy(r->out_off, tmp.out_off, sizeof r->out_off);
  memcpy(r->out_len, tmp.out_len, sizeof r->out_len);
  r->input_end = tmp.input_end;
  r->owner = c;
  r->seg = s;
  r->next_free = NULL;
  r->state = REQ_BEGUN;
  r->slot = slot;
  r->batch = batch;
  r->sequence = ++c->next_sequence;
  r->status = NNCLIENT_OK;
  r->n_in = info->num_inputs;
  r->n_out = info->num_outputs;
  r->signature = info->signature;
  memcpy(r->model, info->name, sizeof r->model);
  s->refs++;
  s->slot_busy[slot] = 1;
  s->slot_req[slot] = r;
  *out = r;
  return NNCLIENT_OK;
}

NNC_EXPORT nnclient_status nnclient_request_begin(nnclient_t* c, const nnclient_model_info_t* info,
                                                  uint32_t batch, nnclient_request_t** request) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (request) *request = NULL;
  if (!info || !request) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info or request is NULL");
  if (batch == 0) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "batch must be at least 1");
  const nnclient_status st = validate_info(c, info);
  if (st != NNCLIENT_OK) return st;
  return begin(c, info, batch, request);
}

static unsigned char* slot_data(const struct nnclient_request* r) {
  return r->seg->data + (uint64_t)r->slot * r->seg->slot_data_bytes;
}

NNC_EXPORT void* nnclient_request_input(nnclient_request_t* r, uint32_t k) {
  if (!r || r->state != REQ_BEGUN || k >= r->n_in) return NULL;
  return slot_data(r) + r->in_off[k];
}

NNC_EXPORT const void* nnclient_request_output(const nnclient_request_t* r, uint32_t k) {
  if (!r || r->state != REQ_DONE || r->status != NNCLIENT_OK || k >= r->n_out) return NULL;
  return slot_data(r) + r->out_off[k];
}

static int request_of(const nnclient_t* c, const nnclient_request_t* r) {
  return r >= &c->reqs[0] && r < &c->reqs[NNC_MAX_REQUESTS] && r->owner == c &&
         r->state != REQ_FREE;
}

NNC_EXPORT nnclient_status nnclient_submit(nnclient_t* c, nnclient_request_t* r,
                                           const nnclient_request_options* options) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!r || !request_of(c, r)) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request does not belong to this handle");
  }
  if (r->state != REQ_BEGUN) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request was already submitted");
  }
  if (options && options->deadline_us < 0) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "negative deadline_us");
  }
  struct nnc_seg* s = r->seg;
  if (s != c->seg || s->dead || c->broken) {
    r->state = REQ_DONE;
    r->status = NNCLIENT_E_DAEMON_RESTARTED;
    return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon went away after the request began");
  }
  struct nnd_ipc_slot* sl = &s->slots[r->slot];
  memcpy(sl->model, r->model, sizeof sl->model);
  sl->signature = r->signature;
  sl->batch = r->batch;
  sl->sequence = r->sequence;
  sl->deadline_ns =
      (options && options->deadline_us > 0) ? mono_ns() + options->deadline_us * 1000 : 0;
  sl->input_bytes = r->input_end;
  sl->status = NND_IPC_E_INTERNAL;
  sl->served_batch = 0;
  sl->output_bytes = 0;

  struct nnd_ipc_header* h = s->hdr;
  nnd_ipc_ring_push(&h->submit, &s->submit_head, r->slot);
  r->state = REQ_SUBMITTED;
  if (nnd_ipc_submit_needs_wake(h)) {
    const uint64_t one = 1;
    ssize_t n;
    do n = write(c->efd, &one, sizeof one);
    while (n < 0 && errno == EINTR);
    /* EAGAIN: the counter is saturated, so the daemon has a wake-up pending anyway. */
    if (n < 0 && errno != EAGAIN) return sys_err(c, "write(eventfd)");
  }
  return NNCLIENT_OK;
}

static nnclient_status finished(nnclient_t* c, struct nnclient_request* r) {
  if (r->status == NNCLIENT_OK) return NNCLIENT_OK;
  if (r->status == NNCLIENT_E_MODEL_CHANGED && r->seg == c->seg && c->seg) {
    cache_forget(c->seg, r->model);
  }
  return set_err(c, r->status, "daemon answered request for model '%s': %s", r->model,
                 nnclient_strerror(r->status));
}

static nnclient_status wait_request(nnclient_t* c, struct nnclient_request* r,
                                    uint64_t timeout_us) {
  if (r->state == REQ_DONE) return finished(c, r);
  struct nnc_seg* s = r->seg;
  if (s != c->seg || s->dead || c->broken) {
    r->state = REQ_DONE;
    r->status = NNCLIENT_E_DAEMON_RESTARTED;
    return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon went away with request for model "
                   "'%s' in flight", r->model);
  }
  const int64_t start = mono_ns();
  const int64_t deadline =
      timeout_us == 0 ? INT64_MAX
                      : (timeout_us > (uint64_t)(INT64_MAX - start) / 1000 ? INT64_MAX
                                                                           : start + (int64_t)timeout_us * 1000);
  /* Bounded spin: the answer of a small model often comes within microseconds. */
  if (drain(c, s) > 0 && r->state == REQ_DONE) return finished(c, r);
  if (c->spin_us) {
    const int64_t spin_end = start + (int64_t)c->spin_us * 1000;
    for (;;) {
      for (int i = 0; i < 16; ++i) cpu_relax();
      if (drain(c, s) > 0 && r->state == REQ_DONE) return finished(c, r);
      const int64_t now = mono_ns();
      if (now >= spin_end || now >= deadline) break;
    }
  }
  struct nnd_ipc_header* h = s->hdr;
  for (;;) {
    if (drain(c, s) < 0) {
      return set_err(c, NNCLIENT_E_PROTOCOL, "the daemon corrupted the completion ring");
    }
    if (r->state == REQ_DONE) return finished(c, r);
    if (!socket_alive(c)) {
      c->broken = 1;
      r->state = REQ_DONE;
      r->status = NNCLIENT_E_DAEMON_RESTARTED;
      return set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection with "
                     "request for model '%s' in flight", r->model);
    }
    const int64_t now = mono_ns();
    if (now >= deadline) {
      return set_err(c, NNCLIENT_E_TIMEOUT, "no answer for model '%s' within %llu us", r->model,
                     (unsigned long long)timeout_us);
    }
    int64_t slice = deadline - now;
    if (slice > NNC_SLEEP_SLICE_NS) slice = NNC_SLEEP_SLICE_NS;
    uint32_t seq;
    if (nnd_ipc_client_begin_sleep(h, s->complete_tail, &seq)) {
      struct timespec ts = {.tv_sec = slice / 1000000000LL, .tv_nsec = slice % 1000000000LL};
      const long rc = syscall(SYS_futex, &h->complete_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
      if (rc != 0 && errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT) {
        nnd_ipc_client_end_sleep(h);
        return sys_err(c, "futex(FUTEX_WAIT)");
      }
    }
    nnd_ipc_client_end_sleep(h);
  }
}

NNC_EXPORT nnclient_status nnclient_wait(nnclient_t* c, nnclient_request_t* r,
                                         uint64_t timeout_us) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!r || !request_of(c, r)) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request does not belong to this handle");
  }
  if (r->state == REQ_BEGUN) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request was not submitted");
  }
  return wait_request(c, r, timeout_us);
}

NNC_EXPORT void nnclient_request_release(nnclient_t* c, nnclient_request_t* r) {
  if (!c || !r || !request_of(c, r)) return;
  struct nnc_seg* s = r->seg;
  if (!s->dead) {
    if (r->state == REQ_SUBMITTED) {
      s->slot_req[r->slot] = NULL; /* abandoned: the slot is freed when the daemon hands it back */
    } else {
      free_slot(s, r->slot);
    }
  }
  r->state = REQ_FREE;
  r->seg = NULL;
  r->owner = NULL;
  r->next_free = c->free_reqs;
  c->free_reqs = r;
  seg_unref(s);
}

/* One attempt of nnclient_infer (arguments already checked). */
static nnclient_status infer_once(nnclient_t* c, const nnclient_model_info_t* info,
                                  const void* const* inputs, uint32_t batch, void* const* outputs,
                                  uint64_t timeout_us) {
  const int64_t start = mono_ns();
  if (timeout_us != 0 && timeout_us / 1000 < (uint64_t)NNC_CONTROL_TIMEOUT_MS) {
    c->ctl_timeout_ms = (int)((timeout_us + 999) / 1000);
  }
  struct nnclient_request* r = NULL;
  nnclient_status st = begin(c, info, batch, &r);
  c->ctl_timeout_ms = NNC_CONTROL_TIMEOUT_MS;
  if (st != NNCLIENT_OK) return st;
  unsigned char* data = slot_data(r);
  for (uint32_t k = 0; k < r->n_in; ++k) memcpy(data + r->in_off[k], inputs[k], r->in_len[k]);
  st = nnclient_submit(c, r, NULL);
  if (st == NNCLIENT_OK) {
    uint64_t left = timeout_us;
    if (timeout_us != 0) {
      const uint64_t spent = (uint64_t)(mono_ns() - start) / 1000;
      left = spent >= timeout_us ? 1 : timeout_us - spent;
    }
    st = wait_request(c, r, left);
  }
  if (st == NNCLIENT_OK) {
    for (uint32_t k = 0; k < r->n_out; ++k) memcpy(outputs[k], data + r->out_off[k], r->out_len[k]);
  }
  nnclient_request_release(c, r);
  return st;
}

NNC_EXPORT nnclient_status nnclient_infer(nnclient_t* c, const nnclient_model_info_t* info,
                                          const void* const* inputs, uint32_t batch,
                                          void* const* outputs, uint64_t timeout_us) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!info) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info is NULL");
  if (batch == 0) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "batch must be at least 1");
  nnclient_status st = validate_info(c, info);
  if (st != NNCLIENT_OK) return st;
  if (info->num_inputs && !inputs) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "inputs is NULL");
  if (info->num_outputs && !outputs) {
    return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "outputs is NULL");
  }
  for (uint32_t k = 0; k < info->num_inputs; ++k) {
    if (!inputs[k]) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "inputs[%u] is NULL", k);
  }
  for (uint32_t k = 0; k < info->num_outputs; ++k) {
    if (!outputs[k]) return set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "outputs[%u] is NULL", k);
  }
  /* A reconnect or model re-validation inside this call counts against its timeout. Inference
   * is a pure function of the inputs, which the caller still holds: when the daemon went away
   * during the call, one retry on a new connection is safe; it is made only while the timeout
   * allows and only if a daemon is back (else DAEMON_RESTARTED stands). */
  const int64_t start = mono_ns();
  for (int attempt = 0;; ++attempt) {
    uint64_t left = timeout_us;
    if (timeout_us != 0) {
      const uint64_t spent = (uint64_t)(mono_ns() - start) / 1000;
      if (attempt > 0 && spent >= timeout_us) return st;
      left = spent >= timeout_us ? 1 : timeout_us - spent;
    }
    const nnclient_status previous = st;
    char previous_err[NNC_ERR_BYTES];
    if (attempt > 0) memcpy(previous_err, c->err, sizeof previous_err);
    st = infer_once(c, info, inputs, batch, outputs, left);
    if (attempt > 0 && (st == NNCLIENT_E_DAEMON_NOT_RUNNING || st == NNCLIENT_E_TIMEOUT) &&
        c->seg == NULL) {
      /* No daemon to retry on: report the restart that ended the first attempt. */
      memcpy(c->err, previous_err, sizeof previous_err);
      return previous;
    }
    if (st != NNCLIENT_E_DAEMON_RESTARTED || attempt > 0) return st;
  }
}
