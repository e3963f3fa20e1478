/* nnclient_internal.h — what libnnclient's units share (not installed, not exported).
 *
 * The library is five units, each one job:
 *   nnclient_common.c   errors and status text, the version, small helpers
 *   nnclient_trust.c    whom the client talks to: the peer's identity, then the hand-shake, whose
 *                       welcome and segment header are checked before anything is used
 *   nnclient_handle.c   the handle: endpoint, open/close, connection state, reconnects
 *   nnclient_control.c  control requests on the socket (model info, list, stats, metrics, daemon
 *                       and client info, reload)
 *   nnclient_data.c     the data path through the shared-memory rings (begin, submit, wait,
 *                       release, infer)
 *
 * One handle owns one connection: the control socket, the eventfd that wakes the daemon and the
 * mapping of the client's segment ("seg" below). A reconnect makes a new seg; the old one stays
 * mapped until every request that still points into it has been released, so a pointer from
 * nnclient_request_input never dangles.
 *
 * Functions shared between units are named nnc_*: with -fvisibility=hidden they are not exported
 * from libnnclient.so, and the prefix keeps them out of an application's way when it links the
 * static library. */
#ifndef NNCLIENT_INTERNAL_H
#define NNCLIENT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ipc/nnd_ipc.h"
#include "nnclient.h"

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

/* nnclient_open's message when it returns no handle (nnclient_last_error(NULL)). */
extern _Thread_local char nnc_open_err[NNC_ERR_BYTES];

/* ---- nnclient_common.c ---- */
int64_t nnc_mono_ns(void);
/* Writes the handle's message; returns `st`. */
nnclient_status nnc_set_err(nnclient_t* c, nnclient_status st, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A system call failed: errno text in the message. */
nnclient_status nnc_sys_err(nnclient_t* c, const char* what);
void nnc_copy_name(char* dst, const char* src, size_t n);
/* Status of a slot or control reply as the API's status. */
nnclient_status nnc_from_ipc(int32_t s);
/* Waits up to timeout_ms for `fd` to become readable. 1 ready, 0 timeout, -1 error. */
int nnc_wait_readable(int fd, int timeout_ms);

/* ---- nnclient_trust.c ---- */
/* Connects to c->path, makes sure the peer is trusted to be the daemon, says hello and maps the
 * segment of the welcome after checking it. On success c->seg, c->sock and c->efd are set. */
nnclient_status nnc_connect_daemon(nnclient_t* c);

/* ---- nnclient_handle.c ---- */
void nnc_seg_unref(struct nnc_seg* s);
/* Drops the connection (the current segment is marked dead and unreferenced). */
void nnc_disconnect(nnclient_t* c);
/* Whether the control socket is still connected (no hang-up, no EOF). Never blocks. */
int nnc_socket_alive(nnclient_t* c);
/* Makes sure the handle has a live connection, reconnecting if needed. */
nnclient_status nnc_ensure_connected(nnclient_t* c);
/* Reconnects asking for slots of `slot_bytes`. */
nnclient_status nnc_reconnect_with_slot_bytes(nnclient_t* c, uint64_t slot_bytes);

/* ---- nnclient_control.c ---- */
/* Model info by name (`name` set) or by index (NND_MSG_LIST_MODELS), remembered as validated
 * on the current connection. */
nnclient_status nnc_query_info(nnclient_t* c, uint32_t type, uint32_t index, const char* name,
                               nnclient_model_info_t* info);
/* Forgets that `name` was validated on this segment (its model changed). */
void nnc_cache_forget(struct nnc_seg* s, const char* name);

/* ---- nnclient_data.c ---- */
/* Lays out a request of `batch` samples in a slot's data area into r's offsets; *end = end of the
 * last output. 0 on overflow. */
int nnc_layout_request(const nnclient_model_info_t* info, uint32_t batch,
                       struct nnclient_request* r, uint64_t* end);

#endif /* NNCLIENT_INTERNAL_H */
