/* nnd_ipc_ring.h — the ring algorithm and the wake-up protocol of ipc/nnd_ipc.h, written once for
 * both sides: the daemon (daemon/ipc/segment.cpp, daemon/ipc/sleeper.cpp) and libnnclient
 * (client/nnclient_data.c) call these functions instead of keeping their own copies.
 *
 * Header-only, plain C11 (also valid C++20), like nnd_ipc.h; libc headers only. No system call
 * here: each side makes its own (the client writes the daemon's eventfd, the daemon FUTEX_WAKEs
 * the client); these functions say when.
 *
 * Rings (struct nnd_ipc_ring): single producer, single consumer, indices that wrap modulo 2^32.
 * Each side keeps its own index (the producer its head, the consumer its tail) in private memory
 * and only publishes it; it reads the other side's index, never its own, back from the segment.
 * The consumer that distrusts the producer (the daemon popping `submit`) checks the producer's
 * head and each entry before use; the producer that distrusts the consumer (the daemon pushing
 * `complete`) checks the consumer's tail.
 *
 * Wake-up protocol, the same shape in both directions ("Dekker" with seq_cst fences):
 *   sleeper:  flag = 1; fence; re-check the ring; sleep only if still empty; flag = 0.
 *   waker:    push (release); fence; if flag != 0: wake.
 * Either the waker sees the flag, or the sleeper's re-check sees the push: a wake-up is never
 * lost, and while the sleeper is awake the waker makes no system call.
 *   client -> daemon: flag daemon_sleeping, wake = write the eventfd.
 *   daemon -> client: flag client_sleeping, wake = FUTEX_WAKE (shared) on complete_seq, which
 *                     the daemon increments after each push so a FUTEX_WAIT on a stale value
 *                     returns at once.
 */
#ifndef NND_IPC_RING_H
#define NND_IPC_RING_H

#include <stdint.h>

#include "nnd_ipc.h"

/* ---- ring: producer ---------------------------------------------------------------------- */

/* Pushes `value` at the producer's private `*head` and publishes it (release: everything written
 * before, e.g. the slot, is visible to a consumer that sees the entry). The caller knows there
 * is room (a client never has more than `slots` requests out). */
static inline void nnd_ipc_ring_push(struct nnd_ipc_ring* r, uint32_t* head, uint32_t value) {
  __atomic_store_n(&r->entries[*head % NND_IPC_MAX_SLOTS], value, __ATOMIC_RELAXED);
  *head += 1;
  nnd_ipc_store_release(&r->head, *head);
}

/* The same for a producer that distrusts the consumer: returns 0 without pushing when the
 * ring is full or the consumer's tail is impossible (ahead of the head, or more than a ring
 * behind it), 1 when pushed. */
static inline int nnd_ipc_ring_push_checked(struct nnd_ipc_ring* r, uint32_t* head, uint32_t value) {
  const uint32_t tail = nnd_ipc_load_acquire(&r->tail);
  if (*head - tail >= NND_IPC_MAX_SLOTS) return 0;
  nnd_ipc_ring_push(r, head, value);
  return 1;
}

/* ---- ring: consumer ---------------------------------------------------------------------- */

/* Entries the producer has published beyond the consumer's private `tail`: 0..NND_IPC_MAX_SLOTS,
 * or -1 when the producer's head is more than a ring ahead of the tail (or behind it): the ring
 * is corrupted. Acquire: the entries and what the producer wrote before them are visible. */
static inline int32_t nnd_ipc_ring_ready(const struct nnd_ipc_ring* r, uint32_t tail) {
  const uint32_t n = nnd_ipc_load_acquire(&r->head) - tail;
  return n > NND_IPC_MAX_SLOTS ? -1 : (int32_t)n;
}

/* Whether the producer's head differs from `tail` (a cheap re-check before sleeping; says
 * nothing about the ring's sanity). */
static inline int nnd_ipc_ring_nonempty(const struct nnd_ipc_ring* r, uint32_t tail) {
  return nnd_ipc_load_acquire(&r->head) != tail;
}

/* The entry at index `at` (read once; only valid after nnd_ipc_ring_ready counted it). */
static inline uint32_t nnd_ipc_ring_entry(const struct nnd_ipc_ring* r, uint32_t at) {
  return __atomic_load_n(&r->entries[at % NND_IPC_MAX_SLOTS], __ATOMIC_RELAXED);
}

/* Publishes the consumer's private tail: the entries before it may be overwritten. */
static inline void nnd_ipc_ring_release(struct nnd_ipc_ring* r, uint32_t tail) {
  nnd_ipc_store_release(&r->tail, tail);
}

enum nnd_ipc_pop_result {
  NND_IPC_POP_EMPTY = 0,
  NND_IPC_POP_OK = 1,
  NND_IPC_POP_BAD_HEAD = -1,  /* the producer's head is out of range: the ring is corrupted */
  NND_IPC_POP_BAD_ENTRY = -2  /* the entry is not below `limit` (a slot index out of range) */
};

/* Pops one entry for a consumer that distrusts the producer: checks the head, reads the entry
 * once, publishes the new tail (the entry is consumed even when it is bad), then checks that the
 * entry is below `limit`. */
static inline enum nnd_ipc_pop_result nnd_ipc_ring_pop_checked(struct nnd_ipc_ring* r, uint32_t* tail,
                                                               uint32_t limit, uint32_t* value) {
  const int32_t ready = nnd_ipc_ring_ready(r, *tail);
  if (ready == 0) return NND_IPC_POP_EMPTY;
  if (ready < 0) return NND_IPC_POP_BAD_HEAD;
  const uint32_t v = nnd_ipc_ring_entry(r, *tail);
  *tail += 1;
  nnd_ipc_ring_release(r, *tail);
  if (v >= limit) return NND_IPC_POP_BAD_ENTRY;
  *value = v;
  return NND_IPC_POP_OK;
}

/* ---- wake-up: client -> daemon ----------------------------------------------------------- */

/* After the client pushed on `submit`: whether the daemon may be asleep, so the client must
 * write the daemon's eventfd. */
static inline int nnd_ipc_submit_needs_wake(const struct nnd_ipc_header* h) {
  nnd_ipc_fence_seq_cst();
  return nnd_ipc_load_relaxed(&h->daemon_sleeping) != 0;
}

/* The daemon's sleeper: announce (1) or withdraw (0) the sleep in one client's header. After
 * announcing it in every header the daemon issues nnd_ipc_fence_seq_cst() once and re-checks
 * every submit ring (nnd_ipc_ring_nonempty) before it blocks. */
static inline void nnd_ipc_daemon_set_sleeping(struct nnd_ipc_header* h, uint32_t sleeping) {
  nnd_ipc_store_release(&h->daemon_sleeping, sleeping);
}

/* ---- wake-up: daemon -> client ----------------------------------------------------------- */

/* After the daemon pushed on `complete`: bumps complete_seq and says whether the client may be
 * asleep, so the daemon must FUTEX_WAKE complete_seq. */
static inline int nnd_ipc_complete_needs_wake(struct nnd_ipc_header* h) {
  __atomic_add_fetch(&h->complete_seq, 1u, __ATOMIC_SEQ_CST);
  nnd_ipc_fence_seq_cst();
  return nnd_ipc_load_relaxed(&h->client_sleeping) != 0;
}

/* The client's sleeper, step 1: announce the sleep and re-check. Returns 1 when the client may
 * FUTEX_WAIT on complete_seq for the value stored in *seq (nothing completed beyond its private
 * `complete_tail`), 0 when a completion arrived meanwhile. Either way it must call
 * nnd_ipc_client_end_sleep afterwards. */
static inline int nnd_ipc_client_begin_sleep(struct nnd_ipc_header* h, uint32_t complete_tail,
                                             uint32_t* seq) {
  nnd_ipc_store_release(&h->client_sleeping, 1);
  nnd_ipc_fence_seq_cst();
  *seq = nnd_ipc_load_acquire(&h->complete_seq);
  return !nnd_ipc_ring_nonempty(&h->complete, complete_tail);
}

/* The client's sleeper, step 2: awake again (the daemon stops making wake-up calls). */
static inline void nnd_ipc_client_end_sleep(struct nnd_ipc_header* h) {
  nnd_ipc_store_release(&h->client_sleeping, 0);
}

#endif /* NND_IPC_RING_H */
