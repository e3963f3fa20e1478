// Resource limits with real `nnd` processes: each limit a client hits gives its own status while
// the daemon keeps serving the others; connections that never say hello are dropped and cannot
// pile up; the daemon's memory stays bounded whatever segment sizes clients ask for.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "client/nnclient.h"
#include "core/io/model_file.h"
#include "daemon/ipc/segment.h"
#include "daemon_harness.h"
#include "tests/daemon/ipc_test_client.h"

namespace {

using namespace nnd::integ;

// Slot data bytes the daemon gives every client when it serves only ball_patch at max_batch
// (daemon/ipc/server.cpp sizes a slot for the largest request of any model).
uint64_t ball_slot_bytes(uint32_t max_batch) {
  const nnd::Graph g = nnd::load_model(model_path("ball_patch.h5"));
  const size_t in = static_cast<size_t>(nnd::element_count(g.values[g.inputs[0]].shape, "in")) * 4;
  std::vector<size_t> out;
  for (auto id : g.outputs) out.push_back(static_cast<size_t>(nnd::element_count(g.values[id].shape, "out")) * 4);
  nnd::daemon::ipc::DataLayout l;
  EXPECT_TRUE(nnd::daemon::ipc::compute_layout(&in, 1, out.data(), out.size(), max_batch, &l));
  return l.total;
}

std::string ball_model(uint32_t max_batch, uint32_t delay_us) {
  return "  - name: ball\n    path: " + model_path("ball_patch.h5") + "\n    engine: jit\n    max_batch: " +
         std::to_string(max_batch) + "\n    batch_delay_us: " + std::to_string(delay_us) + "\n";
}

// Opens a handle whose 16 slots hold ball requests of 64 samples (what a batching vision
// process asks for).
nnclient_t* open_status(const std::string& path, nnclient_status* st) {
  *st = NNCLIENT_OK;
  nnclient_open_options_t o{};
  o.struct_size = sizeof o;
  o.endpoint = path.c_str();
  o.slots = 16;
  o.max_batch = 64;
  return nnclient_open_with(&o, st);
}

// Runs one ball request of `batch` samples (inputs zero) and returns its status.
nnclient_status infer_ball(nnclient_t* c, const nnclient_model_info_t& info, uint32_t batch) {
  std::vector<uint8_t> in(batch * info.inputs[0].sample_bytes);
  std::vector<std::vector<uint8_t>> out(info.num_outputs);
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    out[k].resize(batch * info.outputs[k].sample_bytes);
    outp.push_back(out[k].data());
  }
  const void* inp[1] = {in.data()};
  return nnclient_infer(c, &info, inp, batch, outp.data(), 10'000'000);
}

// A raw client submits one well-formed ball request of one sample and waits for its status.
int raw_ball_request(nnd::test::RawClient& r, uint32_t slot) {
  const nnd_ipc_model_info mi = r.model_info("ball");
  if (mi.status != NND_IPC_OK) return -100;
  r.submit(slot, "ball", mi.signature, 1, 32 * 32 * 4);
  const int got = r.wait_complete(10'000'000'000);
  return got == static_cast<int>(slot) ? r.slot(slot)->status : -200 - got;
}

size_t count_fds(pid_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// Sum of the sizes of the memfds the process holds (the shared memory it keeps alive).
uint64_t memfd_bytes(pid_t pid) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    const auto target = fs::read_symlink(it->path(), e2);
    struct stat st {};
    if (!e2 && target.string().find("memfd:") != std::string::npos && ::stat(it->path().c_str(), &st) == 0) {
      total += static_cast<uint64_t>(st.st_size);
    }
  }
  return total;
}

uint64_t rss_bytes(pid_t pid) {
  const std::string s = read_text("/proc/" + std::to_string(pid) + "/status");
  const size_t p = s.find("VmRSS:");
  return p == std::string::npos ? 0 : std::stoull(s.substr(p + 6)) * 1024;
}

// ---------------------------------------------------------------------------------------------

TEST(Limits, EachLimitHasItsOwnErrorAndOthersKeepBeingServed) {
  const uint64_t slot = ball_slot_bytes(64);
  const uint64_t seg16 = nnd::daemon::ipc::plan_segment(16, slot).segment_bytes;
  const uint64_t seg1 = nnd::daemon::ipc::plan_segment(1, slot).segment_bytes;
  // Room for one 16-slot client of 64-sample slots and half a slot more: not even one more such
  // slot, but a one-sample slot.
  const uint64_t one_sample = ball_slot_bytes(1);
  const uint64_t budget = std::max<uint64_t>(seg16 + slot / 2, 1u << 20);
  ASSERT_LT(budget, seg16 + seg1);
  ASSERT_GE(budget, seg16 + nnd::daemon::ipc::plan_segment(1, one_sample).segment_bytes);
  Daemon d("limits");
  const auto cfg = d.write_config("nnd.yaml", ball_model(64, 300'000),
                                  "  max_clients: 2\n  max_inflight_per_client: 2\n"
                                  "  max_request_bytes: " + std::to_string(3 * 32 * 32 * 4) + "\n"
                                  "  max_shared_memory_bytes: " + std::to_string(budget) + "\n"
                                  // every client is this uid: the daemon-wide limits are its own
                                  "  max_clients_per_uid: 2\n"
                                  "  max_shared_memory_bytes_per_uid: " + std::to_string(budget) + "\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();

  nnclient_status st;
  nnclient_t* a = open_status(d.socket_path(), &st);
  ASSERT_NE(a, nullptr) << nnclient_status_name(st) << " " << nnclient_last_error(nullptr);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(a, "ball", &info), NNCLIENT_OK);

  // Shared memory: a second client of 64-sample slots does not get even one, nor does a raw
  // client asking for 64 such slots; a client of one one-sample slot does.
  nnclient_t* b = open_status(d.socket_path(), &st);
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(st, NNCLIENT_E_MEMORY_LIMIT) << nnclient_status_name(st);
  EXPECT_NE(std::string(nnclient_last_error(nullptr)).find("max_shared_memory_bytes"), std::string::npos)
      << nnclient_last_error(nullptr);
  nnd::test::RawClient big, small;
  EXPECT_EQ(big.connect_and_hello(d.socket_path(), 64), NND_IPC_E_MEMORY_LIMIT);
  ASSERT_EQ(small.connect_and_hello(d.socket_path(), 1, "small", one_sample), NND_IPC_OK);

  // Clients: two sessions exist, the third is refused for that reason first.
  nnclient_t* c = open_status(d.socket_path(), &st);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(st, NNCLIENT_E_TOO_MANY_CLIENTS) << nnclient_status_name(st);

  // Request size: 4 samples are over max_request_bytes (3 samples), 3 run.
  EXPECT_EQ(infer_ball(a, info, 4), NNCLIENT_E_REQUEST_TOO_LARGE);
  EXPECT_EQ(infer_ball(a, info, 3), NNCLIENT_OK);

  // In-flight requests: requests wait 300 ms for batching, so a third one of the same client
  // finds two in the daemon and is refused at once; another client is served meanwhile.
  nnclient_request_t* r[3] = {};
  for (auto& q : r) {
    ASSERT_EQ(nnclient_request_begin(a, &info, 1, &q), NNCLIENT_OK);
    ASSERT_EQ(nnclient_submit(a, q, nullptr), NNCLIENT_OK);
  }
  EXPECT_EQ(raw_ball_request(small, 0), NND_IPC_OK);
  int ok = 0, refused = 0;
  for (auto& q : r) {
    const nnclient_status s = nnclient_wait(a, q, 10'000'000);
    ok += s == NNCLIENT_OK;
    refused += s == NNCLIENT_E_TOO_MANY_REQUESTS;
    nnclient_request_release(a, q);
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(refused, 1);

  // A freed session frees its place and its memory: a single-slot client fits again.
  small.close_all();
  nnd::test::RawClient again;
  ASSERT_TRUE(eventually([&] {
    again.close_all();
    return again.connect_and_hello(d.socket_path(), 1, "again", one_sample) == NND_IPC_OK;
  }, 5000)) << d.log();
  // Once that session is gone too (its segment closed), only A's 16 slots are held.
  again.close_all();
  ASSERT_TRUE(eventually([&] { return memfd_bytes(d.pid()) == seg16; }, 5000)) << memfd_bytes(d.pid());
  c = open_status(d.socket_path(), &st);
  EXPECT_EQ(c, nullptr);
  EXPECT_EQ(st, NNCLIENT_E_MEMORY_LIMIT) << nnclient_status_name(st);
  EXPECT_EQ(infer_ball(a, info, 1), NNCLIENT_OK);
  nnclient_close(a);
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

TEST(Limits, SilentConnectionsAreDroppedAndFdsStayBounded) {
  Daemon d("silent");
  const auto cfg = d.write_config("nnd.yaml", ball_model(8, 0),
                                  "  handshake_timeout_ms: 300\n  max_pending_connections: 4\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  const size_t base_fds = count_fds(d.pid());
  // Samples the daemon's open descriptors while the silent connections come and go.
  std::atomic<bool> sampling{true};
  std::atomic<size_t> max_fds{base_fds};
  std::thread sampler([&] {
    while (sampling.load()) {
      const size_t n = count_fds(d.pid());
      if (n > max_fds.load()) max_fds.store(n);
      ::usleep(1000);
    }
  });
  std::vector<int> silent;
  for (int i = 0; i < 12; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, d.socket_path().c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    silent.push_back(fd);
  }
  // A real client queued behind them is served once the silent ones time out.
  nnclient_status st;
  const int64_t t0 = now_us();
  nnclient_t* c = open_status(d.socket_path(), &st);
  const int64_t open_us = now_us() - t0;
  ASSERT_NE(c, nullptr) << nnclient_status_name(st) << " " << nnclient_last_error(nullptr);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  EXPECT_EQ(infer_ball(c, info, 2), NNCLIENT_OK);
  // Every silent connection is closed by the daemon (the peer reads end-of-file), and the daemon
  // never held more than max_pending_connections of them.
  for (int fd : silent) {
    char buf[8];
    EXPECT_TRUE(eventually([&] { return ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) == 0; }, 10000))
        << "a silent connection stayed open";
    ::close(fd);
  }
  sampling.store(false);
  sampler.join();
  // At most max_pending_connections accepted sockets (the client's among them) plus the client's
  // memfd and eventfd; without the cap all 13 would be held.
  EXPECT_LE(max_fds.load(), base_fds + 4 + 2);
  EXPECT_GT(max_fds.load(), base_fds);  // the sampler did see the pending connections
  EXPECT_NE(d.log().find("no hello within 300 ms"), std::string::npos) << d.log();
  std::printf("[ info ] client queued behind 12 silent connections opened in %.0f ms; daemon fds "
              "%zu at start, at most %zu\n", open_us / 1000.0, base_fds, max_fds.load());
  nnclient_close(c);
  EXPECT_TRUE(eventually([&] { return count_fds(d.pid()) <= base_fds; }, 5000))
      << count_fds(d.pid()) << " vs " << base_fds;
  EXPECT_EQ(d.stop(), 0) << d.log();
}

TEST(Limits, DaemonMemoryStaysBoundedWhenClientsAskForHugeSegments) {
  const uint64_t slot = ball_slot_bytes(64);
  const uint64_t seg64 = nnd::daemon::ipc::plan_segment(64, slot).segment_bytes;
  const uint64_t budget = 48ull << 20;
  ASSERT_LT(seg64, budget);
  // Clients asking for 64 slots each get them while the budget lasts, then whatever fits (at
  // least one slot), then nothing.
  size_t fit = 0;
  for (uint64_t left = budget;; ++fit) {
    uint32_t k = 64;
    while (k > 0 && nnd::daemon::ipc::plan_segment(k, slot).segment_bytes > left) --k;
    if (k == 0) break;
    left -= nnd::daemon::ipc::plan_segment(k, slot).segment_bytes;
  }
  Daemon d("rss");
  const auto cfg = d.write_config("nnd.yaml", ball_model(64, 0),
                                  "  max_clients: 64\n  max_shared_memory_bytes: 48M\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  // Warm up (first request faults in the engine's buffers), then take the baseline.
  {
    nnd::test::RawClient w;
    ASSERT_EQ(w.connect_and_hello(d.socket_path(), 1), NND_IPC_OK);
    ASSERT_EQ(raw_ball_request(w, 0), NND_IPC_OK);
  }
  ASSERT_TRUE(eventually([&] { return memfd_bytes(d.pid()) == 0; }, 5000));
  const uint64_t base_rss = rss_bytes(d.pid());
  uint64_t max_rss = base_rss, max_memfd = 0;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::unique_ptr<nnd::test::RawClient>> clients;
    size_t accepted = 0, refused = 0;
    for (int i = 0; i < 40; ++i) {
      auto r = std::make_unique<nnd::test::RawClient>();
      const int w = r->connect_and_hello(d.socket_path(), 64);
      if (w == NND_IPC_OK) {
        ++accepted;
        // Touch every page of the segment, then have the daemon read a request from it.
        std::memset(r->data(0), 0x3f, r->bytes() - (r->data(0) - r->base()));
        EXPECT_EQ(raw_ball_request(*r, r->welcome.slots - 1), NND_IPC_OK);
        clients.push_back(std::move(r));
      } else {
        EXPECT_EQ(w, NND_IPC_E_MEMORY_LIMIT);
        ++refused;
      }
      max_memfd = std::max(max_memfd, memfd_bytes(d.pid()));
      max_rss = std::max(max_rss, rss_bytes(d.pid()));
    }
    EXPECT_EQ(accepted, std::min<size_t>(fit, 40));
    EXPECT_EQ(refused, 40 - std::min<size_t>(fit, 40));
    clients.clear();
    ASSERT_TRUE(eventually([&] { return memfd_bytes(d.pid()) == 0; }, 5000)) << "segments not freed";
  }
  EXPECT_LE(max_memfd, budget);
  // The daemon's resident memory grows by at most the budget (segment pages it maps) plus
  // allocator slack; without the limit, 40 clients would bring 40 * seg64 bytes.
  EXPECT_LE(max_rss, base_rss + budget + (32ull << 20));
  std::printf("[ info ] 64-slot segment %.1f MiB, budget 48 MiB: %llu clients fit; daemon RSS "
              "%.1f MiB at start, at most %.1f MiB; memfds at most %.1f MiB (unbounded would be "
              "%.0f MiB)\n",
              seg64 / 1048576.0, static_cast<unsigned long long>(fit), base_rss / 1048576.0,
              max_rss / 1048576.0, max_memfd / 1048576.0, 40.0 * seg64 / 1048576.0);
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

}  // namespace
