/* nnclient.h — the C API for asking the nnd daemon to run a neural network.
 *
 * A client process opens a connection to the daemon (nnclient_open), looks up a model by name
 * (nnclient_model_info), and runs batches on it (nnclient_infer, or the submit/wait pair, or the
 * zero-copy request API). Inputs and outputs are dense, batch-major, channels-last arrays: input
 * k of a request holds `batch` samples of the shape nnclient_model_info reports, in that input's
 * dtype (float32 or uint8); outputs are float32, or int64 (NNCLIENT_INT64) for the indices of an
 * ONNX ArgMax/ArgMin.
 *
 * Linking: libnnclient (shared or static) needs only libc. pkg-config name: nnclient; CMake:
 * find_package(nnclient) then target nnclient::nnclient.
 *
 * Thread safety: an nnclient_t handle may be used by one thread at a time (calls on one handle
 * must not overlap); different handles are independent, so give each thread its own handle.
 * nnclient_strerror and nnclient_status_name are thread-safe.
 *
 * Errors: every function that can fail returns an nnclient_status (NNCLIENT_OK is 0) or, for
 * nnclient_open, stores one through its `status` argument. nnclient_last_error(c) returns a
 * message with detail about the last failure on that handle (e.g. which input had the wrong
 * size), valid until the next call on the handle; nnclient_last_error(NULL) explains the calling
 * thread's last failed nnclient_open.
 *
 * Who the daemon is: on every connect (nnclient_open, and reconnects), before sending anything,
 * the library checks the credentials of the process listening on the socket (SO_PEERCRED). It
 * accepts root, the process's own effective user, the owner of the socket's directory when that
 * directory and all above it are owned by root or that owner and writable by no one else (like
 * /run/nnd, unlike anything in /tmp), the system user "nnd", and users listed in the environment
 * variable NNCLIENT_TRUSTED_USERS (names or uids, comma-separated). Anyone else (an impostor that
 * bound the /tmp fallback path first) gets NNCLIENT_E_ACCESS, and nnclient_last_error names the
 * path, the peer's user, uid and pid, and what to set if it is the real daemon.
 *
 * Waiting: a waiting call spins for a short bounded time (default 30 us, environment variable
 * NNCLIENT_SPIN_US, 0..1000; no spin when the process may run on one CPU only), then sleeps on a
 * futex, waking at least every 20 ms to check whether the daemon is still there. Control calls
 * (open, model info, list, stats) give up after 5 s without an answer (NNCLIENT_E_TIMEOUT),
 * nnclient_reload after 120 s. The library installs no signal handler and never raises SIGPIPE.
 *
 * Daemon restarts: if the daemon dies or restarts, a call that was waiting returns
 * NNCLIENT_E_DAEMON_RESTARTED (or NNCLIENT_E_DAEMON_NOT_RUNNING while it is down) within its
 * timeout; the next call reconnects by itself, without nnclient_close/nnclient_open. Model info
 * obtained before a restart stays valid if the model did not change.
 */
#ifndef NNCLIENT_H
#define NNCLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
/* In C++ a function named like a struct tag (nnclient_model_info) "hides the constructor" of the
 * struct for -Wshadow; the C names are the API, so the warning is off for this header only. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#endif

/* Version of this header: the nnd project version (CMake checks at configure time that these
 * equal project(nnd VERSION ...)). Compare with nnclient_version() to tell the header an
 * application was built with from the library it runs with. */
#define NNCLIENT_VERSION_MAJOR 1
#define NNCLIENT_VERSION_MINOR 0
#define NNCLIENT_VERSION_PATCH 0

typedef enum nnclient_status {
  NNCLIENT_OK = 0,
  NNCLIENT_E_DAEMON_NOT_RUNNING = 1, /* no daemon listens on the endpoint */
  NNCLIENT_E_UNKNOWN_MODEL = 2,      /* the daemon serves no model of that name */
  NNCLIENT_E_MODEL_CHANGED = 3,      /* a reload changed the model's inputs/outputs: call
                                        nnclient_model_info again */
  NNCLIENT_E_SHAPE = 4,              /* batch or buffer sizes do not fit the model */
  NNCLIENT_E_TIMEOUT = 5,            /* no answer within timeout_us; the request may still run,
                                        its result is discarded */
  NNCLIENT_E_DEADLINE = 6,           /* the request's deadline passed before it could run */
  NNCLIENT_E_DAEMON_RESTARTED = 7,   /* the daemon went away during the call; retry */
  NNCLIENT_E_INVALID_ARGUMENT = 8,   /* NULL pointer, batch 0, bad handle use */
  NNCLIENT_E_PROTOCOL = 9,           /* the daemon speaks another protocol version */
  NNCLIENT_E_OVERLOADED = 10,        /* the daemon's queue for the model is full, or its listen
                                        queue is (too many connections at once) */
  NNCLIENT_E_INTERNAL = 11,          /* the daemon failed running the model (see its log) */
  NNCLIENT_E_SHUTTING_DOWN = 12,     /* the daemon is stopping */
  NNCLIENT_E_ACCESS = 13,            /* the daemon refused this user/group, or the client
                                        refused the process on the endpoint (not a trusted
                                        user: see "Who the daemon is" above) */
  NNCLIENT_E_NO_SLOT = 14,           /* all of this handle's request slots are in flight */
  NNCLIENT_E_SYSTEM = 15,            /* a system call failed (errno text in nnclient_last_error) */
  /* One code per daemon resource limit (config keys in the daemon's SCHEMA.md): */
  NNCLIENT_E_TOO_MANY_CLIENTS = 16,  /* open: the daemon serves max_clients clients already */
  NNCLIENT_E_TOO_MANY_REQUESTS = 17, /* this handle has max_inflight_per_client requests queued
                                        in the daemon; collect some results first */
  NNCLIENT_E_REQUEST_TOO_LARGE = 18, /* the request's input bytes exceed max_request_bytes */
  NNCLIENT_E_MEMORY_LIMIT = 19,      /* open: this client's shared memory would exceed the
                                        daemon's max_shared_memory_bytes */
  NNCLIENT_E_RELOAD_FAILED = 20      /* nnclient_reload: the daemon's config or one of its models
                                        has errors (nnclient_last_error says which); the
                                        previous models keep serving */
} nnclient_status;

typedef struct nnclient_handle nnclient_t;   /* opaque connection handle (the tag is not
                                               "nnclient": C++ has namespace nnclient) */
typedef struct nnclient_request nnclient_request_t; /* opaque in-flight request */

/* NNCLIENT_INT64: an output of indices (an ONNX ArgMax/ArgMin: a classifier's label), 8 bytes per
 * element. */
typedef enum nnclient_dtype { NNCLIENT_FLOAT32 = 0, NNCLIENT_UINT8 = 1, NNCLIENT_INT64 = 2 } nnclient_dtype;

#define NNCLIENT_MAX_RANK 6
#define NNCLIENT_MAX_TENSORS 8

typedef struct nnclient_tensor_info {
  char name[64];                 /* Keras input/output layer name */
  nnclient_dtype dtype;
  uint32_t rank;                 /* per-sample rank (batch excluded) */
  int64_t dims[NNCLIENT_MAX_RANK];
  size_t sample_bytes;           /* bytes of one sample */
} nnclient_tensor_info;

typedef struct nnclient_model_info {
  char name[64];
  uint32_t version;              /* increments when a reload replaces the model */
  uint32_t max_batch;            /* largest batch one request may carry */
  uint32_t num_inputs, num_outputs;
  nnclient_tensor_info inputs[NNCLIENT_MAX_TENSORS];
  nnclient_tensor_info outputs[NNCLIENT_MAX_TENSORS];
  char engine[32];               /* e.g. "reference", "jit-sse4.1" */
  uint64_t signature;            /* opaque; identifies the input/output layout */
} nnclient_model_info_t;

/* Connects to the daemon. `endpoint` NULL means the default endpoint "nnd" (or $NND_ENDPOINT).
 * An endpoint containing '/' is a socket path; otherwise the socket is
 * $NND_RUNTIME_DIR/<endpoint>.sock, with NND_RUNTIME_DIR defaulting to /run/nnd when that
 * directory exists and /tmp otherwise. The listening process must be trusted ("Who the daemon
 * is" above; NNCLIENT_E_ACCESS otherwise). Returns NULL and stores the reason in *status
 * (status may be NULL). The handle must be freed with nnclient_close. */
nnclient_t* nnclient_open(const char* endpoint, nnclient_status* status);

/* What a process will ask of the daemon, said at open so the daemon sizes this handle's shared
 * memory for it instead of for the largest request of every model it serves.
 *
 * Memory: a handle holds `slots` request slots in shared memory, each large enough for the
 * largest request it expects (inputs and outputs of one request). Without options (nnclient_open)
 * that is one sample of the largest served model. A request larger than the slots makes the
 * handle grow them by itself: it waits for the requests in flight to be answered (at most 5 s;
 * their results stay readable until released), then hand-shakes again asking for the larger size
 * (a fraction of a millisecond). A request begun with nnclient_request_begin and not yet
 * submitted or released keeps the handle from growing (NNCLIENT_E_SHAPE says so). The same
 * growth follows a reload that raised a model's max_batch. The daemon may grant fewer slots than asked
 * when its shared-memory budget (max_shared_memory_bytes) is short, never fewer than one; a
 * handle that cannot get even one slot is refused with NNCLIENT_E_MEMORY_LIMIT.
 *
 * Set `struct_size` to sizeof(nnclient_open_options_t); fields are only ever appended
 * (client/ABI.md), and zeroed fields mean "the default". */
typedef struct nnclient_open_options {
  uint32_t struct_size;        /* in: sizeof(nnclient_open_options_t) */
  uint32_t slots;              /* requests in flight at once, 1..64; 0: the daemon's
                                  slots_per_client */
  uint32_t max_batch;          /* largest batch this handle will send (capped per model at its
                                  max_batch); 0: 1 */
  uint32_t num_models;         /* entries in `models`; 0: any served model */
  const char* endpoint;        /* as nnclient_open's `endpoint`; NULL: the default */
  const char* const* models;   /* names of the models this handle will run: the slots are sized
                                  for these only, and open fails with NNCLIENT_E_UNKNOWN_MODEL
                                  if one is not served */
} nnclient_open_options_t;

/* nnclient_open with options (NULL options: as nnclient_open(NULL, status)). */
nnclient_t* nnclient_open_with(const nnclient_open_options_t* options, nnclient_status* status);

/* The shared memory this handle holds now: slots and data bytes per slot (either may be NULL).
 * Returns NNCLIENT_E_DAEMON_RESTARTED while disconnected. */
nnclient_status nnclient_slots(const nnclient_t* c, uint32_t* slots, uint64_t* slot_bytes);

/* Closes the connection, abandoning in-flight requests. NULL is allowed. */
void nnclient_close(nnclient_t* c);

/* Fills *info for the model `name`. */
nnclient_status nnclient_model_info(nnclient_t* c, const char* name, nnclient_model_info_t* info);

/* Lists served models: fills *info for the model at `index` (0-based); returns
 * NNCLIENT_E_UNKNOWN_MODEL past the last one. */
nnclient_status nnclient_list_models(nnclient_t* c, uint32_t index, nnclient_model_info_t* info);

/* Runs `batch` samples through `model` and waits for the result.
 *   inputs[k]  : batch * info.inputs[k].sample_bytes bytes, for k < num_inputs (the caller keeps
 *                ownership; nnclient copies them into shared memory)
 *   outputs[k] : room for batch * info.outputs[k].sample_bytes bytes, written on NNCLIENT_OK
 *   timeout_us : how long to wait for the answer; 0 = wait forever (the call still returns
 *                NNCLIENT_E_DAEMON_RESTARTED if the daemon dies)
 * `info` must come from nnclient_model_info on this handle (it carries the layout).
 * If the daemon dies during the call and a daemon is serving again before the timeout runs out,
 * the call resends the request once on the new connection (inference has no side effects and
 * the caller still holds the inputs) and returns its result; otherwise it returns
 * NNCLIENT_E_DAEMON_RESTARTED. The asynchronous and zero-copy calls never resend. */
nnclient_status nnclient_infer(nnclient_t* c, const nnclient_model_info_t* info,
                               const void* const* inputs, uint32_t batch, void* const* outputs,
                               uint64_t timeout_us);

/* Request options for the asynchronous and zero-copy API. */
typedef struct nnclient_request_options {
  int64_t deadline_us;   /* relative deadline from submit; 0 = none. Past it, the daemon answers
                            NNCLIENT_E_DEADLINE instead of running the request. */
} nnclient_request_options;

/* Zero-copy: reserves a request slot for `batch` samples and returns it; the caller writes the
 * inputs straight into shared memory through nnclient_request_input, then calls
 * nnclient_submit. Returns NNCLIENT_E_NO_SLOT when all slots are in flight. */
nnclient_status nnclient_request_begin(nnclient_t* c, const nnclient_model_info_t* info,
                                       uint32_t batch, nnclient_request_t** request);

/* Pointer to input k of a begun request (batch * sample_bytes bytes, 64-byte aligned), valid
 * until nnclient_submit. */
void* nnclient_request_input(nnclient_request_t* request, uint32_t k);

/* Submits a begun request (asynchronous; returns immediately). */
nnclient_status nnclient_submit(nnclient_t* c, nnclient_request_t* request,
                                const nnclient_request_options* options);

/* Waits for a submitted request. On NNCLIENT_OK the outputs can be read in place with
 * nnclient_request_output until nnclient_request_release. On any other status the request is
 * finished too and must still be released. */
nnclient_status nnclient_wait(nnclient_t* c, nnclient_request_t* request, uint64_t timeout_us);

/* Pointer to output k of a completed request (batch * sample_bytes bytes of float32). */
const void* nnclient_request_output(const nnclient_request_t* request, uint32_t k);

/* Returns a request's slot to the handle. A request whose wait timed out is released once the
 * daemon hands its slot back. */
void nnclient_request_release(nnclient_t* c, nnclient_request_t* request);

/* Asks the daemon to reload its configuration (as SIGHUP does); returns when a reload that started
 * after this call has finished (at most 120 s), OK or failed (the message is in
 * nnclient_last_error). Only root, the daemon's own user and members of the config's
 * daemon.control_group may reload: others get NNCLIENT_E_ACCESS. */
nnclient_status nnclient_reload(nnclient_t* c);

/* Per-model statistics since the daemon started, for the model at `index`. */
typedef struct nnclient_model_stats {
  char name[64];
  uint64_t requests, batches, samples, errors, deadline_misses;
  uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns;
} nnclient_model_stats_t;
nnclient_status nnclient_stats(nnclient_t* c, uint32_t index, nnclient_model_stats_t* stats);

/* ---- metrics and daemon information (nnctl stats --json, nnctl metrics) ------------------
 *
 * These structs start with `struct_size`: the caller sets it to sizeof the struct as its header
 * declares it, the library fills at most that many bytes (and zeroes what the daemon does not
 * send), so an application built against an older header keeps working with a newer library;
 * fields are only ever appended (client/ABI.md). A daemon older than these calls answers
 * NNCLIENT_E_PROTOCOL. */

#define NNCLIENT_LATENCY_BUCKETS 16 /* the last one is +Inf */
#define NNCLIENT_BATCH_BUCKETS 16   /* bucket b: runs of at most 2^b samples; the last: larger */
#define NNCLIENT_STATUS_CODES 32

typedef struct nnclient_model_metrics {
  uint32_t struct_size;          /* in: sizeof(nnclient_model_metrics_t) */
  uint32_t queue_depth;          /* requests of this model queued or running now */
  char name[64];
  uint64_t requests, batches, samples, errors, deadline_misses;  /* as nnclient_model_stats_t */
  uint64_t latency_p50_ns, latency_p99_ns, latency_max_ns;
  uint64_t latency_sum_ns;       /* sum over the requests in latency_buckets (answered OK) */
  uint64_t latency_buckets[NNCLIENT_LATENCY_BUCKETS]; /* per bucket, bounds from
                                                          nnclient_latency_bucket_us() */
  uint64_t batch_buckets[NNCLIENT_BATCH_BUCKETS];     /* engine runs per batch-size bucket */
  uint64_t errors_by_status[NNCLIENT_STATUS_CODES];   /* requests answered with status s */
} nnclient_model_metrics_t;

/* Metrics of the model at `index` (0-based, same order as nnclient_stats); returns
 * NNCLIENT_E_UNKNOWN_MODEL past the last one. */
nnclient_status nnclient_model_metrics(nnclient_t* c, uint32_t index, nnclient_model_metrics_t* m);

/* Upper bound in microseconds of latency bucket b (inclusive); 0 for the last bucket (+Inf) and
 * for b out of range. */
uint32_t nnclient_latency_bucket_us(uint32_t b);

typedef struct nnclient_daemon_info {
  uint32_t struct_size;          /* in: sizeof(nnclient_daemon_info_t) */
  uint32_t pid;
  char version[32];              /* the daemon's version, e.g. "1.0.0" */
  char git_revision[48];         /* git revision it was built from, or "unknown" */
  uint64_t uptime_ns;
  uint64_t rss_bytes;            /* the daemon's resident memory now */
  uint64_t clients;              /* clients connected now */
  uint64_t clients_total;        /* clients accepted since start */
  uint64_t clients_refused;      /* hand-shakes refused (access, limits) */
  uint64_t reloads;              /* successful reloads since start */
  uint64_t reloads_failed;
  uint64_t requests_in_flight;   /* queued or running, all models */
  uint64_t shared_memory_bytes;  /* all clients' segments */
  uint64_t models;               /* models served */
} nnclient_daemon_info_t;

/* Daemon-wide figures: version, memory, clients, reloads. */
nnclient_status nnclient_daemon_info(nnclient_t* c, nnclient_daemon_info_t* info);

typedef struct nnclient_client_info {
  uint32_t struct_size;          /* in: sizeof(nnclient_client_info_t) */
  uint32_t pid;
  uint32_t uid;
  uint32_t slots;                /* request slots of its shared memory */
  char name[32];                 /* program name it connected with */
  uint64_t slot_bytes;           /* data bytes per slot */
  uint64_t shared_memory_bytes;  /* its whole segment (header, slots, data) */
  uint64_t requests_in_flight;   /* queued or running now */
  uint64_t connected_ns;         /* time since it connected */
} nnclient_client_info_t;

/* The connected client at `index` (0-based, in connection order; this handle is one of them);
 * returns NNCLIENT_E_UNKNOWN_MODEL past the last one. */
nnclient_status nnclient_client_info(nnclient_t* c, uint32_t index, nnclient_client_info_t* info);

/* Static text for a status ("daemon not running", ...); never NULL. */
const char* nnclient_strerror(nnclient_status s);
/* Symbolic name ("NNCLIENT_E_TIMEOUT"); never NULL. */
const char* nnclient_status_name(nnclient_status s);
/* Detail of the last failure on `c` (empty string if none); valid until the next call on `c`.
 * nnclient_last_error(NULL) returns the detail of the last nnclient_open that failed in the
 * calling thread (thread-local; valid until the next nnclient_open in that thread). */
const char* nnclient_last_error(const nnclient_t* c);

/* Version of the library actually linked (shared or static), "MAJOR.MINOR.PATCH", e.g. "1.0.0":
 * the NNCLIENT_VERSION_* macros of the header it was built from. Static text; never NULL;
 * thread-safe. */
const char* nnclient_version(void);

#ifdef __cplusplus
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
}
#endif

#endif /* NNCLIENT_H */
