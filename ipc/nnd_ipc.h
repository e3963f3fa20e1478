/* nnd_ipc.h — the wire contract between the nnd daemon and libnnclient.
 *
 * Header-only and plain C11 (also valid C++20), shared by daemon/ and client/; it includes nothing
 * but libc headers. Two channels connect a client and the daemon:
 *
 *  1. The control channel: a Unix-domain SOCK_SEQPACKET socket (one message = one struct below).
 *     The client sends nnd_hello; the daemon checks the peer's credentials (SO_PEERCRED) against
 *     the configured user/group, and answers nnd_welcome carrying two file descriptors via
 *     SCM_RIGHTS: the client's private shared-memory segment (a memfd; no name in /dev/shm, so no
 *     other process can open it and nothing is left behind) and an eventfd the client writes to
 *     wake a sleeping daemon. Later control messages (model info, stats, reload) are
 *     request/response pairs on the same socket. The daemon notices a dead client by the socket
 *     closing (POLLHUP), and a client notices a dead daemon the same way.
 *
 *  2. The data path: the segment holds a header, a fixed number of request slots with their data
 *     areas, and two single-producer/single-consumer rings of slot indices: `submit` (client ->
 *     daemon) and `complete` (daemon -> client). While both sides are busy, submit and complete
 *     take no lock and no system call. A side that finds nothing to do spins briefly, then
 *     announces that it sleeps (a flag in the header) and sleeps; the other side makes the wake-up
 *     system call only when that flag is set (futex wake for the client, eventfd write for the
 *     daemon).
 *
 * Trust: the daemon treats every byte of the segment as hostile. It reads each field once into a
 * local copy and bounds-checks it (ring indices, slot index, batch, byte counts, model name
 * termination) before use, and never follows a pointer or offset without checking it against the
 * segment size. A bad request gets an error status in its slot; a corrupted ring ends that client's
 * session. The client trusts the daemon.
 *
 * Atomics: fields shared between the processes are plain fixed-width integers accessed only
 * through the nnd_ipc_load/store helpers below (GCC/Clang __atomic builtins, identical in C and
 * C++), never as _Atomic or std::atomic, so the layout is the same in both languages.
 */
#ifndef NND_IPC_H
#define NND_IPC_H

#include <stddef.h>
#include <stdint.h>

#define NND_IPC_MAGIC 0x31444E4Eu /* "NND1" little-endian */
#define NND_IPC_VERSION 2u             /* 2: slots of 192 bytes, cache-line aligned (1: 152);
                                          the hello says the slot size it needs */

#define NND_IPC_MAX_SLOTS 64u          /* per client; ring capacity (power of two) */
#define NND_IPC_MAX_NAME 64u           /* model name bytes including the NUL */
#define NND_IPC_MAX_TENSORS 8u         /* inputs or outputs per model */
#define NND_IPC_MAX_RANK 6u            /* per-sample rank */
#define NND_IPC_DATA_ALIGN 64u         /* every tensor in a data area starts 64-byte aligned */
#define NND_IPC_MESSAGE_BYTES 256u     /* error text in control replies */
#define NND_IPC_CACHE_LINE 64u         /* slots and ring indices never share a line */

/* ---- atomics ---------------------------------------------------------------------------- */

static inline uint32_t nnd_ipc_load_acquire(const uint32_t* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void nnd_ipc_store_release(uint32_t* p, uint32_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
static inline uint32_t nnd_ipc_load_relaxed(const uint32_t* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void nnd_ipc_fence_seq_cst(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ---- layout checks ---------------------------------------------------------------------- */

/* Every struct below crosses a process boundary (shared memory or the socket), so its size and
 * every field offset are pinned: a change that moves a field fails to compile on both sides
 * instead of corrupting data at run time. Changing a layout on purpose means changing the
 * numbers here and NND_IPC_VERSION (or, for control replies, the struct_bytes rule). */
#ifdef __cplusplus
#define NND_IPC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define NND_IPC_ALIGNOF(type) alignof(type)
#else
#define NND_IPC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define NND_IPC_ALIGNOF(type) _Alignof(type)
#endif
#define NND_IPC_ASSERT_SIZE(type, bytes) \
  NND_IPC_STATIC_ASSERT(sizeof(struct type) == (bytes), "size of struct " #type)
#define NND_IPC_ASSERT_OFFSET(type, field, offset) \
  NND_IPC_STATIC_ASSERT(offsetof(struct type, field) == (offset), "offset of " #type "." #field)

/* ---- status codes (shared with nnclient.h, which re-exports them as NNCLIENT_*) ---------- */

enum nnd_ipc_status {
  NND_IPC_OK = 0,
  NND_IPC_E_UNKNOWN_MODEL = 2,     /* no model of that name is served */
  NND_IPC_E_MODEL_CHANGED = 3,     /* a reload changed the model's inputs/outputs; re-query */
  NND_IPC_E_SHAPE = 4,             /* batch or byte counts do not fit the model or the slot */
  NND_IPC_E_DEADLINE = 6,          /* the deadline passed before the request could run */
  NND_IPC_E_BAD_REQUEST = 9,       /* malformed slot contents (bad slot, name not terminated) */
  NND_IPC_E_OVERLOADED = 10,       /* the model's queue is full (all clients together) */
  NND_IPC_E_INTERNAL = 11,         /* the engine failed; the daemon logged why */
  NND_IPC_E_SHUTTING_DOWN = 12,    /* the daemon is stopping */
  NND_IPC_E_ACCESS = 13,           /* peer credentials refused (hand-shake only) */
  /* 14 and 15 are client-side codes of nnclient.h (NO_SLOT, SYSTEM): never sent. Each resource
   * limit of the daemon has its own code, so a client can tell which one it hit. */
  NND_IPC_E_TOO_MANY_CLIENTS = 16, /* max_clients sessions exist (hand-shake only) */
  NND_IPC_E_TOO_MANY_REQUESTS = 17,/* the client has max_inflight_per_client requests queued */
  NND_IPC_E_REQUEST_TOO_LARGE = 18,/* the request's input bytes exceed max_request_bytes */
  NND_IPC_E_MEMORY_LIMIT = 19,     /* this client's segment would take the daemon's shared
                                      memory over max_shared_memory_bytes (hand-shake only) */
  NND_IPC_E_RELOAD_FAILED = 20     /* RELOAD: the config or a model has errors (the message says
                                      which); the previous models keep serving */
};

/* ---- shared-memory segment ------------------------------------------------------------- */

/* SPSC ring of slot indices. `head` is written only by the producer, `tail` only by the
 * consumer; each on its own cache line. The ring is empty when head == tail and full when
 * head - tail == NND_IPC_MAX_SLOTS (indices wrap modulo 2^32). */
struct nnd_ipc_ring {
  uint32_t head;
  uint8_t pad0[60];
  uint32_t tail;
  uint8_t pad1[60];
  uint32_t entries[NND_IPC_MAX_SLOTS];
};
NND_IPC_ASSERT_SIZE(nnd_ipc_ring, 384);
NND_IPC_ASSERT_OFFSET(nnd_ipc_ring, head, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_ring, pad0, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_ring, tail, 64);
NND_IPC_ASSERT_OFFSET(nnd_ipc_ring, pad1, 68);
NND_IPC_ASSERT_OFFSET(nnd_ipc_ring, entries, 128);

/* One request. The client writes the request fields, then the input data into the slot's data
 * area, then pushes the slot index on `submit`. The daemon writes status, timings and output
 * data, then pushes the index on `complete`. Between the two pushes the slot belongs to the
 * daemon; the client must not touch it (if it does, it only corrupts its own result).
 * Cache-line aligned and a whole number of lines (since NND_IPC_VERSION 2). */
struct __attribute__((aligned(NND_IPC_CACHE_LINE))) nnd_ipc_slot {
  /* request (client -> daemon) */
  char model[NND_IPC_MAX_NAME];  /* NUL-terminated model name */
  uint64_t signature;            /* model signature from the model info the client used */
  uint32_t batch;                /* samples, >= 1 */
  uint32_t sequence;             /* client's request number, echoed back */
  int64_t deadline_ns;           /* CLOCK_MONOTONIC absolute deadline, 0 = none */
  uint64_t input_bytes;          /* bytes of input data written (all inputs, aligned layout) */
  /* result (daemon -> client) */
  int32_t status;                /* enum nnd_ipc_status */
  uint32_t served_batch;         /* size of the batch this request ran in (with other requests) */
  uint64_t output_bytes;         /* bytes of output data written */
  uint64_t queue_ns;             /* time from submit seen to run start */
  uint64_t run_ns;               /* engine time of the batch */
  uint8_t pad[64];               /* to 192 bytes: three whole cache lines, so two slots (written
                                    by different workers and clients) never share a line */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_slot, 192);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, model, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, signature, 64);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, batch, 72);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, sequence, 76);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, deadline_ns, 80);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, input_bytes, 88);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, status, 96);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, served_batch, 100);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, output_bytes, 104);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, queue_ns, 112);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, run_ns, 120);
NND_IPC_ASSERT_OFFSET(nnd_ipc_slot, pad, 128);
NND_IPC_STATIC_ASSERT(NND_IPC_ALIGNOF(struct nnd_ipc_slot) == NND_IPC_CACHE_LINE, "slots are cache-line aligned");

/* Segment header. All sizes are chosen by the daemon at hand-shake and repeated here; the daemon
 * keeps its own copy and never re-reads them from shared memory. */
struct nnd_ipc_header {
  uint32_t magic;                /* NND_IPC_MAGIC */
  uint32_t version;              /* NND_IPC_VERSION */
  uint32_t slots;                /* number of slots, <= NND_IPC_MAX_SLOTS */
  uint32_t reserved0;
  uint64_t slot_data_bytes;      /* size of each slot's data area (multiple of 64) */
  uint64_t segment_bytes;        /* total mapped size */
  uint64_t slots_offset;         /* offset of struct nnd_ipc_slot[slots] */
  uint64_t data_offset;          /* offset of slot 0's data area; slot i at + i*slot_data_bytes */
  uint8_t pad0[16];
  /* wake-up protocol */
  uint32_t daemon_sleeping;      /* 1: daemon may be asleep; write the eventfd after a submit */
  uint8_t pad1[60];
  uint32_t client_sleeping;      /* 1: client may be asleep in futex_wait on complete_seq */
  uint32_t complete_seq;         /* futex word: incremented by the daemon after each complete */
  uint8_t pad2[56];
  struct nnd_ipc_ring submit;    /* client -> daemon */
  struct nnd_ipc_ring complete;  /* daemon -> client */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_header, 960);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, magic, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, version, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, slots, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, reserved0, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, slot_data_bytes, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, segment_bytes, 24);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, slots_offset, 32);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, data_offset, 40);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, pad0, 48);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, daemon_sleeping, 64);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, pad1, 68);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, client_sleeping, 128);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, complete_seq, 132);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, pad2, 136);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, submit, 192);
NND_IPC_ASSERT_OFFSET(nnd_ipc_header, complete, 576);

/* Data area layout of a request for a model with n inputs: input k (batch * per-sample bytes of
 * its dtype) starts at nnd_ipc_align(end of input k-1); outputs follow the same way, starting at
 * nnd_ipc_align(end of the last input). */
static inline uint64_t nnd_ipc_align(uint64_t n) {
  return (n + (NND_IPC_DATA_ALIGN - 1)) & ~(uint64_t)(NND_IPC_DATA_ALIGN - 1);
}

/* ---- control messages (SOCK_SEQPACKET) ------------------------------------------------- */

enum nnd_ipc_message_type {
  NND_MSG_HELLO = 1,       /* client -> daemon: struct nnd_ipc_hello */
  NND_MSG_WELCOME = 2,     /* daemon -> client: struct nnd_ipc_welcome + SCM_RIGHTS {memfd, eventfd} */
  NND_MSG_MODEL_INFO = 3,  /* client -> daemon: struct nnd_ipc_model_query; reply nnd_ipc_model_info */
  NND_MSG_LIST_MODELS = 4, /* client -> daemon: struct nnd_ipc_model_query with index; reply info */
  NND_MSG_STATS = 5,       /* client -> daemon: struct nnd_ipc_model_query with index; reply stats */
  NND_MSG_RELOAD = 6,      /* client -> daemon: struct nnd_ipc_model_query; reply nnd_ipc_reply */
  /* Added in nnd 1.0 without changing NND_IPC_VERSION: a daemon that predates them answers an
   * nnd_ipc_reply with NND_IPC_E_BAD_REQUEST ("unknown message type"). */
  NND_MSG_METRICS = 7,     /* client -> daemon: struct nnd_ipc_model_query with index; reply
                              nnd_ipc_model_metrics */
  NND_MSG_DAEMON_INFO = 8, /* client -> daemon: struct nnd_ipc_model_query; reply
                              nnd_ipc_daemon_info */
  NND_MSG_LIST_CLIENTS = 9 /* client -> daemon: struct nnd_ipc_model_query with index; reply
                              nnd_ipc_client_info */
};

struct nnd_ipc_hello {
  uint32_t type;             /* NND_MSG_HELLO */
  uint32_t magic;            /* NND_IPC_MAGIC */
  uint32_t version;          /* NND_IPC_VERSION */
  uint32_t requested_slots;  /* 0: daemon default (slots_per_client) */
  char client_name[32];      /* for logs, NUL-terminated */
  /* Data bytes each slot must hold: the largest request (inputs and outputs, laid out as below)
   * the client will send. 0: the largest one-sample request of any served model. The daemon
   * rounds it up to NND_IPC_DATA_ALIGN and caps it at the largest request any served model
   * accepts (at its max_batch); it may grant fewer slots than asked when the shared-memory budget
   * is short (never fewer than one). A client that later needs more reconnects asking for more. */
  uint64_t requested_slot_bytes;
};
NND_IPC_ASSERT_SIZE(nnd_ipc_hello, 56);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, magic, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, version, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, requested_slots, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, client_name, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_hello, requested_slot_bytes, 48);

struct nnd_ipc_welcome {
  uint32_t type;             /* NND_MSG_WELCOME */
  int32_t status;            /* NND_IPC_OK or why the client is refused */
  uint32_t version;
  uint32_t slots;
  uint64_t segment_bytes;
  uint64_t slot_data_bytes;
  uint64_t daemon_instance;  /* changes on every daemon start: detects restarts */
  char message[NND_IPC_MESSAGE_BYTES];
};
NND_IPC_ASSERT_SIZE(nnd_ipc_welcome, 296);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, version, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, slots, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, segment_bytes, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, slot_data_bytes, 24);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, daemon_instance, 32);
NND_IPC_ASSERT_OFFSET(nnd_ipc_welcome, message, 40);

struct nnd_ipc_model_query {
  uint32_t type;             /* NND_MSG_MODEL_INFO / LIST_MODELS / STATS / RELOAD */
  uint32_t index;            /* LIST_MODELS / STATS: model index, 0-based */
  char model[NND_IPC_MAX_NAME];
};
NND_IPC_ASSERT_SIZE(nnd_ipc_model_query, 72);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_query, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_query, index, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_query, model, 8);

struct nnd_ipc_tensor_info {
  char name[NND_IPC_MAX_NAME];
  uint32_t dtype;            /* 0 float32, 1 uint8, 2 int64 (an output: ArgMax indices) */
  uint32_t rank;
  int64_t dims[NND_IPC_MAX_RANK];  /* per sample, batch excluded */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_tensor_info, 120);
NND_IPC_ASSERT_OFFSET(nnd_ipc_tensor_info, name, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_tensor_info, dtype, 64);
NND_IPC_ASSERT_OFFSET(nnd_ipc_tensor_info, rank, 68);
NND_IPC_ASSERT_OFFSET(nnd_ipc_tensor_info, dims, 72);

struct nnd_ipc_model_info {
  uint32_t type;             /* NND_MSG_MODEL_INFO */
  int32_t status;            /* NND_IPC_OK or NND_IPC_E_UNKNOWN_MODEL (also: index past the end) */
  char model[NND_IPC_MAX_NAME];
  uint64_t signature;        /* changes when what a client must re-read changes: inputs,
                                outputs or max_batch (a reload lowering max_batch answers old
                                requests NND_IPC_E_MODEL_CHANGED, not NND_IPC_E_SHAPE) */
  uint32_t version;          /* load generation of this model, 1 on first load */
  uint32_t max_batch;
  uint32_t num_inputs, num_outputs;
  struct nnd_ipc_tensor_info inputs[NND_IPC_MAX_TENSORS];
  struct nnd_ipc_tensor_info outputs[NND_IPC_MAX_TENSORS];
  char engine[32];
};
NND_IPC_ASSERT_SIZE(nnd_ipc_model_info, 2048);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, model, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, signature, 72);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, version, 80);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, max_batch, 84);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, num_inputs, 88);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, num_outputs, 92);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, inputs, 96);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, outputs, 1056);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_info, engine, 2016);

struct nnd_ipc_model_stats {
  uint32_t type;             /* NND_MSG_STATS */
  int32_t status;
  char model[NND_IPC_MAX_NAME];
  uint64_t requests, batches, samples, errors, deadline_misses;
  uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns;
};
NND_IPC_ASSERT_SIZE(nnd_ipc_model_stats, 136);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, model, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, requests, 72);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, batches, 80);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, samples, 88);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, errors, 96);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, deadline_misses, 104);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, latency_p50_ns, 112);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, latency_p99_ns, 120);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_stats, latency_max_ns, 128);

/* Fixed bucket bounds of the metrics replies. Latency: upper bounds in microseconds of the
 * daemon-side latency (request seen -> completion pushed) of requests answered OK; a last bucket
 * (+Inf) follows. Batch: bucket b counts engine runs of at most 2^b samples (1, 2, 4, ... 2^14;
 * the last bucket, +Inf, takes everything larger). */
#define NND_IPC_LATENCY_BUCKETS 16u
#define NND_IPC_LATENCY_BOUNDS_US                                                             \
  { 50u, 100u, 250u, 500u, 1000u, 2000u, 5000u, 10000u, 20000u, 50000u, 100000u, 250000u,    \
    500000u, 1000000u, 5000000u }
#define NND_IPC_BATCH_BUCKETS 16u
#define NND_IPC_STATUS_CODES 32u /* errors_by_status[s] for 0 < s < 32 */

/* Reply to NND_MSG_METRICS: everything nnd_ipc_model_stats carries plus histograms and error
 * counts by status. `struct_bytes` is sizeof this struct as the daemon knows it: later versions
 * only append fields, so a reader takes the prefix both sides know. */
struct nnd_ipc_model_metrics {
  uint32_t type;             /* NND_MSG_METRICS */
  int32_t status;            /* NND_IPC_OK or NND_IPC_E_UNKNOWN_MODEL past the last model */
  uint32_t struct_bytes;     /* sizeof(struct nnd_ipc_model_metrics) of the daemon */
  uint32_t queue_depth;      /* requests of this model queued or running now */
  char model[NND_IPC_MAX_NAME];
  uint64_t requests, batches, samples, errors, deadline_misses;
  uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns;
  uint64_t latency_sum_ns;   /* over the requests counted in latency_buckets */
  uint64_t latency_buckets[NND_IPC_LATENCY_BUCKETS];  /* per bucket, not cumulative */
  uint64_t batch_buckets[NND_IPC_BATCH_BUCKETS];      /* per bucket, not cumulative */
  uint64_t errors_by_status[NND_IPC_STATUS_CODES];    /* requests answered with status s */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_model_metrics, 664);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, struct_bytes, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, queue_depth, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, model, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, requests, 80);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, batches, 88);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, samples, 96);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, errors, 104);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, deadline_misses, 112);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, latency_p50_ns, 120);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, latency_p99_ns, 128);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, latency_max_ns, 136);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, latency_sum_ns, 144);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, latency_buckets, 152);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, batch_buckets, 280);
NND_IPC_ASSERT_OFFSET(nnd_ipc_model_metrics, errors_by_status, 408);

/* Reply to NND_MSG_DAEMON_INFO: daemon-wide figures. Same `struct_bytes` rule. */
struct nnd_ipc_daemon_info {
  uint32_t type;             /* NND_MSG_DAEMON_INFO */
  int32_t status;            /* NND_IPC_OK */
  uint32_t struct_bytes;     /* sizeof(struct nnd_ipc_daemon_info) of the daemon */
  uint32_t pid;
  char version[32];          /* project version, e.g. "1.0.0" */
  char git_revision[48];     /* git revision the daemon was built from, or "unknown" */
  uint64_t uptime_ns;
  uint64_t rss_bytes;        /* resident set size now */
  uint64_t clients;          /* sessions connected now */
  uint64_t clients_total;    /* hand-shakes accepted since start */
  uint64_t clients_refused;
  uint64_t reloads;          /* successful reloads (SIGHUP or nnctl reload) */
  uint64_t reloads_failed;
  uint64_t requests_in_flight;
  uint64_t shared_memory_bytes;
  uint64_t models;           /* models served now */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_daemon_info, 176);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, struct_bytes, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, pid, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, version, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, git_revision, 48);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, uptime_ns, 96);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, rss_bytes, 104);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, clients, 112);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, clients_total, 120);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, clients_refused, 128);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, reloads, 136);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, reloads_failed, 144);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, requests_in_flight, 152);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, shared_memory_bytes, 160);
NND_IPC_ASSERT_OFFSET(nnd_ipc_daemon_info, models, 168);

/* Reply to NND_MSG_LIST_CLIENTS: one connected client (index 0-based, in connection order;
 * NND_IPC_E_UNKNOWN_MODEL past the last one). Same `struct_bytes` rule as the metrics. */
struct nnd_ipc_client_info {
  uint32_t type;             /* NND_MSG_LIST_CLIENTS */
  int32_t status;            /* NND_IPC_OK, or NND_IPC_E_UNKNOWN_MODEL past the last client */
  uint32_t struct_bytes;     /* sizeof(struct nnd_ipc_client_info) of the daemon */
  uint32_t pid;
  uint32_t uid;
  uint32_t slots;
  char name[32];             /* the name the client gave in its hello */
  uint64_t slot_bytes;       /* data bytes per slot */
  uint64_t shared_memory_bytes; /* the client's whole segment */
  uint64_t requests_in_flight;
  uint64_t connected_ns;     /* time since the hand-shake */
};
NND_IPC_ASSERT_SIZE(nnd_ipc_client_info, 88);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, struct_bytes, 8);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, pid, 12);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, uid, 16);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, slots, 20);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, name, 24);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, slot_bytes, 56);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, shared_memory_bytes, 64);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, requests_in_flight, 72);
NND_IPC_ASSERT_OFFSET(nnd_ipc_client_info, connected_ns, 80);

struct nnd_ipc_reply {
  uint32_t type;
  int32_t status;
  char message[NND_IPC_MESSAGE_BYTES];
};
NND_IPC_ASSERT_SIZE(nnd_ipc_reply, 264);
NND_IPC_ASSERT_OFFSET(nnd_ipc_reply, type, 0);
NND_IPC_ASSERT_OFFSET(nnd_ipc_reply, status, 4);
NND_IPC_ASSERT_OFFSET(nnd_ipc_reply, message, 8);

#endif /* NND_IPC_H */
