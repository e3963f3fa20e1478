#include "daemon/ipc/server.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "daemon/ipc/request_validation.h"
#include "daemon/ipc/segment.h"
#include "ipc/nnd_ipc.h"

namespace nnd::daemon {

using ipc::CompleteProducer;
using ipc::DataLayout;
using ipc::Segment;
using ipc::SubmitConsumer;

namespace {

constexpr int kErr = 3, kWarn = 4, kInfo = 6, kDebug = 7;
constexpr int64_t kNever = INT64_MAX;

int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void copy_name(char* dst, size_t cap, std::string_view src) {
  const size_t n = std::min(cap - 1, src.size());
  std::memcpy(dst, src.data(), n);
  std::memset(dst + n, 0, cap - n);
}

}  // namespace

std::string socket_path_for_endpoint(const std::string& endpoint) {
  if (endpoint.find('/') != std::string::npos) return endpoint;
  std::string dir;
  if (const char* d = std::getenv("NND_RUNTIME_DIR"); d && *d) {
    dir = d;
  } else {
    struct stat st;
    dir = (stat("/run/nnd", &st) == 0 && S_ISDIR(st.st_mode)) ? "/run/nnd" : "/tmp";
  }
  return dir + "/" + (endpoint.empty() ? std::string("nnd") : endpoint) + ".sock";
}

// ---- internal records -----------------------------------------------------------------------

struct Session;

// One request in flight: lives inside its Session (one per slot), so queuing allocates nothing.
struct Request {
  sched::Item item;
  Session* session = nullptr;
  uint32_t slot = 0;
  uint32_t batch = 0;
  int64_t seen_ns = 0;
  std::shared_ptr<ServedModel> model;   // the version the request started on
  sched::ModelStats* stats = nullptr;
  DataLayout layout;
  std::shared_ptr<Session> keep;        // keeps the segment mapped until the answer is written
};

struct Session {
  uint64_t id = 0;
  int sock = -1;
  int64_t accepted_ns = 0;
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;  // "client 'vision' (pid 123)"
  std::unique_ptr<Segment> seg;
  uint32_t slots = 0;
  bool welcomed = false;  // control thread only
  bool in_epoll = false;  // eventfd registered with the workers' epoll (under mu_)

  SubmitConsumer submit;                 // under Server mu_
  std::mutex complete_mu;
  CompleteProducer complete;             // under complete_mu
  std::array<Request, NND_IPC_MAX_SLOTS> reqs;
  std::array<std::atomic<uint8_t>, NND_IPC_MAX_SLOTS> in_flight{};
  std::atomic<uint32_t> inflight{0};
  std::atomic<bool> dead{false};
  std::atomic<bool> corrupt{false};

  // The segment's bytes are counted against max_shared_memory_bytes from the welcome until the
  // last reference (a request in flight may hold one) unmaps it.
  std::shared_ptr<std::atomic<uint64_t>> shm_total;
  uint64_t shm_bytes = 0;

  ~Session() {
    seg.reset();
    if (shm_total) shm_total->fetch_sub(shm_bytes);
    if (sock >= 0) close(sock);
  }
};

// Per served model version, cached by the poller for the current snapshot.
struct ModelEntry {
  std::shared_ptr<ServedModel> model;
  sched::Queue* queue = nullptr;
  sched::ModelStats* stats = nullptr;
};


struct Server::Impl {
  ServerOptions opt;
  ModelRegistry& registry;
  ServerLogger logger;
  std::string path;
  uint64_t instance_id = 0;

  // Reloads asked for by clients run on one thread, one at a time: requests that arrive while a
  // reload runs wait for the next one (which starts after they asked), and every request waiting
  // then is answered by that single run. So a client flooding RELOAD costs one thread and at most
  // two callback runs in a row, never a thread per message.
  std::mutex reload_mu;
  std::condition_variable reload_cv;
  ReloadCallback reload_cb;                // under reload_mu
  struct ReloadAsker {
    std::shared_ptr<Session> session;
    uint32_t replies = 0;                  // RELOAD messages of this session to answer
  };
  std::vector<ReloadAsker> reload_waiting; // under reload_mu: answered by the next run
  bool reload_stop = false;                // under reload_mu
  std::thread reload_thread;               // started with the first request

  // Threads and fds.
  int listen_fd = -1;
  int io_epfd = -1, io_wake = -1;     // control thread
  int w_epfd = -1, w_wake = -1;       // workers' epoll (clients' eventfds + wake)
  std::thread io_thread;
  std::vector<std::thread> workers;
  std::atomic<bool> io_stop{false};
  bool started = false, stopped = false;
  int64_t spin_ns = 0;

  // Dispatch state, under mu.
  std::mutex mu;
  std::condition_variable cv;        // idle non-poller workers
  std::condition_variable drain_cv;  // stop() waits for the drain
  std::vector<std::shared_ptr<Session>> sessions;  // polled sessions
  sched::Scheduler scheduler;
  std::shared_ptr<const ModelSet> cached_set;
  std::vector<ModelEntry> entries;
  std::vector<ipc::ModelView> views;  // entries[i] as request validation sees it
  bool poller_active = false;
  bool poller_sleeping = false;  // the poller is (about to be) asleep in epoll
  bool models_checked = false;   // registry snapshot compared during this ingest round
  bool stop_workers = false;
  bool draining = false;
  uint32_t running = 0;     // batches being executed
  size_t queue_capacity = 0;

  // Stats by model name (entries never removed), under stats_mu.
  mutable std::mutex stats_mu;
  std::map<std::string, std::unique_ptr<sched::ModelStats>, std::less<>> stats_by_name;

  // Counters.
  std::atomic<uint64_t> c_sessions{0}, c_total{0}, c_refused{0}, c_corrupt{0}, c_inflight{0}, c_dropped{0};
  std::atomic<uint64_t> c_timeouts{0}, c_pending{0};
  std::atomic<uint64_t> c_reloads{0}, c_reloads_failed{0};
  int64_t started_ns = mono_ns();
  // Bytes of all live segments (shared with the sessions, which may outlive a stop()).
  std::shared_ptr<std::atomic<uint64_t>> shm_total = std::make_shared<std::atomic<uint64_t>>(0);
  uint64_t next_session_id = 1;

  // Control thread only.
  std::unordered_map<uint64_t, std::shared_ptr<Session>> conns;
  // Connections without a hello yet, in accept order (so deadlines are in order too): closed
  // when their hand-shake deadline passes. Ids of connections already gone are skipped.
  std::deque<std::pair<int64_t, uint64_t>> handshake_deadlines;
  size_t pending = 0;          // entries of conns not welcomed yet
  bool accepting = true;       // listen_fd is in io_epfd
  // accept() ran out of descriptors or memory: accepting pauses for kAcceptPauseNs, with one
  // warning per kAcceptWarnIntervalNs.
  static constexpr int64_t kAcceptPauseNs = 100'000'000;
  static constexpr int64_t kAcceptWarnIntervalNs = 10'000'000'000;
  int64_t accept_paused_until_ns = 0;  // 0: not paused
  int64_t accept_warned_ns = INT64_MIN / 2;
  // Descriptors besides the sessions': listen socket, epolls, wake fds, logs, model files.
  static constexpr rlim_t kReservedDescriptors = 32;

  Impl(ServerOptions o, ModelRegistry& r, ServerLogger l)
      : opt(std::move(o)), registry(r), logger(std::move(l)), scheduler(opt.policy) {}
  ~Impl() {
    for (int fd : {listen_fd, io_epfd, w_epfd, io_wake, w_wake}) {
      if (fd >= 0) close(fd);
    }
  }

  void log(int level, const std::string& m) const {
    if (logger) {
      logger(level, m);
    } else {
      std::fprintf(stderr, "<%d>nnd: %s\n", level, m.c_str());
    }
  }

  // ---- setup ----
  void ensure_descriptor_budget();
  void bind_socket();
  void start_threads();

  // ---- control thread ----
  void io_main();
  void accept_clients();
  void set_accepting(bool on);
  int64_t expire_handshakes(int64_t now);
  void handle_control(const std::shared_ptr<Session>& s);
  void handle_hello(const std::shared_ptr<Session>& s, const nnd_ipc_hello& h, size_t n);
  void end_connection(uint64_t id, const char* why);
  void start_reload(const std::shared_ptr<Session>& s);
  void reload_main();
  void stop_reload_thread();
  bool peer_allowed(const Session& s, std::string* why) const;
  bool may_control(const Session& s) const;
  uint64_t slot_data_bytes_for(const ModelSet& set) const;
  void fill_model_info(const ServedModel& m, nnd_ipc_model_info* info) const;
  sched::ModelStats* stats_for(const std::string& name);
  static void fill_metrics(const std::string& name, const sched::ModelStatsSnapshot& snap,
                           nnd_ipc_model_metrics* mt);
  void fill_daemon_info(size_t models, nnd_ipc_daemon_info* di) const;

  // ---- data path ----
  void worker_main(unsigned w);
  void refresh_models_locked();
  bool ingest_locked(int64_t now);
  void ingest_request(Session& s, uint32_t slot, int64_t now);
  void mark_corrupt(Session& s, const char* why);
  void answer_now(Session& s, uint32_t slot, int32_t status, sched::ModelStats* stats);
  void finish(Request& r, int32_t status, uint32_t served_batch, int64_t run_start, int64_t run_ns,
              bool ran);
  bool push_complete(Session& s, uint32_t slot);
  bool any_submit_pending_locked() const;
  void set_sleeping_locked(uint32_t v);
};

// ---- socket setup -----------------------------------------------------------------------------

void Server::Impl::bind_socket() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) throw std::runtime_error("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  // A socket file left by a dead daemon is replaced; a live daemon makes start() fail.
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(path + " exists and is not a socket");
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (probe >= 0) {
      const int rc = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
      close(probe);
      if (rc == 0) throw std::runtime_error("another daemon is serving on " + path);
    }
    log(kInfo, "removing stale socket " + path);
    unlink(path.c_str());
  }
  listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd < 0) throw std::runtime_error(errno_text("socket"));
  // Create the socket file with no access and open it up once owner and mode are right.
  const mode_t old = umask(0777);
  const int rc = bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int bind_errno = errno;
  umask(old);
  if (rc != 0) {
    errno = bind_errno;
    throw std::runtime_error(errno_text(("bind " + path).c_str()));
  }
  // The allowed user owns the socket file and the allowed group is its group, so each can connect
  // through the 0660 mode whether or not the other is configured (a user without a group used to
  // leave it root:root). Who is admitted is still decided by peer credentials.
  if (opt.allowed_uid || opt.allowed_gid) {
    const uid_t owner = opt.allowed_uid ? *opt.allowed_uid : static_cast<uid_t>(-1);
    const gid_t group = opt.allowed_gid ? *opt.allowed_gid : static_cast<gid_t>(-1);
    if (chown(path.c_str(), owner, group) != 0) {
      log(kWarn, errno_text(("chown " + path + " to the configured user/group").c_str()) +
                     " (only the daemon's own user and root can connect)");
    }
  }
  // Never wider than 0660 (config/SCHEMA.md): others get no access to the socket file.
  if (chmod(path.c_str(), opt.socket_mode & 0660) != 0) {
    throw std::runtime_error(errno_text(("chmod " + path).c_str()));
  }
  if (listen(listen_fd, 64) != 0) throw std::runtime_error(errno_text("listen"));
}

// Every session holds three descriptors (socket, memfd, eventfd) and every pending connection
// one; max_clients sessions must fit under RLIMIT_NOFILE or the last ones are refused by accept()
// with EMFILE. The soft limit is raised as far as the hard one allows (systemd's default soft
// limit is 1024 with a much higher hard limit); a configuration that cannot fit is refused.
void Server::Impl::ensure_descriptor_budget() {
  const rlim_t need = rlim_t{opt.max_clients} * 3 + opt.max_pending_connections +
                      rlim_t{opt.workers} + kReservedDescriptors;
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? need : std::min(need, rl.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      log(kInfo, "raised the open-file limit from " + std::to_string(rl.rlim_cur) + " to " +
                     std::to_string(raised.rlim_cur) + " for max_clients " +
                     std::to_string(opt.max_clients));
      rl = raised;
    }
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
    throw std::runtime_error(
        "daemon.max_clients " + std::to_string(opt.max_clients) + " (with max_pending_connections " +
        std::to_string(opt.max_pending_connections) + ") needs about " + std::to_string(need) +
        " open files, but the limit is " + std::to_string(rl.rlim_cur) + " (hard " +
        std::to_string(rl.rlim_max) + "): lower max_clients or raise LimitNOFILE=");
  }
}

// ---- control thread ---------------------------------------------------------------------------

namespace {
constexpr uint64_t kListenTag = 0, kWakeTag = ~uint64_t{0};
}

void Server::Impl::io_main() {
  std::array<epoll_event, 32> ev;
  while (!io_stop.load()) {
    // Sleeps until a control message, a new connection or the next hand-shake deadline.
    int64_t wait_ns = expire_handshakes(mono_ns());
    if (accept_paused_until_ns != 0) {
      const int64_t left = accept_paused_until_ns - mono_ns();
      if (left <= 0) {
        accept_paused_until_ns = 0;
        if (pending < opt.max_pending_connections) set_accepting(true);
      } else if (wait_ns < 0 || left < wait_ns) {
        wait_ns = left;
      }
    }
    const int timeout_ms = wait_ns < 0 ? -1 : static_cast<int>(std::min<int64_t>((wait_ns + 999'999) / 1'000'000, INT32_MAX));
    const int n = epoll_wait(io_epfd, ev.data(), static_cast<int>(ev.size()), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      log(kErr, errno_text("control epoll_wait"));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t tag = ev[i].data.u64;
      if (tag == kWakeTag) {
        uint64_t v;
        (void)!read(io_wake, &v, sizeof(v));
        continue;
      }
      if (tag == kListenTag) {
        accept_clients();
        continue;
      }
      auto it = conns.find(tag);
      if (it == conns.end()) continue;
      std::shared_ptr<Session> s = it->second;
      if (ev[i].events & EPOLLIN) handle_control(s);
      if (conns.count(tag) && (ev[i].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
        end_connection(tag, s->corrupt.load() ? "segment corrupted" : "client hung up");
      }
    }
  }
  // Shut every remaining connection.
  std::vector<uint64_t> ids;
  for (auto& [id, s] : conns) ids.push_back(id);
  for (uint64_t id : ids) end_connection(id, nullptr);
}

// Connections that never say hello must not pile up: each gets handshake_timeout_ms, and at most
// max_pending_connections are accepted at once. Beyond that the listen socket leaves the epoll set
// and further connections wait in the kernel's listen backlog (bounded by listen()'s 64; a connect
// beyond it fails at once with EAGAIN, which nnclient reports as NNCLIENT_E_OVERLOADED), so the
// daemon's memory and file descriptors stay bounded and a legitimate client is served as soon as
// a silent one times out.
void Server::Impl::set_accepting(bool on) {
  if (on == accepting || listen_fd < 0) return;
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenTag;
  if (epoll_ctl(io_epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, listen_fd, &e) == 0) accepting = on;
}

int64_t Server::Impl::expire_handshakes(int64_t now) {
  while (!handshake_deadlines.empty()) {
    const auto [deadline, id] = handshake_deadlines.front();
    auto it = conns.find(id);
    if (it == conns.end() || it->second->welcomed) {
      handshake_deadlines.pop_front();
      continue;
    }
    if (deadline > now) return deadline - now;
    handshake_deadlines.pop_front();
    c_timeouts.fetch_add(1);
    log(kWarn, it->second->name + ": no hello within " + std::to_string(opt.handshake_timeout_ms) +
                   " ms, closing the connection");
    end_connection(id, nullptr);
  }
  return -1;
}

void Server::Impl::accept_clients() {
  for (;;) {
    if (pending >= opt.max_pending_connections) {
      set_accepting(false);
      return;
    }
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors or memory: the connection stays in the listen backlog, and the
        // listen socket stays readable, so retrying at once would spin a core (and log at that
        // rate). Pause accepting; a session that ends, or the pause running out, resumes it.
        const int64_t now = mono_ns();
        if (now - accept_warned_ns >= kAcceptWarnIntervalNs) {
          log(kWarn, errno_text("accept") + ": not accepting new clients for " +
                         std::to_string(kAcceptPauseNs / 1'000'000) +
                         " ms (raise LimitNOFILE= or lower daemon.max_clients)");
          accept_warned_ns = now;
        }
        accept_paused_until_ns = now + kAcceptPauseNs;
        set_accepting(false);
        return;
      }
      log(kWarn, errno_text("accept"));
      return;
    }
    auto s = std::make_shared<Session>();
    s->id = next_session_id++;
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
    if (epoll_ctl(io_epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
      log(kWarn, errno_text("epoll_ctl add client"));
      continue;  // ~Session closes fd
    }
    handshake_deadlines.emplace_back(s->accepted_ns + int64_t{opt.handshake_timeout_ms} * 1'000'000, s->id);
    ++pending;
    c_pending.store(pending);
    conns.emplace(s->id, std::move(s));
  }
}

namespace {
// Whether the peer's primary group, or one of its supplementary groups, is `g`.
bool peer_in_group(const Session& s, gid_t g) {
  if (s.gid == g) return true;
  std::array<gid_t, 256> groups;
  socklen_t len = sizeof(groups);
  if (getsockopt(s.sock, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
    for (size_t i = 0; i < len / sizeof(gid_t); ++i) {
      if (groups[i] == g) return true;
    }
  }
  return false;
}
}  // namespace

bool Server::Impl::peer_allowed(const Session& s, std::string* why) const {
  if (s.uid == static_cast<uid_t>(-1)) {
    *why = "peer credentials unavailable";
    return false;
  }
  if (opt.allow_root && s.uid == 0) return true;
  if (opt.allow_own_uid && s.uid == geteuid()) return true;
  if (opt.allowed_uid && s.uid == *opt.allowed_uid) return true;
  if (opt.allowed_gid && peer_in_group(s, *opt.allowed_gid)) return true;
  *why = "uid " + std::to_string(s.uid) + " gid " + std::to_string(s.gid) + " is not allowed";
  return false;
}

bool Server::Impl::may_control(const Session& s) const {
  if (s.uid == static_cast<uid_t>(-1)) return false;
  if (s.uid == 0 || s.uid == geteuid()) return true;
  return opt.control_gid && peer_in_group(s, *opt.control_gid);
}

uint64_t Server::Impl::slot_data_bytes_for(const ModelSet& set) const {
  uint64_t need = NND_IPC_DATA_ALIGN;
  for (const auto& m : set.models) {
    DataLayout l;
    if (ipc::compute_layout(m->input_sample_bytes.data(), m->input_sample_bytes.size(),
                            m->output_sample_bytes.data(), m->output_sample_bytes.size(),
                            std::max<uint32_t>(1, m->settings.max_batch), &l)) {
      need = std::max(need, l.total);
    }
  }
  return need;
}

sched::ModelStats* Server::Impl::stats_for(const std::string& name) {
  std::lock_guard lk(stats_mu);
  auto it = stats_by_name.find(name);
  if (it == stats_by_name.end()) {
    it = stats_by_name.emplace(name, std::make_unique<sched::ModelStats>(name)).first;
  }
  return it->second.get();
}

void Server::Impl::handle_hello(const std::shared_ptr<Session>& s, const nnd_ipc_hello& h, size_t n) {
  nnd_ipc_welcome w{};
  w.type = NND_MSG_WELCOME;
  w.version = NND_IPC_VERSION;
  w.daemon_instance = instance_id;
  auto refuse = [&](int32_t status, const std::string& why) {
    w.status = status;
    copy_name(w.message, sizeof(w.message), why);
    c_refused.fetch_add(1);
    (void)!send(s->sock, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT);
    log(kWarn, s->name + " refused: " + why);
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
  s->name = std::string("client '") + cname + "' (pid " + std::to_string(s->pid) + ")";
  std::string why;
  if (!peer_allowed(*s, &why)) return refuse(NND_IPC_E_ACCESS, "access denied: " + why);
  if (io_stop.load()) return refuse(NND_IPC_E_SHUTTING_DOWN, "daemon is stopping");
  if (c_sessions.load() >= opt.max_clients) {
    return refuse(NND_IPC_E_TOO_MANY_CLIENTS, "too many clients (max_clients " + std::to_string(opt.max_clients) + ")");
  }
  // A hello chooses only the number of slots, clamped to 1..NND_IPC_MAX_SLOTS; the slot size is
  // the daemon's (the largest request of any model), so one segment is bounded, and the sum of
  // all segments is bounded by max_shared_memory_bytes.
  uint32_t slots = h.requested_slots ? h.requested_slots : opt.slots_per_client;
  slots = std::clamp<uint32_t>(slots, 1, NND_IPC_MAX_SLOTS);
  const auto set = registry.current();
  const ipc::SegmentLayout layout = ipc::plan_segment(slots, slot_data_bytes_for(*set));
  // Reserve the bytes before creating the segment (only this thread adds; sessions subtract).
  const uint64_t before = shm_total->fetch_add(layout.segment_bytes);
  if (before + layout.segment_bytes > opt.max_shared_memory_bytes) {
    shm_total->fetch_sub(layout.segment_bytes);
    const uint64_t one_slot = ipc::plan_segment(1, layout.slot_data_bytes).segment_bytes;
    return refuse(NND_IPC_E_MEMORY_LIMIT,
                  "shared memory limit: " + std::to_string(layout.slots) + " slots need " +
                      std::to_string(layout.segment_bytes) + " bytes, " +
                      std::to_string(opt.max_shared_memory_bytes > before ? opt.max_shared_memory_bytes - before : 0) +
                      " of max_shared_memory_bytes " + std::to_string(opt.max_shared_memory_bytes) +
                      " are free (one slot needs " + std::to_string(one_slot) + ")");
  }
  s->shm_total = shm_total;
  s->shm_bytes = layout.segment_bytes;
  std::string err;
  s->seg = Segment::create(layout, "nnd-client", &err);
  if (!s->seg) return refuse(NND_IPC_E_INTERNAL, "cannot create the shared memory: " + err);
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
    log(kWarn, s->name + ": " + errno_text("sending the welcome"));
    end_connection(s->id, nullptr);
    return;
  }
  s->welcomed = true;
  --pending;
  c_pending.store(pending);
  if (pending < opt.max_pending_connections) set_accepting(true);
  {
    std::lock_guard lk(mu);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u64 = s->id;
    if (epoll_ctl(w_epfd, EPOLL_CTL_ADD, s->seg->eventfd(), &e) == 0) s->in_epoll = true;
    // An awake poller re-checks every ring before it sleeps, so the client need not wake it.
    nnd_ipc_store_release(&s->seg->header()->daemon_sleeping, poller_sleeping ? 1u : 0u);
    sessions.push_back(s);
  }
  c_sessions.fetch_add(1);
  c_total.fetch_add(1);
  log(kInfo, s->name + " connected (uid " + std::to_string(s->uid) + ", " + std::to_string(layout.slots) +
                 " slots of " + std::to_string(layout.slot_data_bytes) + " bytes)");
}

void Server::Impl::fill_model_info(const ServedModel& m, nnd_ipc_model_info* info) const {
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
    t->dtype = dt == DType::kUInt8 ? 1u : 0u;
    t->rank = static_cast<uint32_t>(std::min<size_t>(v.shape.size(), NND_IPC_MAX_RANK));
    for (uint32_t d = 0; d < t->rank; ++d) t->dims[d] = v.shape[d];
  };
  for (uint32_t k = 0; k < info->num_inputs; ++k) {
    const DType dt = k < m.input_dtypes.size() ? m.input_dtypes[k] : g.values[g.inputs[k]].dtype;
    fill(&info->inputs[k], k < g.input_names.size() ? g.input_names[k] : "", g.values[g.inputs[k]], dt);
  }
  for (uint32_t k = 0; k < info->num_outputs; ++k) {
    fill(&info->outputs[k], k < g.output_names.size() ? g.output_names[k] : "", g.values[g.outputs[k]],
         DType::kFloat32);
  }
  const std::string engine = m.engines.empty() || !m.engines[0] ? "none" : m.engines[0]->name();
  copy_name(info->engine, sizeof(info->engine), engine);
}

void Server::Impl::handle_control(const std::shared_ptr<Session>& s) {
  union {
    nnd_ipc_hello hello;
    nnd_ipc_model_query query;
    char raw[1024];
  } in{};
  for (;;) {
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
      if (!conns.count(s->id)) return;
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
    const auto set = registry.current();
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
        const auto snap = stats_for(name)->snapshot();
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
        fill_metrics(name, stats_for(name)->snapshot(), &mt);
      } else {
        mt.status = NND_IPC_E_UNKNOWN_MODEL;
      }
      (void)!send(s->sock, &mt, sizeof(mt), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_DAEMON_INFO) {
      nnd_ipc_daemon_info di{};
      fill_daemon_info(set->models.size(), &di);
      (void)!send(s->sock, &di, sizeof(di), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (type == NND_MSG_RELOAD) {
      start_reload(s);
    } else {
      nnd_ipc_reply r{};
      r.type = type;
      r.status = NND_IPC_E_BAD_REQUEST;
      copy_name(r.message, sizeof(r.message), "unknown message type " + std::to_string(type));
      (void)!send(s->sock, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
}

void Server::Impl::fill_metrics(const std::string& name, const sched::ModelStatsSnapshot& snap,
                                nnd_ipc_model_metrics* mt) {
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

void Server::Impl::fill_daemon_info(size_t models, nnd_ipc_daemon_info* di) const {
  di->type = NND_MSG_DAEMON_INFO;
  di->status = NND_IPC_OK;
  di->struct_bytes = sizeof(*di);
  di->pid = static_cast<uint32_t>(getpid());
  copy_name(di->version, sizeof(di->version), opt.version);
  copy_name(di->git_revision, sizeof(di->git_revision), opt.git_revision);
  di->uptime_ns = static_cast<uint64_t>(std::max<int64_t>(0, mono_ns() - started_ns));
  di->rss_bytes = resident_bytes();
  di->clients = c_sessions.load();
  di->clients_total = c_total.load();
  di->clients_refused = c_refused.load();
  di->reloads = c_reloads.load();
  di->reloads_failed = c_reloads_failed.load();
  di->requests_in_flight = c_inflight.load();
  di->shared_memory_bytes = shm_total->load();
  di->models = models;
}

namespace {
void send_reload_reply(const Session& s, int32_t status, const std::string& message) {
  nnd_ipc_reply r{};
  r.type = NND_MSG_RELOAD;
  r.status = status;
  copy_name(r.message, sizeof(r.message), message);
  // Never blocks (a client that does not read cannot hold up the others or stop()); fails
  // harmlessly if the client left.
  (void)!send(s.sock, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
}
}  // namespace

// A reload (compiling models) may take seconds: it runs on the reload thread so that the control
// thread keeps accepting clients and noticing dead ones; the reply goes out when it is done.
void Server::Impl::start_reload(const std::shared_ptr<Session>& s) {
  if (!may_control(*s)) {
    log(kWarn, s->name + " (uid " + std::to_string(s->uid) + ") asked for a reload: refused");
    send_reload_reply(*s, NND_IPC_E_ACCESS,
                      "reload is reserved for root, the daemon's user and daemon.control_group");
    return;
  }
  std::lock_guard lk(reload_mu);
  if (!reload_cb || reload_stop) {
    send_reload_reply(*s, reload_stop ? NND_IPC_E_SHUTTING_DOWN : NND_IPC_E_INTERNAL,
                      reload_stop ? "the daemon is shutting down"
                                  : "reload is not supported by this daemon");
    return;
  }
  auto it = std::find_if(reload_waiting.begin(), reload_waiting.end(),
                         [&](const ReloadAsker& a) { return a.session == s; });
  if (it != reload_waiting.end()) {
    ++it->replies;  // the same run answers every message of this session
    return;
  }
  log(kInfo, s->name + " asked for a reload");
  reload_waiting.push_back({s, 1});
  if (!reload_thread.joinable()) reload_thread = std::thread([this] { reload_main(); });
  reload_cv.notify_one();
}

void Server::Impl::reload_main() {
  std::unique_lock lk(reload_mu);
  for (;;) {
    reload_cv.wait(lk, [&] { return reload_stop || !reload_waiting.empty(); });
    if (reload_stop) break;
    std::vector<ReloadAsker> askers = std::move(reload_waiting);
    reload_waiting.clear();
    ReloadCallback cb = reload_cb;
    lk.unlock();
    ReloadResult res;
    try {
      res = cb();
    } catch (const std::exception& e) {
      res.ok = false;
      res.message = e.what();
    }
    for (const ReloadAsker& a : askers) {
      for (uint32_t k = 0; k < a.replies; ++k) {
        send_reload_reply(*a.session, res.ok ? NND_IPC_OK : NND_IPC_E_INTERNAL, res.message);
      }
    }
    lk.lock();
  }
  // Stopping: whoever still waits gets an answer instead of a reload that will not happen.
  for (const ReloadAsker& a : reload_waiting) {
    for (uint32_t k = 0; k < a.replies; ++k) {
      send_reload_reply(*a.session, NND_IPC_E_SHUTTING_DOWN, "the daemon is shutting down");
    }
  }
  reload_waiting.clear();
}

// The reload callback must return once the daemon is stopping (main answers its waiters).
void Server::Impl::stop_reload_thread() {
  {
    std::lock_guard lk(reload_mu);
    reload_stop = true;
  }
  reload_cv.notify_all();
  if (reload_thread.joinable()) reload_thread.join();
}

void Server::Impl::end_connection(uint64_t id, const char* why) {
  auto it = conns.find(id);
  if (it == conns.end()) return;
  std::shared_ptr<Session> s = std::move(it->second);
  conns.erase(it);
  epoll_ctl(io_epfd, EPOLL_CTL_DEL, s->sock, nullptr);
  if (s->welcomed) {
    std::lock_guard lk(mu);
    s->dead.store(true);
    if (s->in_epoll) epoll_ctl(w_epfd, EPOLL_CTL_DEL, s->seg->eventfd(), nullptr);
    s->in_epoll = false;
    sessions.erase(std::remove(sessions.begin(), sessions.end(), s), sessions.end());
    c_sessions.fetch_sub(1);
  } else {
    s->dead.store(true);
    --pending;
    c_pending.store(pending);
    if (pending < opt.max_pending_connections && !io_stop.load()) set_accepting(true);
  }
  if (why && s->welcomed) {
    const uint32_t n = s->inflight.load();
    log(kInfo, s->name + " disconnected (" + why + ")" +
                   (n ? ", " + std::to_string(n) + " request(s) in flight dropped" : std::string()));
  }
  // The socket closes with the last reference (requests in flight hold one).
  shutdown(s->sock, SHUT_RDWR);
}

// ---- data path --------------------------------------------------------------------------------

void Server::Impl::refresh_models_locked() {
  auto set = registry.current();
  if (set == cached_set) return;
  cached_set = set;
  entries.clear();
  views.clear();
  scheduler.retire_empty([&](const void* key) {
    for (const auto& m : set->models) {
      if (m.get() == key) return true;
    }
    return false;
  });
  for (const auto& m : set->models) {
    const size_t ni = m->graph.inputs.size(), no = m->graph.outputs.size();
    if (ni > NND_IPC_MAX_TENSORS || no > NND_IPC_MAX_TENSORS || m->input_sample_bytes.size() != ni ||
        m->input_dtypes.size() != ni || m->output_sample_bytes.size() != no) {
      log(kErr, "model '" + m->settings.name + "' cannot be served over IPC (" + std::to_string(ni) +
                    " inputs, " + std::to_string(no) + " outputs; at most " +
                    std::to_string(NND_IPC_MAX_TENSORS) + " each)");
      continue;
    }
    ModelEntry e;
    e.model = m;
    sched::QueueParams p;
    p.max_batch = std::max<uint32_t>(1, m->settings.max_batch);
    p.batch_delay_ns = int64_t{m->settings.batch_delay_us} * 1000;
    p.priority = m->settings.priority;
    e.queue = scheduler.queue_for(m.get(), p, queue_capacity);
    e.stats = stats_for(m->settings.name);
    ipc::ModelView v;
    v.name = m->settings.name;
    v.signature = m->signature;
    v.max_batch = p.max_batch;
    v.input_sample_bytes = m->input_sample_bytes.data();
    v.num_inputs = ni;
    v.output_sample_bytes = m->output_sample_bytes.data();
    v.num_outputs = no;
    entries.push_back(std::move(e));
    views.push_back(v);
  }
}

void Server::Impl::mark_corrupt(Session& s, const char* why) {
  if (s.corrupt.exchange(true)) return;
  c_corrupt.fetch_add(1);
  log(kWarn, s.name + ": ending the session: " + why);
  shutdown(s.sock, SHUT_RDWR);  // the control thread sees the hang-up and tears the session down
}

bool Server::Impl::push_complete(Session& s, uint32_t slot) {
  if (s.dead.load(std::memory_order_relaxed) || s.corrupt.load(std::memory_order_relaxed)) return false;
  const char* why = nullptr;
  bool ok;
  {
    std::lock_guard lk(s.complete_mu);
    ok = s.complete.push(s.seg->header(), slot, &why);
  }
  if (!ok) mark_corrupt(s, why);
  return ok;
}

void Server::Impl::answer_now(Session& s, uint32_t slot, int32_t status, sched::ModelStats* stats) {
  nnd_ipc_slot* ss = s.seg->slot(slot);
  ipc::shm_store(&ss->status, status);
  ipc::shm_store(&ss->served_batch, 0u);
  ipc::shm_store(&ss->output_bytes, uint64_t{0});
  ipc::shm_store(&ss->queue_ns, uint64_t{0});
  ipc::shm_store(&ss->run_ns, uint64_t{0});
  if (stats) stats->add_request(status, 0);
  push_complete(s, slot);
}

void Server::Impl::ingest_request(Session& s, uint32_t slot, int64_t now) {
  if (s.in_flight[slot].load(std::memory_order_acquire)) {
    mark_corrupt(s, "a slot was submitted again while in flight");
    return;
  }
  // Copy once, then check only the copy: the client may change the slot at any time.
  const ipc::RequestFields fields = ipc::read_request_fields(s.seg->slot(slot));
  if (draining) return answer_now(s, slot, NND_IPC_E_SHUTTING_DOWN, nullptr);
  if (!models_checked) {
    refresh_models_locked();
    models_checked = true;
  }
  ipc::RequestLimits limits;
  limits.slot_data_bytes = s.seg->layout().slot_data_bytes;
  limits.max_request_bytes = opt.max_request_bytes;
  ipc::ValidatedRequest v;
  size_t mi = SIZE_MAX;
  const int32_t status = ipc::validate_request(fields, views, limits, now, &v, &mi);
  const ModelEntry* e = mi < entries.size() ? &entries[mi] : nullptr;
  if (status != NND_IPC_OK) return answer_now(s, slot, status, e ? e->stats : nullptr);
  if (s.inflight.load(std::memory_order_relaxed) >= opt.max_inflight_per_client) {
    return answer_now(s, slot, NND_IPC_E_TOO_MANY_REQUESTS, e->stats);
  }
  const uint32_t batch = v.batch;
  const int64_t deadline = v.deadline_ns;
  Request& r = s.reqs[slot];
  r.layout = v.layout;
  r.item = sched::Item{};
  r.item.enqueue_ns = now;
  r.item.deadline_ns = deadline;
  r.item.samples = batch;
  r.item.user = &r;
  r.session = &s;
  r.slot = slot;
  r.batch = batch;
  r.seen_ns = now;
  r.stats = e->stats;
  if (!scheduler.push(e->queue, &r.item, now)) return answer_now(s, slot, NND_IPC_E_OVERLOADED, e->stats);
  r.model = e->model;
  e->stats->queued();
  // The session outlives the request: find our shared_ptr (sessions is small).
  for (const auto& sp : sessions) {
    if (sp.get() == &s) {
      r.keep = sp;
      break;
    }
  }
  s.in_flight[slot].store(1, std::memory_order_relaxed);
  s.inflight.fetch_add(1, std::memory_order_relaxed);
  c_inflight.fetch_add(1, std::memory_order_relaxed);
}

bool Server::Impl::ingest_locked(int64_t now) {
  bool any = false;
  models_checked = false;
  for (size_t i = 0; i < sessions.size(); ++i) {
    Session& s = *sessions[i];
    if (s.corrupt.load(std::memory_order_relaxed) || s.dead.load(std::memory_order_relaxed)) continue;
    nnd_ipc_header* h = s.seg->header();
    for (uint32_t budget = NND_IPC_MAX_SLOTS; budget > 0; --budget) {
      uint32_t slot;
      const char* why = nullptr;
      const auto res = s.submit.pop(h, s.slots, &slot, &why);
      if (res == SubmitConsumer::Result::kEmpty) break;
      if (res == SubmitConsumer::Result::kCorrupt) {
        mark_corrupt(s, why);
        break;
      }
      any = true;
      ingest_request(s, slot, now);
      if (s.corrupt.load(std::memory_order_relaxed)) break;
    }
  }
  return any;
}

bool Server::Impl::any_submit_pending_locked() const {
  for (const auto& s : sessions) {
    if (s->corrupt.load(std::memory_order_relaxed)) continue;
    if (s->submit.pending(s->seg->header())) return true;
  }
  return false;
}

void Server::Impl::set_sleeping_locked(uint32_t v) {
  for (const auto& s : sessions) nnd_ipc_store_release(&s->seg->header()->daemon_sleeping, v);
}

// Writes the result fields, releases the slot and pushes the completion. `r` must not be used
// after the call (the client may resubmit the slot at once).
void Server::Impl::finish(Request& r, int32_t status, uint32_t served_batch, int64_t run_start,
                          int64_t run_ns, bool ran) {
  std::shared_ptr<Session> keep = std::move(r.keep);
  Session& s = *keep;
  const uint32_t slot = r.slot;
  sched::ModelStats* stats = r.stats;
  const int64_t seen = r.seen_ns;
  const uint64_t out_bytes = status == NND_IPC_OK ? r.layout.outputs_end - r.layout.outputs_begin : 0;
  r.model.reset();
  if (stats) stats->dequeued();
  const bool alive = !s.dead.load(std::memory_order_relaxed) && !s.corrupt.load(std::memory_order_relaxed);
  if (alive) {
    nnd_ipc_slot* ss = s.seg->slot(slot);
    ipc::shm_store(&ss->status, status);
    ipc::shm_store(&ss->served_batch, served_batch);
    ipc::shm_store(&ss->output_bytes, out_bytes);
    ipc::shm_store(&ss->queue_ns, static_cast<uint64_t>(ran && run_start > seen ? run_start - seen : 0));
    ipc::shm_store(&ss->run_ns, static_cast<uint64_t>(run_ns));
  } else {
    c_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  s.inflight.fetch_sub(1, std::memory_order_relaxed);
  c_inflight.fetch_sub(1, std::memory_order_relaxed);
  s.in_flight[slot].store(0, std::memory_order_release);
  if (alive) {
    // Counted before the completion is published: a client that has its answer and then asks for
    // the stats must find the request counted (the other order raced in CI: 599 of 600).
    if (stats) {
      stats->add_request(status, static_cast<uint64_t>(std::max<int64_t>(0, mono_ns() - seen)));
    }
    push_complete(s, slot);
  }
}

namespace {

// Per-worker scratch: gather/scatter buffers that only grow.
struct WorkerScratch {
  sched::Batch batch;
  std::vector<Request*> live;
  std::array<std::vector<uint8_t>, NND_IPC_MAX_TENSORS> in;
  std::array<std::vector<float>, NND_IPC_MAX_TENSORS> out;
};

int sleep_in_epoll(int epfd, epoll_event* ev, int max, int64_t timeout_ns) {
  if (timeout_ns < 0) return epoll_wait(epfd, ev, max, -1);
#ifdef SYS_epoll_pwait2
  static std::atomic<bool> no_pwait2{false};
  if (!no_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
    const int n = epoll_pwait2(epfd, ev, max, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    no_pwait2.store(true, std::memory_order_relaxed);
  }
#endif
  return epoll_wait(epfd, ev, max, static_cast<int>((timeout_ns + 999'999) / 1'000'000));
}

}  // namespace

void Server::Impl::worker_main(unsigned w) {
  if (!opt.cpu_affinity.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt.cpu_affinity[w % opt.cpu_affinity.size()], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
      log(kWarn, "worker " + std::to_string(w) + ": cannot set CPU affinity");
    }
  }
  if (opt.realtime_priority > 0) {
    sched_param sp{};
    sp.sched_priority = std::clamp(opt.realtime_priority, 1, 99);
    const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc != 0) {
      log(kWarn, "worker " + std::to_string(w) + ": cannot use SCHED_FIFO priority " +
                     std::to_string(sp.sched_priority) + ": " + std::strerror(rc));
    }
  }
  WorkerScratch ws;
  ws.batch.reserve(256);
  ws.live.reserve(256);
  std::array<epoll_event, 16> ev;

  std::unique_lock lk(mu);
  bool poller = false;
  int64_t idle_since = mono_ns();
  while (!stop_workers) {
    if (!poller) {
      if (poller_active) {
        cv.wait(lk);
        continue;
      }
      poller_active = true;
      poller = true;
      idle_since = mono_ns();
    }
    int64_t now = mono_ns();
    if (ingest_locked(now)) idle_since = now;
    int64_t next_due = kNever;
    if (scheduler.pick(now, ws.batch, &next_due)) {
      const bool has_batch = ws.batch.queue != nullptr;
      if (has_batch) ++running;
      if (opt.workers > 1 && has_batch) {
        poller = false;
        poller_active = false;
        cv.notify_one();
      }
      lk.unlock();
      for (sched::Item* it : ws.batch.expired) {
        finish(*static_cast<Request*>(it->user), NND_IPC_E_DEADLINE, 0, 0, 0, false);
      }
      if (has_batch) {
        // Requests of clients that died while queued are dropped without running.
        ws.live.clear();
        for (sched::Item* it : ws.batch.items) {
          Request* r = static_cast<Request*>(it->user);
          if (r->session->dead.load(std::memory_order_relaxed) || r->session->corrupt.load(std::memory_order_relaxed)) {
            finish(*r, NND_IPC_E_SHUTTING_DOWN, 0, 0, 0, false);
          } else {
            ws.live.push_back(r);
          }
        }
        if (!ws.live.empty()) {
          ServedModel& m = *ws.live[0]->model;
          const DataLayout& l0 = ws.live[0]->layout;
          Engine* eng = w < m.engines.size() ? m.engines[w].get() : nullptr;
          uint32_t samples = 0;
          for (Request* r : ws.live) samples += r->batch;
          int32_t status = NND_IPC_OK;
          int64_t t0 = mono_ns(), t1 = t0;
          if (!eng) {
            status = NND_IPC_E_INTERNAL;
            log(kErr, "model '" + m.settings.name + "' has no engine for worker " + std::to_string(w));
          } else {
            std::array<InputView, NND_IPC_MAX_TENSORS> inputs;
            std::array<float*, NND_IPC_MAX_TENSORS> outputs;
            const size_t ni = l0.num_inputs, no = l0.num_outputs;
            const bool single = ws.live.size() == 1;
            if (single) {
              Request& r = *ws.live[0];
              uint8_t* data = r.session->seg->data(r.slot);
              for (size_t k = 0; k < ni; ++k) inputs[k] = {m.input_dtypes[k], data + r.layout.in_off[k]};
              for (size_t k = 0; k < no; ++k) outputs[k] = reinterpret_cast<float*>(data + r.layout.out_off[k]);
            } else {
              for (size_t k = 0; k < ni; ++k) {
                auto& buf = ws.in[k];
                buf.resize(uint64_t{samples} * m.input_sample_bytes[k]);
                size_t pos = 0;
                for (Request* r : ws.live) {
                  std::memcpy(buf.data() + pos, r->session->seg->data(r->slot) + r->layout.in_off[k], r->layout.in_bytes[k]);
                  pos += r->layout.in_bytes[k];
                }
                inputs[k] = {m.input_dtypes[k], buf.data()};
              }
              for (size_t k = 0; k < no; ++k) {
                ws.out[k].resize(uint64_t{samples} * m.output_sample_bytes[k] / sizeof(float));
                outputs[k] = ws.out[k].data();
              }
            }
            t0 = mono_ns();
            try {
              eng->run(samples, std::span<const InputView>(inputs.data(), ni),
                       std::span<float* const>(outputs.data(), no));
            } catch (const std::exception& e) {
              status = NND_IPC_E_INTERNAL;
              log(kErr, "model '" + m.settings.name + "': engine failed: " + e.what());
            }
            t1 = mono_ns();
            if (!single && status == NND_IPC_OK) {
              for (size_t k = 0; k < no; ++k) {
                size_t pos = 0;
                const uint8_t* src = reinterpret_cast<const uint8_t*>(ws.out[k].data());
                for (Request* r : ws.live) {
                  std::memcpy(r->session->seg->data(r->slot) + r->layout.out_off[k], src + pos, r->layout.out_bytes[k]);
                  pos += r->layout.out_bytes[k];
                }
              }
            }
          }
          sched::ModelStats* st = ws.live[0]->stats;
          if (st && status == NND_IPC_OK) st->add_batch(samples);
          for (Request* r : ws.live) finish(*r, status, samples, t0, t1 - t0, true);
        }
      }
      lk.lock();
      if (has_batch) --running;
      idle_since = mono_ns();
      if (draining) drain_cv.notify_all();
      continue;
    }
    if (draining && running == 0 && scheduler.queued() == 0) drain_cv.notify_all();
    // Nothing to run now: spin a little, then sleep.
    now = mono_ns();
    if (now - idle_since < spin_ns || (next_due != kNever && next_due - now <= spin_ns)) {
      lk.unlock();
      for (int i = 0; i < 16; ++i) cpu_relax();
      lk.lock();
      continue;
    }
    set_sleeping_locked(1);
    poller_sleeping = true;
    nnd_ipc_fence_seq_cst();
    if (any_submit_pending_locked()) {
      set_sleeping_locked(0);
      poller_sleeping = false;
      continue;
    }
    const int64_t timeout = next_due == kNever ? -1 : std::max<int64_t>(0, next_due - now);
    lk.unlock();
    const int n = sleep_in_epoll(w_epfd, ev.data(), static_cast<int>(ev.size()), timeout);
    lk.lock();
    for (int i = 0; i < n; ++i) {
      const uint64_t id = ev[i].data.u64;
      uint64_t v;
      if (id == kWakeTag) {
        (void)!read(w_wake, &v, sizeof(v));
        continue;
      }
      for (const auto& s : sessions) {
        if (s->id == id) {
          (void)!read(s->seg->eventfd(), &v, sizeof(v));
          break;
        }
      }
    }
    set_sleeping_locked(0);
    poller_sleeping = false;
    idle_since = mono_ns();
  }
  if (poller) poller_active = false;
  cv.notify_all();
}

// ---- Server -----------------------------------------------------------------------------------

Server::Server(ServerOptions options, ModelRegistry& registry, ServerLogger logger)
    : impl_(std::make_unique<Impl>(std::move(options), registry, std::move(logger))) {
  Impl& d = *impl_;
  d.path = socket_path_for_endpoint(d.opt.endpoint);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  d.instance_id = (uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec)) ^ (uint64_t(getpid()) << 48);
  if (d.instance_id == 0) d.instance_id = 1;
}

Server::~Server() { stop(); }

void Server::set_reload_callback(ReloadCallback cb) {
  std::lock_guard lk(impl_->reload_mu);
  impl_->reload_cb = std::move(cb);
}

void Server::start() {
  Impl& d = *impl_;
  if (d.started) throw std::runtime_error("server already started");
  if (d.opt.workers < 1) d.opt.workers = 1;
  d.opt.max_clients = std::max<uint32_t>(1, d.opt.max_clients);
  d.opt.max_inflight_per_client = std::max<uint32_t>(1, d.opt.max_inflight_per_client);
  d.opt.max_pending_connections = std::max<uint32_t>(1, d.opt.max_pending_connections);
  d.queue_capacity = size_t{d.opt.max_clients} * NND_IPC_MAX_SLOTS;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  d.spin_ns = ncpu > 1 ? int64_t{d.opt.spin_us} * 1000 : 0;  // never spin against the client on one CPU
  d.ensure_descriptor_budget();

  d.bind_socket();
  d.io_epfd = epoll_create1(EPOLL_CLOEXEC);
  d.w_epfd = epoll_create1(EPOLL_CLOEXEC);
  d.io_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  d.w_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (d.io_epfd < 0 || d.w_epfd < 0 || d.io_wake < 0 || d.w_wake < 0) throw std::runtime_error(errno_text("epoll/eventfd"));
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u64 = kListenTag;
  epoll_ctl(d.io_epfd, EPOLL_CTL_ADD, d.listen_fd, &e);
  e.data.u64 = kWakeTag;
  epoll_ctl(d.io_epfd, EPOLL_CTL_ADD, d.io_wake, &e);
  epoll_ctl(d.w_epfd, EPOLL_CTL_ADD, d.w_wake, &e);
  {
    std::lock_guard lk(d.mu);
    d.refresh_models_locked();
  }
  d.started = true;
  d.io_thread = std::thread([&d] { d.io_main(); });
  for (unsigned w = 0; w < d.opt.workers; ++w) d.workers.emplace_back([&d, w] { d.worker_main(w); });
  d.log(kInfo, "listening on " + d.path + " with " + std::to_string(d.opt.workers) + " worker(s)");
}

void Server::stop() {
  Impl& d = *impl_;
  if (!d.started || d.stopped) return;
  d.stopped = true;
  unlink(d.path.c_str());  // no new clients from here on
  {
    std::unique_lock lk(d.mu);
    d.draining = true;
    uint64_t one = 1;
    (void)!write(d.w_wake, &one, sizeof(one));
    d.drain_cv.wait_for(lk, std::chrono::milliseconds(d.opt.drain_timeout_ms),
                        [&] { return d.running == 0 && d.scheduler.queued() == 0; });
    d.stop_workers = true;
    d.cv.notify_all();
  }
  uint64_t one = 1;
  (void)!write(d.w_wake, &one, sizeof(one));
  for (auto& t : d.workers) t.join();
  d.workers.clear();
  {
    std::lock_guard lk(d.mu);
    // Requests still in the submit rings (pushed after the workers' last look, or without a
    // wake-up) get NND_IPC_E_SHUTTING_DOWN (draining) rather than a closed connection, which the
    // client would report as a restart. One pass takes a whole ring (its budget is the ring's
    // capacity); a client that keeps refilling cannot hold stop() in a loop.
    d.ingest_locked(mono_ns());
    d.scheduler.drain([&](sched::Item* it) {
      d.finish(*static_cast<Request*>(it->user), NND_IPC_E_SHUTTING_DOWN, 0, 0, 0, false);
    });
  }
  d.io_stop.store(true);
  (void)!write(d.io_wake, &one, sizeof(one));
  d.io_thread.join();
  d.stop_reload_thread();
  {
    std::lock_guard lk(d.mu);
    d.sessions.clear();
    d.entries.clear();
    d.cached_set.reset();
  }
  for (int* fd : {&d.listen_fd, &d.io_epfd, &d.w_epfd, &d.io_wake, &d.w_wake}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  d.log(kInfo, "stopped");
}

std::vector<sched::ModelStatsSnapshot> Server::stats() const {
  std::lock_guard lk(impl_->stats_mu);
  std::vector<sched::ModelStatsSnapshot> out;
  for (const auto& [name, st] : impl_->stats_by_name) out.push_back(st->snapshot());
  return out;
}

void Server::note_reload(bool ok) {
  (ok ? impl_->c_reloads : impl_->c_reloads_failed).fetch_add(1);
}

ServerCounters Server::counters() const {
  const Impl& d = *impl_;
  ServerCounters c;
  c.sessions = d.c_sessions.load();
  c.sessions_total = d.c_total.load();
  c.sessions_refused = d.c_refused.load();
  c.sessions_corrupt = d.c_corrupt.load();
  c.requests_in_flight = d.c_inflight.load();
  c.requests_dropped = d.c_dropped.load();
  c.handshake_timeouts = d.c_timeouts.load();
  c.pending_connections = d.c_pending.load();
  c.shared_memory_bytes = d.shm_total->load();
  c.reloads = d.c_reloads.load();
  c.reloads_failed = d.c_reloads_failed.load();
  return c;
}

const std::string& Server::socket_path() const { return impl_->path; }
uint64_t Server::instance() const { return impl_->instance_id; }

}  // namespace nnd::daemon
