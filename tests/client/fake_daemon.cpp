#include "fake_daemon.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <grp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

#include "ipc/nnd_ipc.h"
#include "ipc/nnd_ipc_ring.h"

namespace nnd::test {
namespace {

struct Model {
  const char* name;
  uint64_t signature;
  uint32_t version;
  std::vector<std::pair<const char*, std::pair<uint32_t, int64_t>>> inputs;   // name, dtype, len
  std::vector<std::pair<const char*, int64_t>> outputs;                       // name, len
};

std::vector<Model> models(const FakeDaemonConfig& cfg) {
  return {
      {"double", cfg.double_signature, cfg.double_version, {{"x", {0, 4}}}, {{"y", 4}}},
      {"pair", 0x2222, 1, {{"a", {1, 3}}, {"b", {0, 2}}}, {{"sum", 1}, {"copy", 2}}},
  };
}

struct Session {
  int sock = -1;
  int efd = -1;
  unsigned char* base = nullptr;
  size_t bytes = 0;
  nnd_ipc_header* hdr = nullptr;
  uint32_t slots = 0;
  uint64_t slot_data_bytes = 0;
  uint64_t slots_offset = 0, data_offset = 0;
};

void fill_info(const Model& m, const FakeDaemonConfig& cfg, nnd_ipc_model_info* info) {
  std::memset(info, 0, sizeof *info);
  info->type = NND_MSG_MODEL_INFO;
  info->status = NND_IPC_OK;
  std::snprintf(info->model, sizeof info->model, "%s", m.name);
  info->signature = m.signature;
  info->version = m.version;
  info->max_batch = cfg.max_batch;
  info->num_inputs = static_cast<uint32_t>(m.inputs.size());
  info->num_outputs = static_cast<uint32_t>(m.outputs.size());
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    std::snprintf(info->inputs[k].name, sizeof info->inputs[k].name, "%s", m.inputs[k].first);
    info->inputs[k].dtype = m.inputs[k].second.first;
    info->inputs[k].rank = 1;
    info->inputs[k].dims[0] = m.inputs[k].second.second;
  }
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    std::snprintf(info->outputs[k].name, sizeof info->outputs[k].name, "%s", m.outputs[k].first);
    info->outputs[k].dtype = 0;
    info->outputs[k].rank = 1;
    info->outputs[k].dims[0] = m.outputs[k].second;
  }
  std::snprintf(info->engine, sizeof info->engine, "fake");
}

bool hello_and_welcome(int sock, const FakeDaemonConfig& cfg, Session* s) {
  pollfd p{sock, POLLIN, 0};
  if (poll(&p, 1, 2000) <= 0) return false;
  nnd_ipc_hello hello{};
  if (recv(sock, &hello, sizeof hello, 0) != static_cast<ssize_t>(sizeof hello)) return false;
  if (hello.type != NND_MSG_HELLO || hello.magic != NND_IPC_MAGIC) return false;

  s->sock = sock;
  s->slots = cfg.slots;
  s->slot_data_bytes = cfg.slot_data_bytes;
  s->slots_offset = nnd_ipc_align(sizeof(nnd_ipc_header));
  s->data_offset = nnd_ipc_align(s->slots_offset + cfg.slots * sizeof(nnd_ipc_slot));
  s->bytes = s->data_offset + cfg.slots * cfg.slot_data_bytes;
  const int memfd = memfd_create("nnd-fake", MFD_CLOEXEC);
  if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(s->bytes)) != 0) return false;
  s->base = static_cast<unsigned char*>(
      mmap(nullptr, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0));
  if (s->base == MAP_FAILED) return false;
  s->hdr = reinterpret_cast<nnd_ipc_header*>(s->base);
  s->hdr->magic = NND_IPC_MAGIC;
  s->hdr->version = NND_IPC_VERSION;
  s->hdr->slots = cfg.slots;
  s->hdr->slot_data_bytes = cfg.slot_data_bytes;
  s->hdr->segment_bytes = s->bytes;
  s->hdr->slots_offset = s->slots_offset;
  s->hdr->data_offset = s->data_offset;
  s->hdr->daemon_sleeping = 1;  // always: the client writes the eventfd after each submit
  s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

  nnd_ipc_welcome w{};
  w.type = NND_MSG_WELCOME;
  w.status = NND_IPC_OK;
  w.version = NND_IPC_VERSION;
  w.slots = cfg.slots;
  w.segment_bytes = s->bytes;
  w.slot_data_bytes = cfg.slot_data_bytes;
  w.daemon_instance = cfg.instance;
  iovec iov{&w, sizeof w};
  alignas(cmsghdr) unsigned char ctl[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  cmsghdr* h = CMSG_FIRSTHDR(&mh);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {memfd, s->efd};
  std::memcpy(CMSG_DATA(h), fds, sizeof fds);
  const bool ok = sendmsg(sock, &mh, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof w);
  close(memfd);
  return ok;
}

void answer_control(Session* s, const FakeDaemonConfig& cfg, std::map<std::string, uint64_t>* counts) {
  union {
    nnd_ipc_model_query q;
    unsigned char raw[1024];
  } m;
  const ssize_t n = recv(s->sock, &m, sizeof m, MSG_DONTWAIT);
  if (n != static_cast<ssize_t>(sizeof m.q)) return;
  const std::vector<Model> all = models(cfg);
  m.q.model[NND_IPC_MAX_NAME - 1] = '\0';
  if (m.q.type == NND_MSG_MODEL_INFO || m.q.type == NND_MSG_LIST_MODELS) {
    nnd_ipc_model_info info{};
    info.type = NND_MSG_MODEL_INFO;
    info.status = NND_IPC_E_UNKNOWN_MODEL;
    for (size_t i = 0; i < all.size(); ++i) {
      if ((m.q.type == NND_MSG_MODEL_INFO && std::strcmp(all[i].name, m.q.model) == 0) ||
          (m.q.type == NND_MSG_LIST_MODELS && m.q.index == i)) {
        fill_info(all[i], cfg, &info);
      }
    }
    send(s->sock, &info, sizeof info, MSG_NOSIGNAL);
  } else if (m.q.type == NND_MSG_STATS) {
    nnd_ipc_model_stats st{};
    st.type = NND_MSG_STATS;
    st.status = NND_IPC_E_UNKNOWN_MODEL;
    if (m.q.index < all.size()) {
      st.status = NND_IPC_OK;
      std::snprintf(st.model, sizeof st.model, "%s", all[m.q.index].name);
      st.requests = (*counts)[all[m.q.index].name];
      st.batches = st.requests;
      st.samples = st.requests * 2;
      st.errors = 1;
      st.deadline_misses = 0;
      st.latency_p50_ns = 150000;
      st.latency_p99_ns = 900000;
      st.latency_max_ns = 2500000;
    }
    send(s->sock, &st, sizeof st, MSG_NOSIGNAL);
  } else if (m.q.type == NND_MSG_RELOAD) {
    if (cfg.reload_delay_ms > 0) usleep(cfg.reload_delay_ms * 1000);
    nnd_ipc_reply r{};
    r.type = NND_MSG_RELOAD;
    r.status = NND_IPC_OK;
    std::snprintf(r.message, sizeof r.message, "reloaded %zu models", all.size());
    send(s->sock, &r, sizeof r, MSG_NOSIGNAL);
  } else {
    // As nnd does for a message it does not know (this fake predates METRICS / DAEMON_INFO, so
    // it also plays an older daemon).
    nnd_ipc_reply r{};
    r.type = m.q.type;
    r.status = NND_IPC_E_BAD_REQUEST;
    std::snprintf(r.message, sizeof r.message, "unknown message type %u", m.q.type);
    send(s->sock, &r, sizeof r, MSG_NOSIGNAL);
  }
}

// Runs the request in `slot` and returns its status.
int32_t run(Session* s, const FakeDaemonConfig& cfg, uint32_t slot_index,
            std::map<std::string, uint64_t>* counts) {
  nnd_ipc_slot* slot =
      reinterpret_cast<nnd_ipc_slot*>(s->base + s->slots_offset) + slot_index;
  unsigned char* data = s->base + s->data_offset + slot_index * s->slot_data_bytes;
  char name[NND_IPC_MAX_NAME];
  std::memcpy(name, slot->model, sizeof name);
  if (!std::memchr(name, '\0', sizeof name)) return NND_IPC_E_BAD_REQUEST;
  const std::vector<Model> all = models(cfg);
  const Model* m = nullptr;
  for (const Model& x : all) {
    if (std::strcmp(x.name, name) == 0) m = &x;
  }
  if (!m) return NND_IPC_E_UNKNOWN_MODEL;
  if (slot->signature != m->signature) return NND_IPC_E_MODEL_CHANGED;
  const uint64_t batch = slot->batch;
  if (batch == 0 || batch > cfg.max_batch) return NND_IPC_E_SHAPE;
  // The layout of nnd_ipc.h: inputs, then outputs, each aligned to 64 bytes.
  uint64_t off = 0;
  std::vector<uint64_t> in_off, out_off;
  for (const auto& in : m->inputs) {
    off = nnd_ipc_align(off);
    in_off.push_back(off);
    off += batch * in.second.second * (in.second.first == 1 ? 1 : 4);
  }
  if (slot->input_bytes != off) return NND_IPC_E_SHAPE;
  for (const auto& out : m->outputs) {
    off = nnd_ipc_align(off);
    out_off.push_back(off);
    off += batch * out.second * 4;
  }
  if (off > s->slot_data_bytes) return NND_IPC_E_SHAPE;
  if (std::strcmp(m->name, "double") == 0) {
    const float* x = reinterpret_cast<const float*>(data + in_off[0]);
    float* y = reinterpret_cast<float*>(data + out_off[0]);
    for (uint64_t i = 0; i < batch * 4; ++i) y[i] = 2 * x[i];
  } else {
    const uint8_t* a = data + in_off[0];
    const float* b = reinterpret_cast<const float*>(data + in_off[1]);
    float* sum = reinterpret_cast<float*>(data + out_off[0]);
    float* copy = reinterpret_cast<float*>(data + out_off[1]);
    for (uint64_t n = 0; n < batch; ++n) {
      sum[n] = static_cast<float>(a[3 * n] + a[3 * n + 1] + a[3 * n + 2]) + b[2 * n] + b[2 * n + 1];
      copy[2 * n] = b[2 * n];
      copy[2 * n + 1] = b[2 * n + 1];
    }
  }
  slot->output_bytes = off - out_off[0];
  slot->served_batch = static_cast<uint32_t>(batch);
  (*counts)[m->name]++;
  return NND_IPC_OK;
}

void serve_rings(Session* s, const FakeDaemonConfig& cfg, std::map<std::string, uint64_t>* counts) {
  if (cfg.never_answer) return;
  nnd_ipc_header* h = s->hdr;
  // The fake keeps no private ring indices: it reads its own back from the segment.
  uint32_t tail = h->submit.tail;
  for (;;) {
    uint32_t index = 0;
    const nnd_ipc_pop_result popped = nnd_ipc_ring_pop_checked(&h->submit, &tail, s->slots, &index);
    if (popped == NND_IPC_POP_EMPTY || popped == NND_IPC_POP_BAD_HEAD) break;
    if (popped == NND_IPC_POP_BAD_ENTRY) continue;
    if (cfg.answer_delay_ms > 0) usleep(cfg.answer_delay_ms * 1000);
    nnd_ipc_slot* slot = reinterpret_cast<nnd_ipc_slot*>(s->base + s->slots_offset) + index;
    slot->status = run(s, cfg, index, counts);
    uint32_t head = h->complete.head;
    nnd_ipc_ring_push(&h->complete, &head, index);
    if (nnd_ipc_complete_needs_wake(h)) {
      syscall(SYS_futex, &h->complete_seq, FUTEX_WAKE, 1, nullptr, nullptr, 0);
    }
  }
}

[[noreturn]] void serve(int listen_fd, const FakeDaemonConfig& cfg) {
  std::vector<Session> sessions;
  std::map<std::string, uint64_t> counts;
  int handshakes = 0;
  for (;;) {
    std::vector<pollfd> fds{{listen_fd, POLLIN, 0}};
    for (const Session& s : sessions) {
      fds.push_back({s.sock, POLLIN, 0});
      fds.push_back({s.efd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 5);
    if (fds[0].revents & POLLIN) {
      const int sock = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      Session s;
      if (sock >= 0 && handshakes++ > 0 && cfg.rehandshake_delay_ms > 0) usleep(cfg.rehandshake_delay_ms * 1000);
      if (sock >= 0 && hello_and_welcome(sock, cfg, &s)) {
        sessions.push_back(s);
      } else if (sock >= 0) {
        close(sock);
      }
    }
    for (size_t i = 0; i < sessions.size();) {
      Session& s = sessions[i];
      const pollfd& ps = fds.size() > 1 + 2 * i ? fds[1 + 2 * i] : fds[0];
      uint64_t v;
      while (read(s.efd, &v, sizeof v) > 0) {
      }
      if (ps.fd == s.sock && (ps.revents & (POLLHUP | POLLERR))) {
        close(s.sock);
        close(s.efd);
        munmap(s.base, s.bytes);
        sessions.erase(sessions.begin() + static_cast<long>(i));
        continue;
      }
      if (ps.fd == s.sock && (ps.revents & POLLIN)) answer_control(&s, cfg, &counts);
      serve_rings(&s, cfg, &counts);
      ++i;
    }
  }
}

// bind + listen on the configured path; -1 on failure.
int listen_on(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 16) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The child becomes listen_uid/listen_gid, then binds and listens: the socket's SO_PEERCRED is
// that user's. The parent waits for its "ready" byte.
void start_as_other_user(const FakeDaemonConfig& config, pid_t* pid) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  unlink(config.socket_path.c_str());
  fflush(nullptr);
  *pid = fork();
  if (*pid < 0) throw std::runtime_error("fork failed");
  if (*pid == 0) {
    close(ready[0]);
    const gid_t g = static_cast<gid_t>(config.listen_gid);
    int fd = -1;
    if (setgroups(1, &g) == 0 && setgid(g) == 0 && setuid(static_cast<uid_t>(config.listen_uid)) == 0) {
      fd = listen_on(config.socket_path);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // after setuid, which clears it
    const char ok = fd >= 0 ? '1' : '0';
    (void)!write(ready[1], &ok, 1);
    close(ready[1]);
    if (fd < 0) _exit(1);
    serve(fd, config);
  }
  close(ready[1]);
  pollfd p{ready[0], POLLIN, 0};
  char ok = '0';
  const bool got = poll(&p, 1, 10000) == 1 && read(ready[0], &ok, 1) == 1;
  close(ready[0]);
  if (!got || ok != '1') {
    throw std::runtime_error("the fake daemon could not listen on " + config.socket_path +
                             " as uid " + std::to_string(config.listen_uid));
  }
}

}  // namespace

void FakeDaemon::start(const FakeDaemonConfig& config) {
  kill();
  if (config.listen_uid >= 0) {
    start_as_other_user(config, &pid_);
    return;
  }
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", config.socket_path.c_str());
  unlink(config.socket_path.c_str());
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 16) != 0) {
    close(fd);
    throw std::runtime_error("bind/listen failed on " + config.socket_path);
  }
  fflush(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a crashed test
    serve(fd, config);
  }
  close(fd);
}

void FakeDaemon::kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

std::string fresh_socket_path(const std::string& tag) {
  char dir[] = "/tmp/nnclient-test-XXXXXX";
  if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp failed");
  return std::string(dir) + "/" + tag + ".sock";
}

}  // namespace nnd::test
