// The control plane (daemon/ipc/control_plane.h) on its own listen socket with a dispatcher
// behind it, its access rules, and the reload queue (daemon/ipc/reload_queue.h).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "daemon/ipc/control_plane.h"
#include "ipc_test_client.h"

namespace nnd::daemon::ipc {
namespace {

std::shared_ptr<ServedModel> model(const std::string& name, uint32_t max_batch, size_t in_bytes, size_t out_bytes) {
  auto m = std::make_shared<ServedModel>();
  m->settings.name = name;
  m->settings.max_batch = max_batch;
  m->graph.values.resize(2);
  m->graph.values[0].shape = {static_cast<int64_t>(in_bytes / sizeof(float))};
  m->graph.values[1].shape = {static_cast<int64_t>(out_bytes / sizeof(float))};
  m->graph.inputs = {0};
  m->graph.outputs = {1};
  m->graph.input_names = {"x"};
  m->graph.output_names = {"y"};
  m->signature = 77;
  m->input_dtypes = {DType::kFloat32};
  m->input_sample_bytes = {in_bytes};
  m->output_dtypes = {DType::kFloat32};
  m->output_sample_bytes = {out_bytes};
  return m;
}

TEST(IpcControlAccess, WhoMayConnectAndWhoMayControl) {
  ServerOptions opt;
  const uid_t me = geteuid();
  const uid_t other = me + 4242;
  std::string why;
  EXPECT_TRUE(peer_allowed(opt, {1, me, 100}, -1, &why));
  EXPECT_TRUE(peer_allowed(opt, {1, 0, 0}, -1, &why));
  EXPECT_FALSE(peer_allowed(opt, {1, other, 100}, -1, &why));
  EXPECT_NE(why.find("is not allowed"), std::string::npos);
  EXPECT_FALSE(peer_allowed(opt, {1, static_cast<uid_t>(-1), 0}, -1, &why));
  EXPECT_EQ(why, "peer credentials unavailable");
  opt.allowed_uid = other;
  EXPECT_TRUE(peer_allowed(opt, {1, other, 100}, -1, &why));
  opt.allowed_uid.reset();
  opt.allowed_gid = 555;
  EXPECT_TRUE(peer_allowed(opt, {1, other, 555}, -1, &why));  // primary group
  opt.allow_root = false;
  opt.allow_own_uid = false;
  EXPECT_FALSE(peer_allowed(opt, {1, 0, 0}, -1, &why));
  EXPECT_FALSE(peer_allowed(opt, {1, me, 100}, -1, &why));

  ServerOptions ctl;
  EXPECT_TRUE(may_control(ctl, {1, 0, 0}, -1));
  EXPECT_TRUE(may_control(ctl, {1, me, 100}, -1));
  EXPECT_FALSE(may_control(ctl, {1, other, 555}, -1));
  ctl.control_gid = 555;
  EXPECT_TRUE(may_control(ctl, {1, other, 555}, -1));
  EXPECT_FALSE(may_control(ctl, {1, static_cast<uid_t>(-1), 555}, -1));
}

TEST(IpcControlAccess, RequestSizesOfOneSampleAndOfTheLargestBatch) {
  ModelSet set;
  EXPECT_EQ(request_sizes_for(set).one_sample, 0u);
  EXPECT_EQ(request_sizes_for(set).largest, 0u);
  set.models.push_back(model("a", 4, 12, 8));    // one: 12 (to 64) + 8 -> 128; 4: 48 + 32 -> 128
  set.models.push_back(model("b", 16, 40, 4));   // one: 40 + 4 -> 128; 16: 640 + 64 -> 704
  EXPECT_EQ(request_sizes_for(set).one_sample, 128u);
  EXPECT_EQ(request_sizes_for(set).largest, 704u);
}

struct ControlFixture {
  ServerOptions opt;
  ModelRegistry registry;
  std::mutex log_mu;
  std::vector<std::string> logs;
  Log log{[this](nnd::daemon::LogLevel, const std::string& m) {
    std::lock_guard lk(log_mu);
    logs.push_back(m);
  }};
  Counters counters;
  sched::ModelStatsTable stats;
  std::unique_ptr<Dispatcher> dispatcher;
  std::unique_ptr<ControlPlane> control;
  std::string path = "/tmp/nnd-test-" + std::to_string(getpid()) + "-control.sock";
  int listen_fd = -1;

  explicit ControlFixture(uint32_t handshake_timeout_ms = 2000) {
    auto set = std::make_shared<ModelSet>();
    set->models.push_back(model("m", 2, 16, 8));
    registry.publish(set);
    opt.workers = 1;
    opt.handshake_timeout_ms = handshake_timeout_ms;
    dispatcher = std::make_unique<Dispatcher>(opt, registry, log, counters, stats);
    dispatcher->start(0, 2);
    control = std::make_unique<ControlPlane>(opt, registry, log, counters, stats, *dispatcher, 99);
    unlink(path.c_str());
    listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    EXPECT_EQ(bind(listen_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(listen_fd, 16), 0);
    control->start(listen_fd);
  }
  ~ControlFixture() {
    dispatcher->drain_and_stop(1000);
    control->stop();
    dispatcher->clear();
    close(listen_fd);
    unlink(path.c_str());
  }
};

template <typename F>
bool eventually(F f) {
  for (int i = 0; i < 5000; ++i) {
    if (f()) return true;
    usleep(1000);
  }
  return f();
}

TEST(IpcControlPlane, HandshakeThenModelQueries) {
  ControlFixture f;
  test::RawClient c;
  ASSERT_EQ(c.connect_and_hello(f.path, 3), NND_IPC_OK);
  EXPECT_EQ(c.welcome.slots, 3u);
  EXPECT_EQ(c.welcome.daemon_instance, 99u);
  EXPECT_EQ(c.welcome.slot_data_bytes, 128u);  // inputs 2 * 16 (to 64), outputs 2 * 8 -> 128
  // Counted right after the welcome is sent.
  EXPECT_TRUE(eventually([&] { return f.counters.sessions.load() == 1; }));
  EXPECT_EQ(f.counters.shared_memory_bytes->load(), c.welcome.segment_bytes);

  const nnd_ipc_model_info info = c.model_info("m");
  EXPECT_EQ(info.status, NND_IPC_OK);
  EXPECT_EQ(info.max_batch, 2u);
  EXPECT_EQ(info.signature, 77u);
  EXPECT_EQ(c.model_info("other").status, NND_IPC_E_UNKNOWN_MODEL);

  nnd_ipc_model_query q{};
  q.type = NND_MSG_DAEMON_INFO;
  nnd_ipc_daemon_info di{};
  ASSERT_TRUE(c.control(q, &di));
  EXPECT_EQ(di.clients, 1u);
  EXPECT_EQ(di.models, 1u);

  c.close_all();  // hang-up: the session ends and its memory is returned
  EXPECT_TRUE(eventually([&] { return f.counters.sessions.load() == 0; }));
  EXPECT_TRUE(eventually([&] { return f.counters.shared_memory_bytes->load() == 0; }));
}

TEST(IpcControlPlane, ProtocolMismatchIsRefused) {
  ControlFixture f;
  const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, f.path.c_str(), sizeof(a.sun_path) - 1);
  ASSERT_EQ(connect(sock, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  nnd_ipc_hello h{};
  h.type = NND_MSG_HELLO;
  h.magic = NND_IPC_MAGIC;
  h.version = NND_IPC_VERSION + 1;
  ASSERT_EQ(send(sock, &h, sizeof(h), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(h)));
  nnd_ipc_welcome w{};
  ASSERT_EQ(recv(sock, &w, sizeof(w), 0), static_cast<ssize_t>(sizeof(w)));
  EXPECT_EQ(w.status, NND_IPC_E_BAD_REQUEST);
  EXPECT_NE(std::string(w.message).find("protocol mismatch"), std::string::npos);
  EXPECT_EQ(f.counters.sessions_refused.load(), 1u);
  close(sock);
}

TEST(IpcControlPlane, SilentConnectionIsClosedAtItsDeadline) {
  ControlFixture f(/*handshake_timeout_ms=*/20);
  const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, f.path.c_str(), sizeof(a.sun_path) - 1);
  ASSERT_EQ(connect(sock, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  char buf[8];
  EXPECT_EQ(recv(sock, buf, sizeof(buf), 0), 0);  // blocks until the daemon hangs up
  EXPECT_EQ(f.counters.handshake_timeouts.load(), 1u);
  EXPECT_EQ(f.counters.pending_connections.load(), 0u);
  close(sock);
}

// ---- reload queue -------------------------------------------------------------------------------

struct ReloadPeer {
  std::shared_ptr<Session> s = std::make_shared<Session>();
  int peer = -1;
  ReloadPeer() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    s->sock = sv[0];
    peer = sv[1];
    s->name = "reloader";
  }
  ~ReloadPeer() { close(peer); }
  // The next reply (blocking), or status -1.
  nnd_ipc_reply reply() {
    nnd_ipc_reply r{};
    if (recv(peer, &r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r))) r.status = -1;
    return r;
  }
  bool no_more_replies() {
    nnd_ipc_reply r{};
    return recv(peer, &r, sizeof(r), MSG_DONTWAIT) < 0;
  }
};

TEST(IpcReloadQueue, RequestsWaitingDuringARunShareTheNextRun) {
  Log log{nullptr};
  ReloadQueue q(log);
  std::mutex mu;
  std::condition_variable cv;
  int runs = 0;
  bool gate_open = false;
  q.set_callback([&] {
    std::unique_lock lk(mu);
    const int run = ++runs;
    cv.notify_all();
    if (run == 1) cv.wait(lk, [&] { return gate_open; });
    return ReloadResult{true, "run " + std::to_string(run)};
  });
  ReloadPeer a, b;
  q.ask(a.s);
  {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return runs == 1; });  // the first run is in progress
  }
  for (int i = 0; i < 3; ++i) q.ask(a.s);
  q.ask(b.s);
  {
    std::lock_guard lk(mu);
    gate_open = true;
    cv.notify_all();
  }
  EXPECT_STREQ(a.reply().message, "run 1");
  for (int i = 0; i < 3; ++i) EXPECT_STREQ(a.reply().message, "run 2");
  const nnd_ipc_reply rb = b.reply();
  EXPECT_EQ(rb.status, NND_IPC_OK);
  EXPECT_STREQ(rb.message, "run 2");
  q.stop();
  EXPECT_EQ(runs, 2);  // five messages, two runs
  EXPECT_TRUE(a.no_more_replies());
}

TEST(IpcReloadQueue, WithoutCallbackOrAfterStopItAnswersAtOnce) {
  Log log{nullptr};
  ReloadQueue q(log);
  ReloadPeer a;
  q.ask(a.s);
  EXPECT_EQ(a.reply().status, NND_IPC_E_INTERNAL);
  q.set_callback([] { return ReloadResult{true, "ok"}; });
  q.stop();
  q.ask(a.s);
  EXPECT_EQ(a.reply().status, NND_IPC_E_SHUTTING_DOWN);
}

TEST(IpcReloadQueue, FailingCallbackIsReportedToTheClient) {
  Log log{nullptr};
  ReloadQueue q(log);
  q.set_callback([]() -> ReloadResult { throw std::runtime_error("config is broken"); });
  ReloadPeer a;
  q.ask(a.s);
  const nnd_ipc_reply r = a.reply();
  EXPECT_EQ(r.status, NND_IPC_E_INTERNAL);
  EXPECT_STREQ(r.message, "config is broken");
}

// A reload that fails on the config or a model is RELOAD_FAILED, not the daemon's INTERNAL.
TEST(IpcReloadQueue, AFailedReloadIsReloadFailed) {
  Log log{nullptr};
  ReloadQueue q(log);
  q.set_callback([] { return ReloadResult{false, "nnd.yaml:3:5: models[0].path: model file not found"}; });
  ReloadPeer a;
  q.ask(a.s);
  const nnd_ipc_reply r = a.reply();
  EXPECT_EQ(r.status, NND_IPC_E_RELOAD_FAILED);
  EXPECT_STREQ(r.message, "nnd.yaml:3:5: models[0].path: model file not found");
}

}  // namespace
}  // namespace nnd::daemon::ipc
