/* nnclient_data.c — libnnclient's data path: requests in the slots of the shared segment.
 *
 * No lock, no system call while the daemon keeps up; the ring and wake-flag steps are the shared
 * functions of ipc/nnd_ipc_ring.h:
 *   submit: write the slot, push its index on the submit ring (release), then — only if the
 *           daemon announced it may sleep — write the eventfd.
 *   wait:   pop the complete ring; spin up to spin_us with a pause instruction; then announce
 *           client_sleeping, re-check, and FUTEX_WAIT (shared, not private) on complete_seq in
 *           slices of at most 20 ms, polling the control socket between slices so a dead daemon
 *           is noticed (POLLHUP/EOF) within the caller's timeout.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"
#include "nnclient.h"
#include "nnclient_internal.h"

/* ---- data path ---------------------------------------------------------------------------- */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

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
    r->status = nnc_from_ipc(sl->status);
    if (r->status == NNCLIENT_OK && sl->sequence != r->sequence) r->status = NNCLIENT_E_PROTOCOL;
    r->state = REQ_DONE;
  }
  nnd_ipc_ring_release(&h->complete, tail);
  s->complete_tail = tail;
  c->last_alive_ns = nnc_mono_ns();
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
  nnc_copy_name(err_name, info->name, sizeof err_name);
  const nnclient_status st = nnc_query_info(c, NND_MSG_MODEL_INFO, 0, err_name, &now);
  if (st != NNCLIENT_OK) return st;
  if (now.signature != info->signature) {
    return nnc_set_err(c, NNCLIENT_E_MODEL_CHANGED,
                       "model '%s' changed (version %u -> %u, signature "
                       "%016llx -> %016llx): call nnclient_model_info again",
                       err_name, info->version, now.version, (unsigned long long)info->signature,
                       (unsigned long long)now.signature);
  }
  return NNCLIENT_OK;
}

static nnclient_status validate_info(nnclient_t* c, const nnclient_model_info_t* info) {
  if (memchr(info->name, '\0', sizeof info->name) == NULL || info->name[0] == '\0' ||
      info->num_inputs > NNCLIENT_MAX_TENSORS || info->num_outputs > NNCLIENT_MAX_TENSORS) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info does not come from nnclient_model_info (bad name or tensor counts)");
  }
  return NNCLIENT_OK;
}

/* Lays out a request of `batch` samples in a slot's data area (nnd_ipc.h: inputs, then outputs,
 * each 64-byte aligned) into r's offsets; *end = end of the last output. false on overflow. */
int nnc_layout_request(const nnclient_model_info_t* info, uint32_t batch,
                       struct nnclient_request* r, uint64_t* end) {
  uint64_t off = 0;
  for (uint32_t side = 0; side < 2; ++side) {
    const uint32_t count = side == 0 ? info->num_inputs : info->num_outputs;
    for (uint32_t k = 0; k < count; ++k) {
      const size_t sample =
          side == 0 ? info->inputs[k].sample_bytes : info->outputs[k].sample_bytes;
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

static nnclient_status wait_request(nnclient_t* c, struct nnclient_request* r,
                                    uint64_t timeout_us);

/* A request of `need` bytes does not fit this handle's slots: grow them with a new hand-shake
 * asking for that size. Requests in flight are waited for first (at most the control bound):
 * their answers stay readable in the old segment, which stays mapped while a request object
 * refers to it. A request begun but not submitted holds a slot of the old segment it would be
 * sent from, so it keeps the handle from growing. */
static nnclient_status grow_slots(nnclient_t* c, const nnclient_model_info_t* info, uint32_t batch,
                                  uint64_t need) {
  struct nnc_seg* s = c->seg;
  const int64_t end = nnc_mono_ns() + (int64_t)NNC_CONTROL_TIMEOUT_MS * 1000000LL;
  for (uint32_t i = 0; i < s->nslots; ++i) {
    struct nnclient_request* r = s->slot_busy[i] ? s->slot_req[i] : NULL;
    if (r && r->state == REQ_BEGUN) {
      return nnc_set_err(
          c, NNCLIENT_E_SHAPE,
          "model '%s' with batch %u needs %llu bytes of inputs and "
          "outputs, this handle's request slots hold %llu; it cannot grow them while "
          "a begun request (model '%s') is not submitted or released",
          info->name, batch, (unsigned long long)need, (unsigned long long)s->slot_data_bytes,
          r->model);
    }
  }
  for (uint32_t i = 0; i < s->nslots && !c->broken; ++i) {
    struct nnclient_request* r = s->slot_busy[i] ? s->slot_req[i] : NULL;
    if (!r || r->state != REQ_SUBMITTED) continue;
    const int64_t left_us = (end - nnc_mono_ns()) / 1000;
    if (wait_request(c, r, left_us > 0 ? (uint64_t)left_us : 1) == NNCLIENT_E_TIMEOUT) {
      return nnc_set_err(
          c, NNCLIENT_E_SHAPE,
          "model '%s' with batch %u needs %llu bytes of inputs and "
          "outputs, this handle's request slots hold %llu, and the requests in flight "
          "were not answered within %d ms to let it grow them; say the largest batch "
          "at open (nnclient_open_with, max_batch)",
          info->name, batch, (unsigned long long)need, (unsigned long long)s->slot_data_bytes,
          NNC_CONTROL_TIMEOUT_MS);
    }
  }
  c->err[0] = '\0';  /* an answered request's error is its own, reported by its wait */
  const uint64_t had = s->slot_data_bytes;
  const nnclient_status st = nnc_reconnect_with_slot_bytes(c, need);
  if (st == NNCLIENT_E_MEMORY_LIMIT) {
    /* The daemon has no room for slots that large (its message names the limit): the handle
     * goes on with slots of the size it had, for the requests that fit them. */
    char why[NNC_ERR_BYTES];
    memcpy(why, c->err, sizeof why);
    if (nnc_reconnect_with_slot_bytes(c, had) == NNCLIENT_OK) {
      return nnc_set_err(c, NNCLIENT_E_MEMORY_LIMIT,
                         "model '%s' with batch %u needs request slots of %llu bytes: %s",
                         info->name, batch, (unsigned long long)need, why);
    }
  }
  if (st == NNCLIENT_E_TIMEOUT) {
    /* The hand-shake ran under the caller's timeout, which may be far shorter than a hand-shake
     * takes: say what happened instead of "no welcome within 1 ms". want_slot_bytes keeps the new
     * size, so the next call's reconnect asks for it. */
    return nnc_set_err(c, NNCLIENT_E_TIMEOUT,
                       "model '%s' with batch %u needs %llu bytes of inputs and outputs, this "
                       "handle's request slots held %llu: growing them takes a new hand-shake with "
                       "the daemon, which did not finish within this call's %d ms; the next call "
                       "completes it. To avoid it, say the largest batch at open "
                       "(nnclient_open_with, max_batch)",
                       info->name, batch, (unsigned long long)need, (unsigned long long)had,
                       c->ctl_timeout_ms);
  }
  if (st != NNCLIENT_OK) return st;
  if (need > c->seg->slot_data_bytes) {
    return nnc_set_err(c, NNCLIENT_E_SHAPE,
                       "model '%s' with batch %u needs %llu bytes of inputs and "
                       "outputs; the daemon grants at most %llu per slot (the largest request any "
                       "served model accepts)",
                       info->name, batch, (unsigned long long)need,
                       (unsigned long long)c->seg->slot_data_bytes);
  }
  return NNCLIENT_OK;
}

static nnclient_status begin(nnclient_t* c, const nnclient_model_info_t* info, uint32_t batch,
                             struct nnclient_request** out) {
  nnclient_status st = nnc_ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = check_request_model(c, info);
  if (st != NNCLIENT_OK) return st;
  if (!c->seg) return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon went away");
  if (info->max_batch && batch > info->max_batch) {
    return nnc_set_err(c, NNCLIENT_E_SHAPE, "batch %u exceeds model '%s' max_batch %u", batch,
                   info->name, info->max_batch);
  }
  struct nnclient_request tmp;
  memset(&tmp, 0, sizeof tmp);
  uint64_t off = 0;
  if (!nnc_layout_request(info, batch, &tmp, &off)) {
    return nnc_set_err(c, NNCLIENT_E_SHAPE, "request size overflows");
  }
  if (off > c->seg->slot_data_bytes) {
    st = grow_slots(c, info, batch, off);
    if (st != NNCLIENT_OK) return st;
  }
  struct nnc_seg* s = c->seg;
  if (s->nfree == 0) drain(c, s); /* may return slots of abandoned requests */
  if (s->nfree == 0 || !c->free_reqs) {
    return nnc_set_err(c, NNCLIENT_E_NO_SLOT, "all %u request slots are in flight", s->nslots);
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
  if (!info || !request)
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info or request is NULL");
  if (batch == 0) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "batch must be at least 1");
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
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request does not belong to this handle");
  }
  if (r->state != REQ_BEGUN) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request was already submitted");
  }
  if (options && options->deadline_us < 0) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "negative deadline_us");
  }
  struct nnc_seg* s = r->seg;
  if (s != c->seg || s->dead || c->broken) {
    r->state = REQ_DONE;
    r->status = NNCLIENT_E_DAEMON_RESTARTED;
    return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED,
                       "the daemon went away after the request began");
  }
  struct nnd_ipc_slot* sl = &s->slots[r->slot];
  memcpy(sl->model, r->model, sizeof sl->model);
  sl->signature = r->signature;
  sl->batch = r->batch;
  sl->sequence = r->sequence;
  sl->deadline_ns =
      (options && options->deadline_us > 0) ? nnc_mono_ns() + options->deadline_us * 1000 : 0;
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
    if (n < 0 && errno != EAGAIN) return nnc_sys_err(c, "write(eventfd)");
  }
  return NNCLIENT_OK;
}

static nnclient_status finished(nnclient_t* c, struct nnclient_request* r) {
  if (r->status == NNCLIENT_OK) return NNCLIENT_OK;
  if (r->status == NNCLIENT_E_MODEL_CHANGED && r->seg == c->seg && c->seg) {
    nnc_cache_forget(c->seg, r->model);
  }
  return nnc_set_err(c, r->status, "daemon answered request for model '%s': %s", r->model,
                 nnclient_strerror(r->status));
}

static nnclient_status wait_request(nnclient_t* c, struct nnclient_request* r,
                                    uint64_t timeout_us) {
  if (r->state == REQ_DONE) return finished(c, r);
  struct nnc_seg* s = r->seg;
  if (s != c->seg || s->dead || c->broken) {
    r->state = REQ_DONE;
    r->status = NNCLIENT_E_DAEMON_RESTARTED;
    return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED,
                       "the daemon went away with request for model "
                       "'%s' in flight",
                       r->model);
  }
  const int64_t start = nnc_mono_ns();
  const int64_t deadline = timeout_us == 0 ? INT64_MAX
                                           : (timeout_us > (uint64_t)(INT64_MAX - start) / 1000
                                                  ? INT64_MAX
                                                  : start + (int64_t)timeout_us * 1000);
  /* Bounded spin: the answer of a small model often comes within microseconds. */
  if (drain(c, s) > 0 && r->state == REQ_DONE) return finished(c, r);
  if (c->spin_us) {
    const int64_t spin_end = start + (int64_t)c->spin_us * 1000;
    for (;;) {
      for (int i = 0; i < 16; ++i) cpu_relax();
      if (drain(c, s) > 0 && r->state == REQ_DONE) return finished(c, r);
      const int64_t now = nnc_mono_ns();
      if (now >= spin_end || now >= deadline) break;
    }
  }
  struct nnd_ipc_header* h = s->hdr;
  for (;;) {
    if (drain(c, s) < 0) {
      return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "the daemon corrupted the completion ring");
    }
    if (r->state == REQ_DONE) return finished(c, r);
    if (!nnc_socket_alive(c)) {
      c->broken = 1;
      r->state = REQ_DONE;
      r->status = NNCLIENT_E_DAEMON_RESTARTED;
      return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection with "
                     "request for model '%s' in flight", r->model);
    }
    const int64_t now = nnc_mono_ns();
    if (now >= deadline) {
      return nnc_set_err(c, NNCLIENT_E_TIMEOUT, "no answer for model '%s' within %llu us", r->model,
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
        return nnc_sys_err(c, "futex(FUTEX_WAIT)");
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
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request does not belong to this handle");
  }
  if (r->state == REQ_BEGUN) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "request was not submitted");
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
  nnc_seg_unref(s);
}

/* One attempt of nnclient_infer (arguments already checked). */
static nnclient_status infer_once(nnclient_t* c, const nnclient_model_info_t* info,
                                  const void* const* inputs, uint32_t batch, void* const* outputs,
                                  uint64_t timeout_us) {
  const int64_t start = nnc_mono_ns();
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
      const uint64_t spent = (uint64_t)(nnc_mono_ns() - start) / 1000;
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
  if (!info) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info is NULL");
  if (batch == 0) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "batch must be at least 1");
  nnclient_status st = validate_info(c, info);
  if (st != NNCLIENT_OK) return st;
  if (info->num_inputs && !inputs)
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "inputs is NULL");
  if (info->num_outputs && !outputs) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "outputs is NULL");
  }
  for (uint32_t k = 0; k < info->num_inputs; ++k) {
    if (!inputs[k]) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "inputs[%u] is NULL", k);
  }
  for (uint32_t k = 0; k < info->num_outputs; ++k) {
    if (!outputs[k]) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "outputs[%u] is NULL", k);
  }
  /* A reconnect or model re-validation inside this call counts against its timeout. Inference
   * is a pure function of the inputs, which the caller still holds: when the daemon went away
   * during the call, one retry on a new connection is safe; it is made only while the timeout
   * allows and only if a daemon is back (else DAEMON_RESTARTED stands). */
  const int64_t start = nnc_mono_ns();
  for (int attempt = 0;; ++attempt) {
    uint64_t left = timeout_us;
    if (timeout_us != 0) {
      const uint64_t spent = (uint64_t)(nnc_mono_ns() - start) / 1000;
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
