/* nnclient_control.c — control requests on the handle's socket: model info (with "did you mean"
 * for an unknown name), the model list, statistics, metrics, daemon and client information,
 * reload. One request, one reply, each bounded in time; a query that finds the daemon gone
 * reconnects and asks once more. */
#define _GNU_SOURCE 1

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ipc/nnd_ipc.h"
#include "nnclient.h"
#include "nnclient_internal.h"

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
      return nnc_sys_err(c, "send(control request)");
    }
    return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection");
  }
  if (timeout_ms > c->ctl_timeout_ms) timeout_ms = c->ctl_timeout_ms;
  const int ready = nnc_wait_readable(c->sock, timeout_ms);
  if (ready <= 0) {
    c->broken = 1; /* a late reply would be taken for the next request's */
    return ready == 0 ? nnc_set_err(c, NNCLIENT_E_TIMEOUT, "no reply from the daemon within %d ms",
                                timeout_ms)
                      : nnc_sys_err(c, "poll(control socket)");
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
    if (n < 0 && errno != ECONNRESET) return nnc_sys_err(c, "recv(control reply)");
    return nnc_set_err(c, NNCLIENT_E_DAEMON_RESTARTED, "the daemon closed the connection");
  }
  c->last_alive_ns = nnc_mono_ns();
  if ((size_t)n == sizeof buf.reply && rn != sizeof buf.reply) {
    const nnclient_status s = nnc_from_ipc(buf.reply.status);
    buf.reply.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
    if (s == NNCLIENT_OK) {
      return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "daemon answered with a bare OK reply");
    }
    return nnc_set_err(c, s, "daemon: %s", buf.reply.message[0] ? buf.reply.message
                                                             : nnclient_strerror(s));
  }
  uint32_t type;
  memcpy(&type, &buf, sizeof type);
  const int size_ok = rn_min == rn ? (size_t)n == rn : (size_t)n >= rn_min;
  if (!size_ok || (type != type1 && type != type2)) {
    c->broken = 1;
    return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "unexpected control reply (%zd bytes, type %u; "
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
  nnclient_status st = nnc_ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = control(c, q, qn, reply, rn, type1, type2, timeout_ms);
  if (st == NNCLIENT_E_DAEMON_RESTARTED && retry) {
    st = nnc_ensure_connected(c);
    if (st != NNCLIENT_OK) return st;
    st = control(c, q, qn, reply, rn, type1, type2, timeout_ms);
  }
  return st;
}

static nnclient_status control_retry_sized(nnclient_t* c, const void* q, size_t qn, void* reply,
                                           size_t rn, size_t rn_min, uint32_t type,
                                           int timeout_ms) {
  nnclient_status st = nnc_ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  st = control_sized(c, q, qn, reply, rn, rn_min, type, type, timeout_ms);
  if (st == NNCLIENT_E_DAEMON_RESTARTED) {
    st = nnc_ensure_connected(c);
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
  nnc_copy_name(s->cache[i].name, name, sizeof s->cache[i].name);
  s->cache[i].signature = sig;
}

void nnc_cache_forget(struct nnc_seg* s, const char* name) {
  for (uint32_t i = 0; i < s->ncache; ++i) {
    if (strcmp(s->cache[i].name, name) == 0) s->cache[i].name[0] = '\0';
  }
}

static nnclient_status convert_info(nnclient_t* c, const struct nnd_ipc_model_info* w,
                                    nnclient_model_info_t* info) {
  memset(info, 0, sizeof *info);
  if (w->num_inputs > NNCLIENT_MAX_TENSORS || w->num_outputs > NNCLIENT_MAX_TENSORS) {
    return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "model info with %u inputs, %u outputs",
                       w->num_inputs, w->num_outputs);
  }
  nnc_copy_name(info->name, w->model, sizeof info->name);
  nnc_copy_name(info->engine, w->engine, sizeof info->engine);
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
      if (t->rank > NNCLIENT_MAX_RANK || t->dtype > 2) {
        return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "model info: tensor %u has rank %u, dtype %u", k,
                       t->rank, t->dtype);
      }
      nnc_copy_name(o->name, t->name, sizeof o->name);
      o->dtype = t->dtype == 1 ? NNCLIENT_UINT8 : t->dtype == 2 ? NNCLIENT_INT64 : NNCLIENT_FLOAT32;
      o->rank = t->rank;
      uint64_t bytes = o->dtype == NNCLIENT_UINT8 ? 1 : o->dtype == NNCLIENT_INT64 ? 8 : 4;
      for (uint32_t d = 0; d < t->rank; ++d) {
        if (t->dims[d] < 0 || __builtin_mul_overflow(bytes, (uint64_t)t->dims[d], &bytes)) {
          return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "model info: bad dimension %lld",
                         (long long)t->dims[d]);
        }
        o->dims[d] = t->dims[d];
      }
      if (bytes > (uint64_t)SIZE_MAX) return nnc_set_err(c, NNCLIENT_E_PROTOCOL, "sample too big");
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
      nnc_copy_name(best, w.model, sizeof best);
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
    return nnc_set_err(c, NNCLIENT_E_UNKNOWN_MODEL,
                       "model '%s' is not served; the daemon serves no "
                       "models",
                       name);
  }
  return nnc_set_err(c, NNCLIENT_E_UNKNOWN_MODEL, "model '%s' is not served%s; served: %s", name,
                     hint, served);
}

nnclient_status nnc_query_info(nnclient_t* c, uint32_t type, uint32_t index, const char* name,
                               nnclient_model_info_t* info) {
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = type;
  q.index = index;
  if (name) nnc_copy_name(q.model, name, sizeof q.model);
  struct nnd_ipc_model_info w;
  nnclient_status st = control_retry(c, &q, sizeof q, &w, sizeof w, NND_MSG_MODEL_INFO, type,
                                     NNC_CONTROL_TIMEOUT_MS, 1);
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = nnc_from_ipc(w.status);
    if (name && st == NNCLIENT_E_UNKNOWN_MODEL) return unknown_model(c, name);
    if (name) return nnc_set_err(c, st, "model '%s': %s", name, nnclient_strerror(st));
    return nnc_set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  st = convert_info(c, &w, info);
  if (st == NNCLIENT_OK && c->seg) cache_add(c->seg, info->name, info->signature);
  return st;
}

NNC_EXPORT nnclient_status nnclient_model_info(nnclient_t* c, const char* name,
                                               nnclient_model_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!name || !info) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "name or info is NULL");
  const size_t len = strlen(name);
  if (len == 0 || len >= NND_IPC_MAX_NAME) {
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "model name must have 1 to %u bytes",
                   NND_IPC_MAX_NAME - 1);
  }
  return nnc_query_info(c, NND_MSG_MODEL_INFO, 0, name, info);
}

NNC_EXPORT nnclient_status nnclient_list_models(nnclient_t* c, uint32_t index,
                                                nnclient_model_info_t* info) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!info) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "info is NULL");
  return nnc_query_info(c, NND_MSG_LIST_MODELS, index, NULL, info);
}

NNC_EXPORT nnclient_status nnclient_stats(nnclient_t* c, uint32_t index,
                                          nnclient_model_stats_t* stats) {
  if (!c) return NNCLIENT_E_INVALID_ARGUMENT;
  c->err[0] = '\0';
  if (!stats) return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT, "stats is NULL");
  struct nnd_ipc_model_query q;
  memset(&q, 0, sizeof q);
  q.type = NND_MSG_STATS;
  q.index = index;
  struct nnd_ipc_model_stats w;
  nnclient_status st = control_retry(c, &q, sizeof q, &w, sizeof w, NND_MSG_STATS, NND_MSG_STATS,
                                     NNC_CONTROL_TIMEOUT_MS, 1);
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = nnc_from_ipc(w.status);
    return nnc_set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  memset(stats, 0, sizeof *stats);
  nnc_copy_name(stats->name, w.model, sizeof stats->name);
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
    return nnc_set_err(c, NNCLIENT_E_PROTOCOL,
                       "the daemon is older than this library and has no %s", what);
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
    return nnc_set_err(
        c, NNCLIENT_E_INVALID_ARGUMENT,
        "metrics is NULL or its struct_size is not set (sizeof(nnclient_model_metrics_t))");
  }
  struct nnd_ipc_model_metrics w;
  nnclient_status st = sized_query(c, NND_MSG_METRICS, index, &w, sizeof w, "metrics");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = nnc_from_ipc(w.status);
    return nnc_set_err(c, st, "model #%u: %s", index, nnclient_strerror(st));
  }
  nnclient_model_metrics_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = m->struct_size;
  out.queue_depth = w.queue_depth;
  nnc_copy_name(out.name, w.model, sizeof out.name);
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
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info is NULL or its struct_size is not set (sizeof(nnclient_daemon_info_t))");
  }
  struct nnd_ipc_daemon_info w;
  nnclient_status st = sized_query(c, NND_MSG_DAEMON_INFO, 0, &w, sizeof w, "daemon information");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = nnc_from_ipc(w.status);
    return nnc_set_err(c, st, "daemon info: %s", nnclient_strerror(st));
  }
  nnclient_daemon_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = info->struct_size;
  out.pid = w.pid;
  nnc_copy_name(out.version, w.version, sizeof out.version);
  nnc_copy_name(out.git_revision, w.git_revision, sizeof out.git_revision);
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
    return nnc_set_err(c, NNCLIENT_E_INVALID_ARGUMENT,
                   "info is NULL or its struct_size is not set (sizeof(nnclient_client_info_t))");
  }
  struct nnd_ipc_client_info w;
  nnclient_status st = sized_query(c, NND_MSG_LIST_CLIENTS, index, &w, sizeof w, "client list");
  if (st != NNCLIENT_OK) return st;
  if (w.status != NND_IPC_OK) {
    st = nnc_from_ipc(w.status);
    if (st == NNCLIENT_E_UNKNOWN_MODEL) return nnc_set_err(c, st, "no client #%u", index);
    return nnc_set_err(c, st, "client #%u: %s", index, nnclient_strerror(st));
  }
  nnclient_client_info_t out;
  memset(&out, 0, sizeof out);
  out.struct_size = info->struct_size;
  out.pid = w.pid;
  out.uid = w.uid;
  out.slots = w.slots;
  nnc_copy_name(out.name, w.name, sizeof out.name);
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
  nnclient_status st = nnc_ensure_connected(c);
  if (st != NNCLIENT_OK) return st;
  /* control() bounds every wait by ctl_timeout_ms (the hand-shake/query bound, 5 s): a reload
   * compiles models and gets the longer bound the header promises. */
  c->ctl_timeout_ms = NNC_RELOAD_TIMEOUT_MS;
  st = control(c, &q, sizeof q, &r, sizeof r, NND_MSG_RELOAD, NND_MSG_RELOAD,
               NNC_RELOAD_TIMEOUT_MS);
  c->ctl_timeout_ms = NNC_CONTROL_TIMEOUT_MS;
  if (st != NNCLIENT_OK) return st;
  r.message[NND_IPC_MESSAGE_BYTES - 1] = '\0';
  st = nnc_from_ipc(r.status);
  if (st == NNCLIENT_OK) {
    nnc_set_err(c, NNCLIENT_OK, "%s", r.message);
    return NNCLIENT_OK;
  }
  return nnc_set_err(c, st, "reload refused: %s", r.message[0] ? r.message : nnclient_strerror(st));
}
