/* nnclient_handle.c — the handle: where it connects (endpoint), opening with the slots its models
 * need, closing, and the connection's state (liveness checks, reconnects). */
#define _GNU_SOURCE 1

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/nnd_endpoint.h"
#include "ipc/nnd_ipc.h"
#include "nnclient.h"
#include "nnclient_internal.h"
#include "nnclient_private.h"

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

void nnc_seg_unref(struct nnc_seg* s) {
  if (!s || --s->refs > 0) return;
  munmap(s->base, s->bytes);
  free(s);
}

void nnc_disconnect(nnclient_t* c) {
  if (c->seg) {
    c->seg->dead = 1;
    nnc_seg_unref(c->seg);
    c->seg = NULL;
  }
  if (c->sock >= 0) close(c->sock);
  if (c->efd >= 0) close(c->efd);
  c->sock = c->efd = -1;
  c->broken = 0;
}

/* Reports whether the control socket is still connected (no hang-up, no EOF). Never blocks. */
int nnc_socket_alive(nnclient_t* c) {
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

/* Makes sure the handle has a live connection: reconnects after a known failure, and — when the
 * handle was idle for a while — checks the socket for a hang-up first (one poll; none while
 * requests flow). */
nnclient_status nnc_ensure_connected(nnclient_t* c) {
  if (c->seg && !c->broken) {
    const int64_t now = nnc_mono_ns();
    if (now - c->last_alive_ns < NNC_LIVENESS_NS) return NNCLIENT_OK;
    if (nnc_socket_alive(c)) {
      c->last_alive_ns = now;
      return NNCLIENT_OK;
    }
  }
  nnc_disconnect(c);
  return nnc_connect_daemon(c);
}

/* ---- open / close ------------------------------------------------------------------------- */

/* Reconnects asking for slots of `slot_bytes` (the daemon keeps nothing of the old session; the
 * caller made sure no request is in flight on it). */
nnclient_status nnc_reconnect_with_slot_bytes(nnclient_t* c, uint64_t slot_bytes) {
  c->want_slot_bytes = nnd_ipc_align(slot_bytes);
  nnc_disconnect(c);
  return nnc_connect_daemon(c);
}

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
        return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "options.models[%u] is NULL", i);
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
    if (!nnc_layout_request(&info, b, &tmp, &end)) {
      return nnc_set_err(c, NNCLIENT_E_SHAPE, "model '%s' at batch %u: request size overflows",
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
  nnclient_status st = nnc_connect_daemon(c);
  if (st == NNCLIENT_OK && (o.max_batch || o.num_models)) {
    /* The first hand-shake got slots for one sample of the largest model; the models this
     * handle will run may need more (a larger batch) or less (smaller models). */
    uint64_t need = 0;
    st = needed_slot_bytes(c, &o, &need);
    if (st == NNCLIENT_OK && need && c->seg && need != c->seg->slot_data_bytes) {
      st = nnc_reconnect_with_slot_bytes(c, need);
    }
  }
  if (st != NNCLIENT_OK) {
    memcpy(nnc_open_err, c->err, sizeof nnc_open_err);
    nnc_disconnect(c);
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
      nnc_seg_unref(r->seg);
      r->seg = NULL;
    }
  }
  nnc_disconnect(c);
  free(c);
}
