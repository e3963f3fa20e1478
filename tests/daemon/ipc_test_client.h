// A raw test client speaking the wire protocol of ipc/nnd_ipc.h directly (no libnnclient), for
// the in-process server tests. Deliberately simple: one thread per client, polls for completions.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "ipc/nnd_ipc.h"

namespace nnd::test {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

class RawClient {
 public:
  RawClient() = default;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() { close_all(); }

  // Connects and sends the hello; returns the welcome status (or -1 on a system error). By
  // default the slots are as large as the daemon grants (the largest request of any model), so
  // a test can send any batch a model takes.
  int connect_and_hello(const std::string& path, uint32_t requested_slots = 0, const char* name = "test",
                        uint64_t slot_bytes = UINT64_MAX) {
    sock_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock_ < 0) return -1;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    if (connect(sock_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return -1;
    nnd_ipc_hello h{};
    h.type = NND_MSG_HELLO;
    h.magic = NND_IPC_MAGIC;
    h.version = NND_IPC_VERSION;
    h.requested_slots = requested_slots;
    h.requested_slot_bytes = slot_bytes;
    std::strncpy(h.client_name, name, sizeof(h.client_name) - 1);
    if (send(sock_, &h, sizeof(h), MSG_NOSIGNAL) != sizeof(h)) return -1;
    iovec iov{&welcome, sizeof(welcome)};
    alignas(cmsghdr) char cbuf[CMSG_SPACE(2 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    const ssize_t n = recvmsg(sock_, &msg, MSG_CMSG_CLOEXEC);
    if (n != sizeof(welcome)) return -1;
    if (welcome.status != NND_IPC_OK) return welcome.status;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(2 * sizeof(int))) return -1;
    int fds[2];
    std::memcpy(fds, CMSG_DATA(c), sizeof(fds));
    memfd_ = fds[0];
    efd_ = fds[1];
    bytes_ = welcome.segment_bytes;
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    if (p == MAP_FAILED) return -1;
    base_ = static_cast<uint8_t*>(p);
    // Cache the layout: a hostile test scribbles over the header later.
    slots_offset_ = header()->slots_offset;
    data_offset_ = header()->data_offset;
    slot_data_bytes_ = header()->slot_data_bytes;
    return NND_IPC_OK;
  }

  nnd_ipc_header* header() const { return reinterpret_cast<nnd_ipc_header*>(base_); }
  nnd_ipc_slot* slot(uint32_t i) const {
    return reinterpret_cast<nnd_ipc_slot*>(base_ + slots_offset_) + i;
  }
  uint8_t* data(uint32_t i) const { return base_ + data_offset_ + i * slot_data_bytes_; }
  uint8_t* base() const { return base_; }
  size_t bytes() const { return bytes_; }
  int sock() const { return sock_; }

  template <typename Reply, typename Query>
  bool control(const Query& q, Reply* r) {
    if (send(sock_, &q, sizeof(q), MSG_NOSIGNAL) != sizeof(q)) return false;
    return recv(sock_, r, sizeof(*r), 0) == static_cast<ssize_t>(sizeof(*r));
  }
  nnd_ipc_model_info model_info(const char* name) {
    nnd_ipc_model_query q{};
    q.type = NND_MSG_MODEL_INFO;
    std::strncpy(q.model, name, sizeof(q.model) - 1);
    nnd_ipc_model_info info{};
    if (!control(q, &info)) info.status = -1;
    return info;
  }

  // Fills the request fields of slot `s` (the data area is the caller's) and pushes it.
  void submit(uint32_t s, const char* model, uint64_t signature, uint32_t batch, uint64_t input_bytes,
              int64_t deadline_ns = 0, uint32_t seq = 0) {
    prepare(s, model, signature, batch, input_bytes, deadline_ns, seq);
    push_raw(s);
  }
  // Writes a slot's request fields without submitting it.
  void prepare(uint32_t s, const char* model, uint64_t signature, uint32_t batch,
               uint64_t input_bytes, int64_t deadline_ns = 0, uint32_t seq = 0) {
    nnd_ipc_slot* sl = slot(s);
    std::memset(sl->model, 0, sizeof(sl->model));
    std::strncpy(sl->model, model, sizeof(sl->model) - 1);
    sl->signature = signature;
    sl->batch = batch;
    sl->sequence = seq;
    sl->deadline_ns = deadline_ns;
    sl->input_bytes = input_bytes;
    sl->status = -1;
  }
  void push_raw(uint32_t s) { push_raw_many({s}); }
  // Pushes several slot indices with one head update: the daemon sees them all at once.
  void push_raw_many(std::initializer_list<uint32_t> slots) {
    nnd_ipc_header* h = header();
    for (uint32_t s : slots) {
      h->submit.entries[head_ % NND_IPC_MAX_SLOTS] = s;
      ++head_;
    }
    nnd_ipc_store_release(&h->submit.head, head_);
    nnd_ipc_fence_seq_cst();
    if (nnd_ipc_load_relaxed(&h->daemon_sleeping)) {
      uint64_t one = 1;
      (void)!write(efd_, &one, sizeof(one));
      ++wakes;
    }
  }
  // Pushes slot `s` without waking a sleeping daemon (as a client killed between the two steps).
  void push_silently(uint32_t s) {
    nnd_ipc_header* h = header();
    h->submit.entries[head_ % NND_IPC_MAX_SLOTS] = s;
    ++head_;
    nnd_ipc_store_release(&h->submit.head, head_);
  }
  void poke() {
    uint64_t one = 1;
    (void)!write(efd_, &one, sizeof(one));
  }
  // Waits (polling) for the next completion; returns the slot index or -1 on timeout.
  int wait_complete(int64_t timeout_ns = 5'000'000'000) {
    nnd_ipc_header* h = header();
    const int64_t end = now_ns() + timeout_ns;
    while (nnd_ipc_load_acquire(&h->complete.head) == tail_) {
      if (now_ns() > end) return -1;
      usleep(20);
    }
    const uint32_t s = h->complete.entries[tail_ % NND_IPC_MAX_SLOTS];
    ++tail_;
    nnd_ipc_store_release(&h->complete.tail, tail_);
    return static_cast<int>(s);
  }

  void close_all() {
    if (base_) munmap(base_, bytes_);
    base_ = nullptr;
    for (int* fd : {&sock_, &memfd_, &efd_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  nnd_ipc_welcome welcome{};
  int wakes = 0;

 private:
  int sock_ = -1, memfd_ = -1, efd_ = -1;
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  uint64_t slots_offset_ = 0, data_offset_ = 0, slot_data_bytes_ = 0;
  uint32_t head_ = 0, tail_ = 0;
};

}  // namespace nnd::test
