#include "daemon/ipc/control_plane.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "ipc/nnd_ipc.h"

namespace nnd::daemon::ipc {
namespace {
constexpr uint64_t kListenTag = 0, kWakeTag = ~uint64_t{0};  // the sessions' tags are their ids, from 1
}  // namespace

ControlPlane::ControlPlane(const ServerOptions& opt, ModelRegistry& registry, const Log& log,
                           Counters& counters, sched::ModelStatsTable& stats, Dispatcher& dispatcher,
                           uint64_t instance_id)
    : opt_(opt),
      registry_(registry),
      log_(log),
      counters_(counters),
      stats_(stats),
      dispatcher_(dispatcher),
      instance_id_(instance_id),
      reloads_(log) {}

ControlPlane::~ControlPlane() { stop(); }

void ControlPlane::start(int listen_fd) {
  listen_fd_ = listen_fd;
  open_epoll_with_wake(kWakeTag, &epfd_, &wake_fd_);
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenTag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, listen_fd_, &e);
  thread_ = std::thread([this] { io_main(); });
}

void ControlPlane::stop() {
  if (thread_.joinable()) {
    stop_.store(true);
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  stop_.store(true);
  reloads_.stop();
  for (int* fd : {&epfd_, &wake_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void ControlPlane::io_main() {
  std::array<epoll_event, 32> ev;
  while (!stop_.load()) {
    // Sleeps until a control message, a new connection, the next hand-shake deadline or the
    // end of a log window with lines suppressed.
    int64_t wait_ns = expire_handshakes(mono_ns());
    if (const int64_t summary_ns = limited_.flush(mono_ns()); summary_ns >= 0 && (wait_ns < 0 || summary_ns < wait_ns)) {
      wait_ns = summary_ns;
    }
    if (accept_paused_until_ns_ != 0) {
      const int64_t left = accept_paused_until_ns_ - mono_ns();
      if (left <= 0) {
        accept_paused_until_ns_ = 0;
        if (pending_ < opt_.max_pending_connections) set_accepting(true);
      } else if (wait_ns < 0 || left < wait_ns) {
        wait_ns = left;
      }
    }
    const int timeout_ms = wait_ns < 0 ? -1 : static_cast<int>(std::min<int64_t>((wait_ns + 999'999) / 1'000'000, INT32_MAX));
    const int n = epoll_wait(epfd_, ev.data(), static_cast<int>(ev.size()), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      log_(kLogErr, errno_text("control epoll_wait"));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = ev[i].data.u64;
      if (tag == kWakeTag) {
        uint64_t v;
        (void)!read(wake_fd_, &v, sizeof(v));
        continue;
      }
      // A resource that runs out here (memory for a session or a reply) fails that connection
      // or that accept, never the control thread: the served models keep serving.
      if (tag == kListenTag) {
        try {
          accept_clients();
        } catch (const std::exception& e) {
          log_(kLogWarn, std::string("accepting a client: ") + e.what() + "; not accepting for " +
                             std::to_string(kAcceptPauseNs / 1'000'000) + " ms");
          accept_paused_until_ns_ = mono_ns() + kAcceptPauseNs;
          set_accepting(false);
        }
        continue;
      }
      auto it = conns_.find(tag);
      if (it == conns_.end()) continue;
      std::shared_ptr<Session> s = it->second;
      if (ev[i].events & EPOLLIN) {
        try {
          handle_control(s);
        } catch (const std::exception& e) {
          limited_.log(s->uid, "failed to answer", kLogWarn, mono_ns(), [&] {
            return s->name + ": " + e.what() + " while answering it; closing the connection";
          });
          end_connection(tag, nullptr);
          continue;
        }
      }
      if (conns_.count(tag) && (ev[i].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
        end_connection(tag, s->corrupt.load() ? "segment corrupted" : "client hung up");
      }
    }
  }
  // Shut every remaining connection, and say what the log left out.
  std::vector<uint64_t> ids;
  for (auto& [id, s] : conns_) ids.push_back(id);
  for (uint64_t id : ids) end_connection(id, nullptr);
  limited_.flush(INT64_MAX);
}

// Connections that never say hello must not pile up: each gets handshake_timeout_ms, and at most
// max_pending_connections are accepted at once. Beyond that the listen socket leaves the epoll set
// and further connections wait in the kernel's listen backlog (bounded by listen()'s 64; a connect
// beyond it fails at once with EAGAIN, which nnclient reports as NNCLIENT_E_OVERLOADED), so the
// daemon's memory and file descriptors stay bounded and a legitimate client is served as soon as
// a silent one times out.
void ControlPlane::set_accepting(bool on) {
  if (on == accepting_ || listen_fd_ < 0) return;
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenTag;
  if (epoll_ctl(epfd_, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, listen_fd_, &e) == 0) accepting_ = on;
}

int64_t ControlPlane::expire_handshakes(int64_t now) {
  while (!handshake_deadlines_.empty()) {
    const auto [deadline, id] = handshake_deadlines_.front();
    auto it = conns_.find(id);
    if (it == conns_.end() || it->second->welcomed) {
      handshake_deadlines_.pop_front();
      continue;
    }
    if (deadline > now) return deadline - now;
    handshake_deadlines_.pop_front();
    counters_.handshake_timeouts.fetch_add(1);
    limited_.log(it->second->uid, "no hello", kLogWarn, now, [&] {
      return it->second->name + ": no hello within " + std::to_string(opt_.handshake_timeout_ms) +
             " ms, closing the connection";
    });
    end_connection(id, nullptr);
  }
  return -1;
}

void ControlPlane::accept_clients() {
  for (;;) {
    if (pending_ >= opt_.max_pending_connections) {
      set_accepting(false);
      return;
    }
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: the connection stays in the listen backlog, and the
        // listen socket stays readable, so retrying at once would spin a core (and log at that
        // rate). Pause accepting; a session that ends, or the pause running out, resumes it.
        const int64_t now = mono_ns();
        if (now - accept_warned_ns_ >= kAcceptWarnIntervalNs) {
          log_(kLogWarn, errno_text("accept") + ": not accepting new clients for " +
                         std::to_string(kAcceptPauseNs / 1'000'000) +
                         " ms (raise LimitNOFILE= or lower daemon.max_clients)");
          accept_warned_ns_ = now;
        }
        accept_paused_until_ns_ = now + kAcceptPauseNs;
        set_accepting(false);
        return;
      }
      log_(kLogWarn, errno_text("accept"));
      return;
    }
    auto s = std::make_shared<Session>();
    s->id = next_session_id_++;
    s->sock = fd;
    s->accepted_ns = mono_ns();
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      s->pid = cred.pid;
      s->uid = cred.uid;
      s->gid = cred.gid;
    } else {
      s->uid = static_cast<uid_t>(-1);
      s->gid = static_cast<gid_t>(-1);
    }
    s->name = "client pid " + std::to_string(s->pid);
    epoll_event e{};
    e.events = EPOLLIN | EPOLLRDHUP;
    e.data.u64 = s->id;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &e) != 0) {
      log_(kLogWarn, errno_text("epoll_ctl add client"));
      continue;  // ~Session closes fd
    }
    handshake_deadlines_.emplace_back(s->accepted_ns + int64_t{opt_.handshake_timeout_ms} * 1'000'000, s->id);
    ++pending_;
    counters_.pending_connections.store(pending_);
    conns_.emplace(s->id, std::move(s));
  }
}

namespace {
// Whether the peer's primary group, or one of its supplementary groups, is `g`.
bool peer_in_group(const PeerCredentials& s, int sock, gid_t g) {
  if (s.gid == g) return true;
  std::array<gid_t, 256> groups;
  socklen_t len = sizeof(groups);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
    for (size_t i = 0; i < len / sizeof(gid_t); ++i) {
      if (groups[i] == g) return true;
    }
  }
  return false;
}
}  // namespace

bool peer_allowed(const ServerOptions& opt, const PeerCredentials& s, int sock, std::string* why) {
  if (s.uid == static_cast<uid_t>(-1)) {
    *why = "peer credentials unavailable";
    return false;
  }
  if (opt.allow_root && s.uid == 0) return true;
  if (opt.allow_own_uid && s.uid == geteuid()) return true;
  if (opt.allowed_uid && s.uid == *opt.allowed_uid) return true;
  if (opt.allowed_gid && peer_in_group(s, sock, *opt.allowed_gid)) return true;
  *why = "uid " + std::to_string(s.uid) + " gid " + std::to_string(s.gid) + " is not allowed";
  return false;
}

bool may_control(const ServerOptions& opt, const PeerCredentials& s, int sock) {
  if (s.uid == static_cast<uid_t>(-1)) return false;
  if (s.uid == 0 || s.uid == geteuid()) return true;
  return opt.control_gid && peer_in_group(s, sock, *opt.control_gid);
}

RequestSizes request_sizes_for(const ModelSet& set) {
  RequestSizes sizes;
  for (const auto& m : set.models) {
    DataLayout one, most;
    const auto layout = [&](uint64_t batch, DataLayout* l) {
      return compute_layout(m->input_sample_bytes.data(), m->input_sample_bytes.size(),
                            m->output_sample_bytes.data(), m->output_sample_bytes.size(), batch, l);
    };
    if (layout(1, &one)) {
      sizes.one_sample = std::max(sizes.one_sample, one.total);
      sizes.each_one_sample.push_back(one.total);
    }
    if (layout(std::max<uint32_t>(1, m->settings.max_batch), &most)) {
      sizes.largest = std::max(sizes.largest, most.total);
    }
  }
  std::sort(sizes.each_one_sample.begin(), sizes.each_one_sample.end());
  return sizes;
}

void ControlPlane::handle_hello(const std::shared_ptr<Session>& s, const nnd_ipc_hello& h, size_t n) {
  nnd_ipc_welcome w{};
  w.type = NND_MSG_WELCOME;
  w.version = NND_IPC_VERSION;
  w.daemon_instance = instance_id_;
  auto refuse = [&](int32_t status, const std::string& why) {
    w.status = status;
    copy_name(w.message, sizeof(w.message), why);
    counters_.sessions_refused.fetch_add(1);
    (void)!send(s->sock, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT);
    limited_.log(s->uid, "hello refused", kLogWarn, mono_ns(), [&] { return s->name + " refused: " + why; });
    end_connection(s->id, nullptr);
  };
  if (s->welcomed) return refuse(NND_IPC_E_BAD_REQUEST, "second hello on one connection");
  if (n < sizeof(nnd_ipc_hello) || h.magic != NND_IPC_MAGIC || h.version != NND_IPC_VERSION) {
    return refuse(NND_IPC_E_BAD_REQUEST, "protocol mismatch (daemon speaks version " +
                                             std::to_string(NND_IPC_VERSION) + ")");
  }
  char cname[sizeof(h.client_name) + 1] = {};
  std::memcpy(cname, h.client_name, sizeof(h.client_name));
  for (char* p = cname; *p; ++p) {
    if (static_cast<unsigned char>(*p) < 0x20 || static_cast<unsigned char>(*p) > 0x7e) *p = '?';
  }
  s->client_name = cname;
  s->name = std::string("client '") + cname + "' (pid " + std::to_string(s->pid) + ")";
  std::string why;
  if (!peer_allowed(opt_, credentials(*s), s->sock, &why)) return refuse(NND_IPC_E_ACCESS, "access denied: " + why);
  if (stop_.load()) return refuse(NND_IPC_E_SHUTTING_DOWN, "daemon is stopping");
  // The client's slots hold the largest request it says it needs (bounded by the largest request
  // any model takes), as many as it asks for while its share lasts: one segment is bounded, the
  // segments of one uid by max_shared_memory_bytes_per_uid, all of them by
  // max_shared_memory_bytes; the sessions of one uid by max_clients_per_uid, all by max_clients.
  const uint32_t asked_slots = std::min<uint32_t>(h.requested_slots, NND_IPC_MAX_SLOTS);
  const auto set = registry_.current();
  const RequestSizes sizes = request_sizes_for(*set);
  const UidShares::Usage mine = shares_->usage(s->uid);
  const uint32_t reserved_now = shares_->reserved_total();
  const uint32_t uid_sessions = clients_per_uid(opt_);
  const uint64_t uid_bytes = shared_memory_bytes_per_uid(opt_);
  // Only this thread adds to the totals (sessions subtract), so what is free now stays free.
  const uint64_t used = counters_.shared_memory_bytes->load();
  const uint64_t free_all = opt_.max_shared_memory_bytes > used ? opt_.max_shared_memory_bytes - used : 0;
  const uint64_t free_uid = uid_bytes > mine.bytes ? uid_bytes - mine.bytes : 0;
  const uint64_t free = std::min(free_all, free_uid);
  const std::string uid_text = "uid " + std::to_string(s->uid);
  int32_t over = NND_IPC_OK;
  std::string over_why;
  std::optional<SlotGrant> grant;
  if (counters_.sessions.load() - reserved_now >= opt_.max_clients) {
    over = NND_IPC_E_TOO_MANY_CLIENTS;
    over_why = "too many clients (max_clients " + std::to_string(opt_.max_clients) + ")";
  } else if (mine.sessions - mine.reserved >= uid_sessions) {
    over = NND_IPC_E_TOO_MANY_CLIENTS;
    over_why = "too many clients of " + uid_text + " (max_clients_per_uid " + std::to_string(uid_sessions) + ")";
  } else {
    grant = grant_slots(asked_slots, h.requested_slot_bytes, opt_.slots_per_client, sizes, free,
                        opt_.max_shared_memory_bytes / std::max<uint32_t>(1, opt_.max_clients));
    if (!grant) {
      const SegmentLayout one = plan_segment(
          1, std::min(h.requested_slot_bytes ? h.requested_slot_bytes : sizes.one_sample,
                      std::max<uint64_t>(sizes.largest, NND_IPC_DATA_ALIGN)));
      over = NND_IPC_E_MEMORY_LIMIT;
      over_why = "shared memory limit: one slot of " + std::to_string(one.slot_data_bytes) +
                 " bytes needs a segment of " + std::to_string(one.segment_bytes) + " bytes, " +
                 (free_uid < free_all
                      ? std::to_string(free) + " of max_shared_memory_bytes_per_uid " + std::to_string(uid_bytes) +
                            " are free for " + uid_text
                      : std::to_string(free) + " of max_shared_memory_bytes " +
                            std::to_string(opt_.max_shared_memory_bytes) + " are free");
    }
  }
  // A control connection (root, the daemon's user, control_group: nnctl) is never locked out
  // by clients holding every session or every byte: it gets one small slot in the reserve.
  bool reserved = false;
  if (over != NND_IPC_OK) {
    // A control connection asks for one slot (nnctl does) of at most what the reserve holds; a
    // client asking for more (a huge model's slots, a worker's sixteen) gets the refusal that
    // names the limit it hit.
    if (!may_control(opt_, credentials(*s), s->sock) || asked_slots != 1 ||
        h.requested_slot_bytes > kControlReserveSlotBytes || reserved_now >= kControlReserveSessions ||
        mine.reserved >= kControlReservePerUid) {
      return refuse(over, over_why);
    }
    const uint64_t bytes = std::min<uint64_t>(h.requested_slot_bytes ? h.requested_slot_bytes : sizes.one_sample,
                                              kControlReserveSlotBytes);
    grant = grant_slots(1, std::max<uint64_t>(bytes, 1), 1, sizes, plan_segment(1, kControlReserveSlotBytes).segment_bytes);
    if (!grant) return refuse(over, over_why);
    reserved = true;
    limited_.log(s->uid, "control reserve", kLogInfo, mono_ns(), [&] {
      return s->name + ": admitted to the control reserve (" + over_why + ")";
    });
  }
  const SegmentLayout layout = grant->layout;
  counters_.shared_memory_bytes->fetch_add(layout.segment_bytes);
  s->shm_total = counters_.shared_memory_bytes;
  s->shm_bytes = layout.segment_bytes;
  std::string err;
  s->seg = Segment::create(layout, "nnd-client", &err);
  if (!s->seg) return refuse(NND_IPC_E_INTERNAL, "cannot create the shared memory: " + err);
  shares_->add_session(s->uid, layout.segment_bytes, reserved);
  s->shares = shares_;
  s->reserved = reserved;
  s->slots = layout.slots;

  w.status = NND_IPC_OK;
  w.slots = layout.slots;
  w.segment_bytes = layout.segment_bytes;
  w.slot_data_bytes = layout.slot_data_bytes;
  copy_name(w.message, sizeof(w.message), "welcome");
  iovec iov{&w, sizeof(w)};
  alignas(cmsghdr) char cbuf[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof(cbuf);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {s->seg->memfd(), s->seg->eventfd()};
  std::memcpy(CMSG_DATA(c), fds, sizeof(fds));
  if (sendmsg(s->sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(sizeof(w))) {
    const std::string err = errno_text("sending the welcome");
    limited_.log(s->uid, "welcome failed", kLogWarn, mono_ns(), [&] { return s->name + ": " + err; });
    end_connection(s->id, nullptr);
    return;
  }
  s->welcomed = true;
  s->welcomed_ns = mono_ns();
  --pending_;
  counters_.pending_connections.store(pending_);
  if (pending_ < opt_.max_pending_connections) set_accepting(true);
  dispatcher_.add_session(s);
  counters_.sessions.fetch_add(1);
  counters_.sessions_total.fetch_add(1);
  const uint32_t asked = asked_slots ? asked_slots : opt_.slots_per_client;
  limited_.log(s->uid, "connected", kLogInfo, mono_ns(), [&] {
    return s->name + " connected (uid " + std::to_string(s->uid) + ", " + std::to_string(layout.slots) +
                 " slots of " + std::to_string(layout.slot_data_bytes) + " bytes, " +
                 std::to_string(layout.segment_bytes) + " bytes of shared memory" +
                 (grant->fewer_slots ? ", fewer slots than the " + std::to_string(asked) +
                                           " asked: max_shared_memory_bytes is nearly used"
                                     : std::string()) +
                 ")";
  });
}

// The welcomed client at `index` in connection order (conns_ is unordered: sort the ids).
void ControlPlane::send_client_info(const Session& to, uint32_t index) const {
  nnd_ipc_client_info ci{};
  ci.type = NND_MSG_LIST_CLIENTS;
  ci.struct_bytes = sizeof(ci);
  std::vector<const Session*> welcomed;
  welcomed.reserve(conns_.size());
  for (const auto& [id, c] : conns_) {
    if (c->welcomed) welcomed.push_back(c.get());
  }
  std::sort(welcomed.begin(), welcomed.end(),
            [](const Session* a, const Session* b) { return a->id < b->id; });
  if (index < welcomed.size()) {
    const Session& c = *welcomed[index];
    ci.status = NND_IPC_OK;
    ci.pid = static_cast<uint32_t>(c.pid);
    ci.uid = static_cast<uint32_t>(c.uid);
    ci.slots = c.slots;
    copy_name(ci.name, sizeof(ci.name), c.client_name);
    ci.slot_bytes = c.seg ? c.seg->layout().slot_data_bytes : 0;
    ci.shared_memory_bytes = c.shm_bytes;
    ci.requests_in_flight = c.inflight.load(std::memory_order_relaxed);
    ci.connected_ns = static_cast<uint64_t>(std::max<int64_t>(0, mono_ns() - c.welcomed_ns));
  } else {
    ci.status = NND_IPC_E_UNKNOWN_MODEL;
  }
  (void)!send(to.sock, &ci, sizeof(ci), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void ControlPlane::fill_model_info(const ServedModel& m, nnd_ipc_model_info* info) const {
  info->status = NND_IPC_OK;
  copy_name(info->model, sizeof(info->model), m.settings.name);
  info->signature = m.signature;
  info->version = m.version;
  info->max_batch = m.settings.max_batch;
  const Graph& g = m.graph;
  info->num_inputs = static_cast<uint32_t>(std::min<size_t>(g.inputs.size(), NND_IPC_MAX_TENSORS));
  info->num_outputs = static_cast<uint32_t>(std::min<size_t>(g.outputs.size(), NND_IPC_MAX_TENSORS));
  auto fill = [&](nnd_ipc_tensor_info* t, const std::string& name, const Value& v, DType dt) {
    copy_name(t->name, sizeof(t->name), name);
    t->dtype = dt == DType::kUInt8 ? 1u : dt == DType::kInt64 ? 2u : 0u;
    t->rank = static_cast<uint32_t>(std::min<size_t>(v.shape.size(), NND_IPC_MAX_RANK));
    for (uint32_t d = 0; d < t->rank; ++d) t->dims[d] = v.shape[d];
  };
  for (uint32_t k = 0; k < info->num_inputs; ++k) {
    const DType dt = k < m.input_dtypes.size() ? m.input_dtypes[k] : g.values[g.inputs[k]].dtype;
    fill(&info->inputs[k], k < g.input_names.size() ? g.input_names[k] : "", g.values[g.inputs[k]], dt);
  }
  for (uint32_t k = 0; k < info->num_outputs; ++k) {
    fill(&info->outputs[k], k < g.output_names.size() ? g.output_names[k] : "", g.values[g.outputs[k]],
         output_view_dtype(g.values[g.outputs[k]].dtype));
  }
  const std::string engine = m.engine ? m.engine->name() : "none";
  copy_name(info->engine, sizeof(info->engine), engine);
}

namespace {
void fill_metrics(const std::string& name, const sched::ModelStatsSnapshot& snap, nnd_ipc_model_metrics* mt) {
  mt->status = NND_IPC_OK;
  copy_name(mt->model, sizeof(mt->model), name);
  mt->queue_depth = static_cast<uint32_t>(std::min<uint64_t>(snap.queue_depth, UINT32_MAX));
  mt->requests = snap.requests;
  mt->batches = snap.batches;
  mt->samples = snap.samples;
  mt->errors = snap.errors;
  mt->deadline_misses = snap.deadline_misses;
  mt->latency_p50_ns = snap.latency_p50_ns;
  mt->latency_p99_ns = snap.latency_p99_ns;
  mt->latency_max_ns = snap.latency_max_ns;
  mt->latency_sum_ns = snap.latency_sum_ns;
  std::copy(snap.latency_buckets.begin(), snap.latency_buckets.end(), mt->latency_buckets);
  std::copy(snap.batch_buckets.begin(), snap.batch_buckets.end(), mt->batch_buckets);
  std::copy(snap.errors_by_status.begin(), snap.errors_by_status.end(), mt->errors_by_status);
}
}  // namespace

namespace {
// Resident set size from /proc/self/statm (second field, in pages); 0 if unreadable.
uint64_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "re");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  const long page = sysconf(_SC_PAGESIZE);
  return n == 2 && page > 0 ? resident * static_cast<uint64_t>(page) : 0;
}
}  // namespace

void ControlPlane::handle_control(const std::shared_ptr<Session>& s) {
  union {
    nnd_ipc_hello hello;
    nnd_ipc_model_query query;
    char raw[1024];
  } in{};
  // A few messages per wake-up, then back to epoll (level-triggered: a socket with more waiting
  // is reported again), so one client flooding STATS or LIST queries takes turns with the
  // others' hand-shakes instead of holding this thread for as long as it keeps sending.
  constexpr int kMessagesPerTurn = 8;
  for (int turn = 0; turn < kMessagesPerTurn; ++turn) {
    const ssize_t n = recv(s->sock, &in, sizeof(in), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) end_connection(s->id, "control socket error");
      return;
    }
    if (n == 0) {
      end_connection(s->id, "client hung up");
      return;
    }
    if (static_cast<size_t>(n) < sizeof(uint32_t)) continue;
    const uint32_t type = in.hello.type;
    if (type == NND_MSG_HELLO) {
      handle_hello(s, in.hello, static_cast<size_t>(n));
      if (!conns_.count(s->id)) return;
      continue;
    }
    if (!s->welcomed) {
      nnd_ipc_reply r{};
      r.type = type;
      r.status = NND_IPC_E_BAD_REQUEST;
      copy_name(r.message, sizeof(r.message), "hello first");
      (void)!send(s->sock, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
      continue;
    }
    nnd_ipc_model_query q{};
    std::memcpy(&q, &in, std::min(sizeof(q), static_cast<size_t>(n)));
    q.model[NND_IPC_MAX_NAME - 1] = '\0';
    const auto set = registry_.current();
    if (type == NND_MSG_MODEL_INFO || type == NND_MSG_LIST_MODELS) {
      nnd_ipc_model_info info{};
      info.type = NND_MSG_MODEL_INFO;
      std::shared_ptr<ServedModel> m;
      if (type == NND_MSG_MODEL_INFO) {
        m = set->find(q.model);
      } else if (q.index < set->models.size()) {
        m = set->models[q.index];
      }
      if (m) {
        fill_model_info(*m, &info);
      } else {
        info.status = NND_IPC_E_UNKNOWN_MODEL;
        copy_name(info.model, sizeof(info.model), q.model);
      }
      (void)!send(s->sock, &info, sizeof(info), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_STATS) {
      nnd_ipc_model_stats st{};
      st.type = NND_MSG_STATS;
      if (q.index < set->models.size()) {
        const std::string& name = set->models[q.index]->settings.name;
        const auto snap = stats_.for_model(name)->snapshot();
        st.status = NND_IPC_OK;
        copy_name(st.model, sizeof(st.model), name);
        st.requests = snap.requests;
        st.batches = snap.batches;
        st.samples = snap.samples;
        st.errors = snap.errors;
        st.deadline_misses = snap.deadline_misses;
        st.latency_p50_ns = snap.latency_p50_ns;
        st.latency_p99_ns = snap.latency_p99_ns;
        st.latency_max_ns = snap.latency_max_ns;
      } else {
        st.status = NND_IPC_E_UNKNOWN_MODEL;
      }
      (void)!send(s->sock, &st, sizeof(st), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_METRICS) {
      nnd_ipc_model_metrics mt{};
      mt.type = NND_MSG_METRICS;
      mt.struct_bytes = sizeof(mt);
      if (q.index < set->models.size()) {
        const std::string& name = set->models[q.index]->settings.name;
        fill_metrics(name, stats_.for_model(name)->snapshot(), &mt);
      } else {
        mt.status = NND_IPC_E_UNKNOWN_MODEL;
      }
      (void)!send(s->sock, &mt, sizeof(mt), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_DAEMON_INFO) {
      nnd_ipc_daemon_info di{};
      fill_daemon_info(set->models.size(), &di);
      (void)!send(s->sock, &di, sizeof(di), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_LIST_CLIENTS) {
      send_client_info(*s, q.index);
    } else if (type == NND_MSG_RELOAD) {
      handle_reload(s);
    } else {
      nnd_ipc_reply r{};
      r.type = type;
      r.status = NND_IPC_E_BAD_REQUEST;
      copy_name(r.message, sizeof(r.message), "unknown message type " + std::to_string(type));
      (void)!send(s->sock, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
}


void ControlPlane::fill_daemon_info(size_t models, nnd_ipc_daemon_info* di) const {
  di->type = NND_MSG_DAEMON_INFO;
  di->status = NND_IPC_OK;
  di->struct_bytes = sizeof(*di);
  di->pid = static_cast<uint32_t>(getpid());
  copy_name(di->version, sizeof(di->version), opt_.version);
  copy_name(di->git_revision, sizeof(di->git_revision), opt_.git_revision);
  di->uptime_ns = static_cast<uint64_t>(std::max<int64_t>(0, mono_ns() - counters_.started_ns));
  di->rss_bytes = resident_bytes();
  di->clients = counters_.sessions.load();
  di->clients_total = counters_.sessions_total.load();
  di->clients_refused = counters_.sessions_refused.load();
  di->reloads = counters_.reloads.load();
  di->reloads_failed = counters_.reloads_failed.load();
  di->requests_in_flight = counters_.requests_in_flight.load();
  di->shared_memory_bytes = counters_.shared_memory_bytes->load();
  di->models = models;
}

void ControlPlane::end_connection(uint64_t id, const char* why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  std::shared_ptr<Session> s = std::move(it->second);
  conns_.erase(it);
  epoll_ctl(epfd_, EPOLL_CTL_DEL, s->sock, nullptr);
  if (s->welcomed) {
    dispatcher_.remove_session(s);
    counters_.sessions.fetch_sub(1);
    shares_->remove_session(s->uid, s->reserved);
  } else {
    s->dead.store(true);
    --pending_;
    counters_.pending_connections.store(pending_);
    if (pending_ < opt_.max_pending_connections && !stop_.load()) set_accepting(true);
  }
  if (why && s->welcomed) {
    const uint32_t n = s->inflight.load();
    limited_.log(s->uid, "disconnected", kLogInfo, mono_ns(), [&] {
      return s->name + " disconnected (" + why + ")" +
                   (n ? ", " + std::to_string(n) + " request(s) in flight dropped" : std::string());
    });
  }
  // The socket closes with the last reference (requests in flight hold one).
  shutdown(s->sock, SHUT_RDWR);
}

// A reload (compiling models) may take seconds: the ReloadQueue runs it on a thread of its own
// so that the control thread keeps accepting clients and noticing dead ones; the reply goes out
// when it is done.
void ControlPlane::handle_reload(const std::shared_ptr<Session>& s) {
  if (!may_control(opt_, credentials(*s), s->sock)) {
    limited_.log(s->uid, "reload refused", kLogWarn, mono_ns(), [&] {
      return s->name + " (uid " + std::to_string(s->uid) + ") asked for a reload: refused";
    });
    send_reload_reply(*s, NND_IPC_E_ACCESS,
                      "reload is reserved for root, the daemon's user and daemon.control_group");
    return;
  }
  reloads_.ask(s);
}

}  // namespace nnd::daemon::ipc
