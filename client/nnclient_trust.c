/* nnclient_trust.c — whom libnnclient talks to. Before anything is sent the peer on the socket
 * must be trusted to be the daemon (its user); then the hand-shake: hello, the welcome with the
 * segment and eventfd, and every size of the welcome and of the segment header checked against
 * each other before the segment is used. */
#define _GNU_SOURCE 1

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"
#include "nnclient.h"
#include "nnclient_internal.h"

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
    return nnc_sys_err(c, "getsockopt(SO_PEERCRED)");
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
  return nnc_set_err(c, NNCLIENT_E_ACCESS,
                 "refusing the daemon on %s: it runs as %s, which this client does not trust "
                 "(root, your own user, the owner of a socket directory only it and root can "
                 "write, the user '" NNC_DAEMON_USER "', or " NNC_TRUSTED_USERS_ENV "); another "
                 "program may have taken the endpoint. If it is your daemon, set "
                 NNC_TRUSTED_USERS_ENV "=%s",
                 c->path, who, name[0] ? name : number);
}

nnclient_status nnc_connect_daemon(nnclient_t* c) {
  int fds[2] = {-1, -1};
  int nfds = 0;
  unsigned char* base = MAP_FAILED;
  size_t map_bytes = 0;
  nnclient_status st = NNCLIENT_OK;

  c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (c->sock < 0) return nnc_sys_err(c, "socket(AF_UNIX, SOCK_SEQPACKET)");
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, c->path, strlen(c->path) + 1);
  if (connect(c->sock, (struct sockaddr*)&addr, sizeof addr) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) {
      st = nnc_set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "no daemon listens on %s: %s", c->path,
                   strerror(e));
    } else if (e == EACCES || e == EPERM) {
      st = nnc_set_err(c, NNCLIENT_E_ACCESS, "cannot connect to %s: %s", c->path, strerror(e));
    } else if (e == EAGAIN) {
      st =
          nnc_set_err(c, NNCLIENT_E_OVERLOADED, "the daemon's listen queue on %s is full", c->path);
    } else {
      errno = e;
      st = nnc_sys_err(c, "connect");
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
  nnc_copy_name(hello.client_name, program_invocation_short_name, sizeof hello.client_name);
  if (send(c->sock, &hello, sizeof hello, MSG_NOSIGNAL) != (ssize_t)sizeof hello) {
    if (errno == EPIPE || errno == ECONNRESET) {
      st = nnc_set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s closed the connection",
                   c->path);
    } else {
      st = nnc_sys_err(c, "send(hello)");
    }
    goto fail;
  }

  const int ready = nnc_wait_readable(c->sock, c->ctl_timeout_ms);
  if (ready <= 0) {
    st = ready == 0
             ? nnc_set_err(c, NNCLIENT_E_TIMEOUT, "no welcome from the daemon on %s within %d ms",
                           c->path, c->ctl_timeout_ms)
             : nnc_sys_err(c, "poll(control socket)");
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
             ? nnc_set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s reset the connection",
                       c->path)
             : nnc_sys_err(c, "recvmsg(welcome)");
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
    st = nnc_set_err(c, NNCLIENT_E_DAEMON_NOT_RUNNING, "daemon on %s closed the connection during "
                 "the hand-shake", c->path);
    goto fail;
  }
  if ((size_t)n < 16 || msg.w.type != NND_MSG_WELCOME) {
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL, "bad welcome from %s (%zd bytes, type %u)", c->path, n,
                 (size_t)n >= 4 ? msg.w.type : 0u);
    goto fail;
  }
  if (msg.w.status != NND_IPC_OK) {
    const nnclient_status why = nnc_from_ipc(msg.w.status);
    msg.w.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
    st = nnc_set_err(c, why, "daemon on %s refused the connection: %s",
                 c->path, (size_t)n == sizeof msg.w ? msg.w.message : nnclient_strerror(why));
    goto fail;
  }
  if (msg.w.version != NND_IPC_VERSION || (size_t)n != sizeof msg.w) {
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL,
                 "daemon on %s speaks protocol version %u (welcome %zd bytes), this client %u "
                 "(%zu bytes)", c->path, msg.w.version, n, NND_IPC_VERSION, sizeof msg.w);
    goto fail;
  }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || nfds != 2) {
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL,
                     "welcome from %s carried %d file descriptors, expected "
                     "2 (memfd, eventfd)",
                     c->path, nfds);
    goto fail;
  }
  const struct nnd_ipc_welcome w = msg.w;
  if (w.slots == 0 || w.slots > NND_IPC_MAX_SLOTS || w.slot_data_bytes == 0 ||
      w.slot_data_bytes % NND_IPC_DATA_ALIGN != 0 ||
      w.segment_bytes < sizeof(struct nnd_ipc_header) || w.segment_bytes > (uint64_t)SIZE_MAX) {
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL,
                     "welcome has impossible sizes (slots %u, slot data %llu, "
                     "segment %llu bytes)",
                     w.slots, (unsigned long long)w.slot_data_bytes,
                     (unsigned long long)w.segment_bytes);
    goto fail;
  }
  struct stat sb;
  if (fstat(fds[0], &sb) != 0) {
    st = nnc_sys_err(c, "fstat(segment)");
    goto fail;
  }
  if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size != w.segment_bytes) {
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL, "segment fd is %lld bytes, welcome says %llu",
                 (long long)sb.st_size, (unsigned long long)w.segment_bytes);
    goto fail;
  }
  map_bytes = (size_t)w.segment_bytes;
  base = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  if (base == MAP_FAILED) {
    st = nnc_sys_err(c, "mmap(segment)");
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
    st = nnc_set_err(c, NNCLIENT_E_PROTOCOL,
                     "segment header does not match the welcome (magic %#x, "
                     "version %u, slots %u, slots at %llu, data at %llu)",
                     hdr->magic, hdr->version, hdr->slots, (unsigned long long)hdr->slots_offset,
                     (unsigned long long)hdr->data_offset);
    goto fail;
  }

  struct nnc_seg* s = calloc(1, sizeof *s);
  if (!s) {
    errno = ENOMEM;
    st = nnc_sys_err(c, "calloc(segment state)");
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
  c->last_alive_ns = nnc_mono_ns();
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
