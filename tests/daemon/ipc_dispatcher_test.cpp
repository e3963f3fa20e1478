// The dispatcher (daemon/ipc/dispatcher.h) without a socket: sessions handed to it directly,
// requests written into their segments the way a client does, a fake engine.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "daemon/ipc/dispatcher.h"
#include "ipc_test_client.h"

namespace nnd::daemon::ipc {
namespace {

// y = 2x per float; optionally waits at a gate so a test can hold a request inside the engine.
class DoublingEngine : public Engine {
 public:
  void run_views(int64_t batch, std::span<const InputView> in, std::span<const OutputView> out) override {
    {
      std::unique_lock lk(mu);
      ++entered;
      cv.notify_all();
      cv.wait(lk, [&] { return open; });
    }
    const float* x = static_cast<const float*>(in[0].data);
    float* y = static_cast<float*>(out[0].data);
    for (int64_t i = 0; i < batch * 2; ++i) y[i] = 2 * x[i];
    runs.fetch_add(1);
  }
  const Graph& graph() const override { return graph_; }
  std::string name() const override { return "doubling"; }

  void wait_entered(int n) {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return entered >= n; });
  }
  void set_open(bool o) {
    std::lock_guard lk(mu);
    open = o;
    cv.notify_all();
  }

  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int entered = 0;
  std::atomic<int> runs{0};

 private:
  Graph graph_;
};

constexpr uint64_t kSignature = 0xD15;

std::shared_ptr<ServedModel> doubling_model(DoublingEngine** engine) {
  auto m = std::make_shared<ServedModel>();
  m->settings.name = "double";
  m->settings.max_batch = 4;
  m->graph.values.resize(2);
  m->graph.inputs = {0};
  m->graph.outputs = {1};
  m->signature = kSignature;
  m->input_dtypes = {DType::kFloat32};
  m->input_sample_bytes = {2 * sizeof(float)};
  m->output_dtypes = {DType::kFloat32};
  m->output_sample_bytes = {2 * sizeof(float)};
  auto e = std::make_unique<DoublingEngine>();
  *engine = e.get();
  m->engine = std::move(e);
  return m;
}

struct DispatcherFixture {
  ServerOptions opt;
  ModelRegistry registry;
  std::vector<std::string> logs;
  std::mutex log_mu;
  Log log{[this](nnd::daemon::LogLevel, const std::string& m) {
    std::lock_guard lk(log_mu);
    logs.push_back(m);
  }};
  Counters counters;
  sched::ModelStatsTable stats;
  DoublingEngine* engine = nullptr;
  std::unique_ptr<Dispatcher> dispatcher;
  std::vector<int> peers;

  explicit DispatcherFixture(bool start = true) {
    auto set = std::make_shared<ModelSet>();
    set->models.push_back(doubling_model(&engine));
    registry.publish(set);
    opt.workers = 1;
    opt.max_clients = 4;
    dispatcher = std::make_unique<Dispatcher>(opt, registry, log, counters, stats);
    if (start) dispatcher->start(0, 2);
  }
  ~DispatcherFixture() {
    dispatcher->drain_and_stop(1000);
    dispatcher->clear();
    for (int p : peers) close(p);
  }

  std::shared_ptr<Session> connect(uint64_t id) {
    auto s = std::make_shared<Session>();
    s->id = id;
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    s->sock = sv[0];
    peers.push_back(sv[1]);
    s->name = "session " + std::to_string(id);
    std::string err;
    s->seg = Segment::create(plan_segment(4, 256), "nnd-test", &err);
    EXPECT_TRUE(s->seg) << err;
    s->slots = 4;
    dispatcher->add_session(s);
    return s;
  }
};

// The client's side of a session's segment.
struct ClientView {
  Session& s;
  uint32_t head = 0, tail = 0;

  void submit(uint32_t slot, const char* model, uint32_t batch, uint64_t input_bytes, float seed) {
    nnd_ipc_slot* sl = s.seg->slot(slot);
    std::memset(sl->model, 0, sizeof(sl->model));
    std::strncpy(sl->model, model, sizeof(sl->model) - 1);
    sl->signature = kSignature;
    sl->batch = batch;
    sl->deadline_ns = 0;
    sl->input_bytes = input_bytes;
    sl->status = -1;
    float* x = reinterpret_cast<float*>(s.seg->data(slot));
    for (uint32_t i = 0; i < 2 * batch; ++i) x[i] = seed + static_cast<float>(i);
    push(slot);
  }
  void push(uint32_t slot) {
    nnd_ipc_header* h = s.seg->header();
    h->submit.entries[head % NND_IPC_MAX_SLOTS] = slot;
    nnd_ipc_store_release(&h->submit.head, ++head);
    nnd_ipc_fence_seq_cst();
    if (nnd_ipc_load_relaxed(&h->daemon_sleeping)) {
      const uint64_t one = 1;
      (void)!write(s.seg->eventfd(), &one, sizeof(one));
    }
  }
  // The next completed slot, or -1 after 5 s.
  int wait_complete() {
    nnd_ipc_header* h = s.seg->header();
    const int64_t end = test::now_ns() + 5'000'000'000;
    while (nnd_ipc_load_acquire(&h->complete.head) == tail) {
      if (test::now_ns() > end) return -1;
      usleep(20);
    }
    const uint32_t slot = h->complete.entries[tail % NND_IPC_MAX_SLOTS];
    nnd_ipc_store_release(&h->complete.tail, ++tail);
    return static_cast<int>(slot);
  }
  const nnd_ipc_slot& slot(uint32_t i) const { return *s.seg->slot(i); }
  const float* output(uint32_t i, uint32_t batch) const {
    return reinterpret_cast<const float*>(s.seg->data(i) + nnd_ipc_align(2 * sizeof(float) * batch));
  }
};

TEST(IpcDispatcher, RunsAValidRequestAndAnswersIt) {
  DispatcherFixture f;
  auto s = f.connect(1);
  ClientView c{*s};
  c.submit(2, "double", 3, 6 * sizeof(float), 1.0f);
  ASSERT_EQ(c.wait_complete(), 2);
  EXPECT_EQ(c.slot(2).status, NND_IPC_OK);
  EXPECT_EQ(c.slot(2).served_batch, 3u);
  EXPECT_EQ(c.slot(2).output_bytes, 6 * sizeof(float));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(c.output(2, 3)[i], 2 * (1.0f + static_cast<float>(i)));
  EXPECT_EQ(f.engine->runs.load(), 1);
  EXPECT_EQ(f.counters.requests_in_flight.load(), 0u);
  EXPECT_EQ(f.stats.for_model("double")->snapshot().requests, 1u);
}

TEST(IpcDispatcher, InvalidRequestIsAnsweredWithoutRunning) {
  DispatcherFixture f;
  auto s = f.connect(1);
  ClientView c{*s};
  c.submit(0, "nope", 1, 2 * sizeof(float), 0.0f);
  ASSERT_EQ(c.wait_complete(), 0);
  EXPECT_EQ(c.slot(0).status, NND_IPC_E_UNKNOWN_MODEL);
  c.submit(1, "double", 5, 10 * sizeof(float), 0.0f);  // over max_batch
  ASSERT_EQ(c.wait_complete(), 1);
  EXPECT_EQ(c.slot(1).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(f.engine->runs.load(), 0);
}

TEST(IpcDispatcher, CorruptSubmitRingEndsOnlyThatSession) {
  DispatcherFixture f;
  auto bad = f.connect(1);
  auto good = f.connect(2);
  nnd_ipc_store_release(&bad->seg->header()->submit.head, 1000);  // more than a ring ahead
  const uint64_t one = 1;
  (void)!write(bad->seg->eventfd(), &one, sizeof(one));
  ClientView c{*good};
  c.submit(0, "double", 1, 2 * sizeof(float), 0.0f);
  ASSERT_EQ(c.wait_complete(), 0);
  EXPECT_EQ(c.slot(0).status, NND_IPC_OK);
  for (int i = 0; i < 5000 && !bad->corrupt.load(); ++i) usleep(1000);
  EXPECT_TRUE(bad->corrupt.load());
  EXPECT_EQ(f.counters.sessions_corrupt.load(), 1u);
  EXPECT_FALSE(good->corrupt.load());
}

TEST(IpcDispatcher, RequestOfAClientThatLeftIsDroppedWithoutAnAnswer) {
  DispatcherFixture f;
  f.engine->set_open(false);
  auto s = f.connect(1);
  ClientView c{*s};
  c.submit(0, "double", 1, 2 * sizeof(float), 0.0f);
  f.engine->wait_entered(1);  // the request is inside the engine
  f.dispatcher->remove_session(s);
  EXPECT_TRUE(s->dead.load());
  f.engine->set_open(true);
  for (int i = 0; i < 5000 && f.counters.requests_in_flight.load() != 0; ++i) usleep(1000);
  EXPECT_EQ(f.counters.requests_in_flight.load(), 0u);
  EXPECT_EQ(f.counters.requests_dropped.load(), 1u);
  EXPECT_EQ(nnd_ipc_load_acquire(&s->seg->header()->complete.head), 0u);  // no answer written
}

TEST(IpcDispatcher, DrainAnswersRequestsLeftInTheRingShuttingDown) {
  DispatcherFixture f(/*start=*/false);  // no worker ever looks at the ring
  auto s = f.connect(1);
  ClientView c{*s};
  c.submit(3, "double", 1, 2 * sizeof(float), 0.0f);
  f.dispatcher->drain_and_stop(0);
  ASSERT_EQ(c.wait_complete(), 3);
  EXPECT_EQ(c.slot(3).status, NND_IPC_E_SHUTTING_DOWN);
}

}  // namespace
}  // namespace nnd::daemon::ipc
