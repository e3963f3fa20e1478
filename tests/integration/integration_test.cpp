// Multi-process integration tests: real `nnd` processes on private endpoints, real client
// processes (fork, one nnclient handle each), results checked against the same engine run
// in-process (what `nnrun` does: load_model + make_engine + Engine::run).
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <span>
#include <thread>

#include "client/nnclient.h"
#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/io/npy.h"
#include "daemon_harness.h"
#include "tests/daemon/ipc_test_client.h"

namespace {

using namespace nnd::integ;

// A model's inputs (one float32 input) for a pool of samples, and the in-process engine's
// outputs for them, computed once with batch 1 per sample and once as one batch of all samples.
struct Expected {
  size_t in_floats = 0;                  // per sample
  std::vector<size_t> out_floats;        // per sample, per output
  std::vector<float> inputs;             // n * in_floats
  std::vector<std::vector<float>> single;   // [output][n * out_floats]: batch 1 per sample
  std::vector<std::vector<float>> batched;  // same, from one run of batch n
  size_t n = 0;
  std::string engine_name;
};

Expected compute_expected(const std::string& path, nnd::EngineKind kind, size_t n, uint32_t seed,
                          nnd::MathMode math = nnd::MathMode::kExact) {
  Expected e;
  nnd::Graph g = nnd::load_model(path);
  nnd::EngineOptions o;
  o.engine = kind;
  o.math = math;
  o.isa_cache = shared_isa_cache();  // the daemons' choice of ISA (daemon_harness.h)
  auto engine = nnd::make_engine(g, o);
  e.engine_name = engine->name();
  e.n = n;
  e.in_floats = static_cast<size_t>(nnd::element_count(g.values[g.inputs[0]].shape, "input"));
  for (auto id : g.outputs) {
    e.out_floats.push_back(static_cast<size_t>(nnd::element_count(g.values[id].shape, "output")));
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  e.inputs.resize(n * e.in_floats);
  for (float& x : e.inputs) x = d(rng);
  e.single.resize(e.out_floats.size());
  e.batched.resize(e.out_floats.size());
  for (size_t k = 0; k < e.out_floats.size(); ++k) {
    e.single[k].resize(n * e.out_floats[k]);
    e.batched[k].resize(n * e.out_floats[k]);
  }
  for (size_t i = 0; i < n; ++i) {
    nnd::InputView v{nnd::DType::kFloat32, e.inputs.data() + i * e.in_floats};
    std::vector<float*> outs;
    for (size_t k = 0; k < e.out_floats.size(); ++k) {
      outs.push_back(e.single[k].data() + i * e.out_floats[k]);
    }
    engine->run(1, std::span<const nnd::InputView>(&v, 1), outs);
  }
  nnd::InputView v{nnd::DType::kFloat32, e.inputs.data()};
  std::vector<float*> outs;
  for (auto& b : e.batched) outs.push_back(b.data());
  engine->run(static_cast<int64_t>(n), std::span<const nnd::InputView>(&v, 1), outs);
  return e;
}

// Largest |a-b| between the single and batched expected outputs (0: batching is bit-exact).
double batch_vs_single(const Expected& e) {
  double m = 0;
  for (size_t k = 0; k < e.single.size(); ++k) {
    for (size_t i = 0; i < e.single[k].size(); ++i) {
      m = std::max(m, std::fabs(double(e.single[k][i]) - double(e.batched[k][i])));
    }
  }
  return m;
}

// Runs samples [first, first+batch) (mod n) through `info` with nnclient_infer and compares each
// output sample bit for bit with e.single. Returns "" or what differed.
std::string check_infer(nnclient_t* c, const nnclient_model_info_t& info, const Expected& e,
                        size_t first, uint32_t batch, nnclient_status* st_out = nullptr,
                        uint64_t timeout_us = 20'000'000) {
  std::vector<float> in(batch * e.in_floats);
  for (uint32_t b = 0; b < batch; ++b) {
    const size_t s = (first + b) % e.n;
    std::memcpy(in.data() + b * e.in_floats, e.inputs.data() + s * e.in_floats,
                e.in_floats * sizeof(float));
  }
  std::vector<std::vector<float>> out(e.out_floats.size());
  std::vector<void*> outp;
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].assign(batch * e.out_floats[k], std::nanf(""));
    outp.push_back(out[k].data());
  }
  const void* inp[1] = {in.data()};
  const nnclient_status st = nnclient_infer(c, &info, inp, batch, outp.data(), timeout_us);
  if (st_out) *st_out = st;
  if (st != NNCLIENT_OK) {
    return std::string("infer: ") + nnclient_status_name(st) + " " + nnclient_last_error(c);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    for (uint32_t b = 0; b < batch; ++b) {
      const size_t s = (first + b) % e.n;
      if (std::memcmp(out[k].data() + b * e.out_floats[k],
                      e.single[k].data() + s * e.out_floats[k],
                      e.out_floats[k] * sizeof(float)) != 0) {
        return "output " + std::to_string(k) + " of sample " + std::to_string(s) +
               " (batch " + std::to_string(batch) + ") differs from the in-process engine";
      }
    }
  }
  return "";
}

nnclient_t* open_or_report(const std::string& path, std::string* why) {
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(path.c_str(), &st);
  if (!c) *why = std::string("open: ") + nnclient_status_name(st) + " " + nnclient_last_error(nullptr);
  return c;
}

std::string ball_yaml(const std::string& extra = "", const std::string& engine = "jit") {
  return "  - name: ball\n    path: " + model_path("ball_patch.h5") +
         "\n    engine: " + engine + "\n    max_batch: 64\n" + extra;
}

// ---------------------------------------------------------------------------------------------
// 1. Several client processes at once get exactly the in-process engine's results.

TEST(Integration, ConcurrentClientsMatchInProcessEngine) {
  const Expected ball = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kJit, 64, 1);
  const Expected fb =
      compute_expected(model_path("field_boundary.h5"), nnd::EngineKind::kReference, 16, 2);
  // Whether running a batch changes numbers relative to batch 1 (the daemon batches requests of
  // several clients together): the comparison below is bit for bit against batch-1 results, so
  // this must be exactly 0 for the engines used.
  EXPECT_EQ(batch_vs_single(ball), 0.0) << ball.engine_name << " depends on the batch size";
  EXPECT_EQ(batch_vs_single(fb), 0.0) << fb.engine_name << " depends on the batch size";

  Daemon d("multi");
  const auto cfg = d.write_config(
      "nnd.yaml",
      ball_yaml("    batch_delay_us: 500\n") + "  - name: fb\n    path: " +
          model_path("field_boundary.h5") +
          "\n    engine: reference\n    max_batch: 8\n    batch_delay_us: 500\n",
      "  workers: 2\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();

  constexpr int kClients = 4;
  std::vector<Child> kids;
  for (int i = 0; i < kClients; ++i) {
    kids.push_back(fork_child([&, i](const ChildIo& io) {
      std::string why;
      nnclient_t* c = open_or_report(d.socket_path(), &why);
      if (!c) return io.report(why), 1;
      nnclient_model_info_t bi{}, fi{};
      if (nnclient_model_info(c, "ball", &bi) != NNCLIENT_OK ||
          nnclient_model_info(c, "fb", &fi) != NNCLIENT_OK) {
        return io.report("model_info failed"), 1;
      }
      std::mt19937 rng(100 + i);
      for (int r = 0; r < 150; ++r) {
        const bool use_ball = r % 3 != 2;
        const Expected& e = use_ball ? ball : fb;
        const std::string err =
            check_infer(c, use_ball ? bi : fi, e, rng() % e.n, 1 + rng() % (use_ball ? 8 : 3));
        if (!err.empty()) return io.report("client " + std::to_string(i) + " request " +
                                           std::to_string(r) + ": " + err), 1;
      }
      nnclient_close(c);
      return 0;
    }));
  }
  for (auto& k : kids) {
    const ChildResult r = collect(k, 60000);
    EXPECT_TRUE(r.exited && r.code == 0) << r.text;
  }
  // The requests really were combined into batches (so batching was exercised).
  std::string why;
  nnclient_t* c = open_or_report(d.socket_path(), &why);
  ASSERT_NE(c, nullptr) << why;
  uint64_t requests = 0, batches = 0;
  for (uint32_t i = 0;; ++i) {
    nnclient_model_stats_t s{};
    if (nnclient_stats(c, i, &s) != NNCLIENT_OK) break;
    requests += s.requests;
    batches += s.batches;
    EXPECT_EQ(s.errors, 0u) << s.name;
  }
  nnclient_close(c);
  EXPECT_EQ(requests, uint64_t{kClients} * 150);
  EXPECT_LT(batches, requests) << "no two requests were ever batched together";
  std::printf("[ info ] %llu requests in %llu batches; engines %s / %s; bit-exact\n",
              static_cast<unsigned long long>(requests), static_cast<unsigned long long>(batches),
              ball.engine_name.c_str(), fb.engine_name.c_str());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 2b. An ONNX model (a PyTorch export, NCHW input) is served like a Keras one: the daemon loads it
// by content, and clients get exactly the in-process engine's results at any batch.

TEST(Integration, ServesAnOnnxModel) {
  const std::string onnx = (kSource / "tests" / "data" / "onnx" / "mobilenet_v3_small.onnx").string();
  const Expected e = compute_expected(onnx, nnd::EngineKind::kJit, 12, 3);
  EXPECT_EQ(batch_vs_single(e), 0.0) << e.engine_name << " depends on the batch size";
  Daemon d("onnx");
  const auto cfg = d.write_config(
      "nnd.yaml", "  - name: mnv3\n    path: " + onnx + "\n    engine: jit\n    max_batch: 8\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  std::string why;
  nnclient_t* c = open_or_report(d.socket_path(), &why);
  ASSERT_NE(c, nullptr) << why;
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "mnv3", &info), NNCLIENT_OK);
  for (int r = 0; r < 24; ++r) {
    const std::string err = check_infer(c, info, e, static_cast<size_t>(r) % e.n, 1 + r % 4);
    EXPECT_TRUE(err.empty()) << "request " << r << ": " << err;
  }
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 2c. A classifier that answers its label (an ONNX ArgMax output): the client sees that output as
// NNCLIENT_INT64 and gets the indices torch computes, next to the float32 logits.

TEST(Integration, ServesArgMaxIndicesAsInt64) {
  const fs::path dir = kSource / "tests" / "data" / "onnx";
  const nnd::NpyArray x = nnd::read_npy((dir / "argmax_classifier.in.0.npy").string());
  const nnd::NpyArray logits = nnd::read_npy((dir / "argmax_classifier.out.0.npy").string());
  const nnd::NpyArray labels = nnd::read_npy((dir / "argmax_classifier.out.1.npy").string());
  ASSERT_EQ(labels.dtype, nnd::DType::kInt64);
  const auto batch = static_cast<uint32_t>(x.shape[0]);
  Daemon d("argmax");
  const auto cfg = d.write_config("nnd.yaml", "  - name: cls\n    path: " + (dir / "argmax_classifier.onnx").string() +
                                                  "\n    engine: jit\n    max_batch: 4\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  std::string why;
  nnclient_t* c = open_or_report(d.socket_path(), &why);
  ASSERT_NE(c, nullptr) << why;
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "cls", &info), NNCLIENT_OK) << d.log();
  ASSERT_EQ(info.num_outputs, 2u);
  EXPECT_EQ(info.outputs[0].dtype, NNCLIENT_FLOAT32);
  EXPECT_EQ(info.outputs[1].dtype, NNCLIENT_INT64);
  EXPECT_EQ(std::string(info.outputs[1].name), "label");
  EXPECT_EQ(info.outputs[1].rank, 0u);
  EXPECT_EQ(info.outputs[1].sample_bytes, sizeof(int64_t));
  std::vector<float> got_logits(static_cast<size_t>(logits.element_count()), NAN);
  std::vector<int64_t> got_labels(batch, -1);
  const void* ins[] = {x.bytes.data()};
  void* outs[] = {got_logits.data(), got_labels.data()};
  ASSERT_EQ(nnclient_infer(c, &info, ins, batch, outs, 5'000'000), NNCLIENT_OK);
  for (size_t i = 0; i < got_logits.size(); ++i) {
    EXPECT_NEAR(got_logits[i], logits.f32()[i], 1e-5 * std::max(1.0f, std::fabs(logits.f32()[i]))) << i;
  }
  for (uint32_t s = 0; s < batch; ++s) EXPECT_EQ(got_labels[s], labels.i64()[s]) << "sample " << s;
  nnclient_close(c);
  // nnctl infer writes the labels as an int64 .npy: the fixture's bytes.
  const fs::path out = d.dir() / "nnctl_out";
  const std::string cmd = std::string(NNCTL_EXE) + " --endpoint " + d.socket_path() + " infer cls --input x=" +
                          (dir / "argmax_classifier.in.0.npy").string() + " --output-dir " + out.string() +
                          " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const nnd::NpyArray written = nnd::read_npy((out / "label.npy").string());
  EXPECT_EQ(written.dtype, nnd::DType::kInt64);
  EXPECT_EQ(written.bytes, labels.bytes);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 3. kill -9 of a client mid-request: the daemon and other clients carry on, the session is
// reclaimed (max_clients is small, so leaked sessions would lock new clients out).

TEST(Integration, KilledClientIsReclaimed) {
  const Expected ball = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kJit, 32, 3);
  Daemon d("kill");
  // The detector on the reference engine takes long enough that a request is surely in flight.
  const auto cfg = d.write_config(
      "nnd.yaml",
      ball_yaml() + "  - name: detector\n    path: " + model_path("detector.h5") +
          "\n    engine: reference\n    max_batch: 2\n",
      "  workers: 2\n  max_clients: 4\n  max_clients_per_uid: 4\n");  // every client is this uid
  ASSERT_TRUE(d.start(cfg)) << d.log();

  // A bystander checks ball results all along.
  std::atomic<bool>* stop_flag = static_cast<std::atomic<bool>*>(
      ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(static_cast<void*>(stop_flag), MAP_FAILED);
  new (stop_flag) std::atomic<bool>(false);
  Child bystander = fork_child([&](const ChildIo& io) {
    std::string why;
    nnclient_t* c = open_or_report(d.socket_path(), &why);
    if (!c) return io.report(why), 1;
    nnclient_model_info_t info{};
    if (nnclient_model_info(c, "ball", &info) != NNCLIENT_OK) return io.report("model_info"), 1;
    io.signal_ready();
    int r = 0;
    for (; !stop_flag->load(); ++r) {
      const std::string err = check_infer(c, info, ball, r, 1 + r % 4, nullptr, 10'000'000);
      if (!err.empty()) return io.report("bystander request " + std::to_string(r) + ": " + err), 1;
    }
    io.report("bystander ran " + std::to_string(r) + " requests");
    return 0;
  });
  ASSERT_TRUE(wait_ready(bystander, 10000));

  constexpr int kVictims = 8;  // more than max_clients
  for (int v = 0; v < kVictims; ++v) {
    Child victim = fork_child([&](const ChildIo& io) {
      std::string why;
      nnclient_t* c = open_or_report(d.socket_path(), &why);
      if (!c) return io.report(why), 1;
      nnclient_model_info_t info{};
      if (nnclient_model_info(c, "detector", &info) != NNCLIENT_OK) return 1;
      std::vector<float> img(info.inputs[0].sample_bytes / 4, 0.5f);
      for (int k = 0; k < 2; ++k) {  // two requests in flight: one running, one queued
        nnclient_request_t* rq = nullptr;
        if (nnclient_request_begin(c, &info, 1, &rq) != NNCLIENT_OK) return 1;
        std::memcpy(nnclient_request_input(rq, 0), img.data(), info.inputs[0].sample_bytes);
        if (nnclient_submit(c, rq, nullptr) != NNCLIENT_OK) return 1;
      }
      io.signal_ready();
      for (;;) ::pause();
    });
    ASSERT_TRUE(wait_ready(victim, 10000)) << "victim " << v << " did not submit";
    ::kill(victim.pid, SIGKILL);
    const ChildResult r = collect(victim, 5000);
    EXPECT_EQ(r.signal, SIGKILL);
    ASSERT_TRUE(d.alive()) << d.log();
  }

  // Three new clients at once (with the bystander: max_clients) get correct answers. A session of
  // a dead client is dropped within 100 ms of its death (pidfd/hang-up), so allow one retry
  // window for the last victim only.
  std::vector<Child> fresh;
  for (int i = 0; i < 3; ++i) {
    fresh.push_back(fork_child([&, i](const ChildIo& io) {
      nnclient_t* c = nullptr;
      nnclient_status st = NNCLIENT_OK;
      const int64_t end = now_us() + 2'000'000;
      while (!(c = nnclient_open(d.socket_path().c_str(), &st)) && st == NNCLIENT_E_TOO_MANY_CLIENTS &&
             now_us() < end) {
        ::usleep(5000);
      }
      if (!c) return io.report(std::string("fresh open: ") + nnclient_status_name(st)), 1;
      nnclient_model_info_t info{};
      if (nnclient_model_info(c, "ball", &info) != NNCLIENT_OK) return io.report("model_info"), 1;
      for (int r = 0; r < 50; ++r) {
        const std::string err = check_infer(c, info, ball, r * 7 + i, 1 + r % 8);
        if (!err.empty()) return io.report("fresh client: " + err), 1;
      }
      io.signal_ready();
      // Hold the session until told to go, so the three really are connected at once.
      while (!stop_flag->load()) ::usleep(1000);
      nnclient_close(c);
      return 0;
    }));
  }
  for (auto& f : fresh) EXPECT_TRUE(wait_ready(f, 30000)) << "a fresh client did not get answers";
  stop_flag->store(true);
  for (auto& f : fresh) {
    const ChildResult r = collect(f, 10000);
    EXPECT_TRUE(r.exited && r.code == 0) << r.text;
  }
  const ChildResult br = collect(bystander, 20000);
  EXPECT_TRUE(br.exited && br.code == 0) << br.text;
  std::printf("[ info ] %s\n", br.text.c_str());
  ::munmap(stop_flag, 4096);
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 4. kill -9 of the daemon: waiting calls fail within their timeout, calls while it is down fail
// quickly, and a restarted daemon on the same endpoint is used again by the same handle.

TEST(Integration, KilledDaemonFailsCallsAndRestartIsPickedUp) {
  const Expected ball = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kJit, 16, 4);
  Daemon d("restart");
  const auto cfg = d.write_config(
      "nnd.yaml",
      ball_yaml() + "  - name: detector\n    path: " + model_path("detector.h5") +
          "\n    engine: reference\n    max_batch: 2\n",
      "  workers: 1\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();

  std::string why;
  nnclient_t* c = open_or_report(d.socket_path(), &why);
  ASSERT_NE(c, nullptr) << why;
  nnclient_model_info_t bi{}, di{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &bi), NNCLIENT_OK);
  ASSERT_EQ(nnclient_model_info(c, "detector", &di), NNCLIENT_OK);
  ASSERT_EQ(check_infer(c, bi, ball, 0, 4), "");

  // A slow request is in flight when the daemon dies.
  std::vector<float> img(di.inputs[0].sample_bytes / 4, 0.25f);
  nnclient_request_t* rq = nullptr;
  ASSERT_EQ(nnclient_request_begin(c, &di, 1, &rq), NNCLIENT_OK);
  std::memcpy(nnclient_request_input(rq, 0), img.data(), img.size() * 4);
  ASSERT_EQ(nnclient_submit(c, rq, nullptr), NNCLIENT_OK);
  d.kill9();
  constexpr uint64_t kTimeoutUs = 2'000'000, kSlackUs = 250'000;
  int64_t t0 = now_us();
  nnclient_status st = nnclient_wait(c, rq, kTimeoutUs);
  int64_t took = now_us() - t0;
  nnclient_request_release(c, rq);
  EXPECT_TRUE(st == NNCLIENT_E_DAEMON_RESTARTED || st == NNCLIENT_E_DAEMON_NOT_RUNNING)
      << nnclient_status_name(st);
  EXPECT_LE(took, int64_t(kTimeoutUs + kSlackUs));
  std::printf("[ info ] wait on a killed daemon: %s after %.1f ms\n", nnclient_status_name(st),
              took / 1000.0);

  // While it is down: a synchronous call fails within its timeout.
  t0 = now_us();
  check_infer(c, bi, ball, 0, 1, &st, kTimeoutUs);
  took = now_us() - t0;
  EXPECT_TRUE(st == NNCLIENT_E_DAEMON_RESTARTED || st == NNCLIENT_E_DAEMON_NOT_RUNNING)
      << nnclient_status_name(st);
  EXPECT_LE(took, int64_t(kTimeoutUs + kSlackUs));
  std::printf("[ info ] infer while down: %s after %.1f ms\n", nnclient_status_name(st),
              took / 1000.0);

  // Restart on the same endpoint (the dead daemon's socket file is still there); the same handle
  // and the same model info work again.
  ASSERT_TRUE(d.start(cfg)) << d.log();
  std::string err;
  ASSERT_TRUE(eventually(
      [&] {
        err = check_infer(c, bi, ball, 3, 5, &st, kTimeoutUs);
        return st != NNCLIENT_E_DAEMON_NOT_RUNNING && st != NNCLIENT_E_DAEMON_RESTARTED;
      },
      10000));
  EXPECT_EQ(err, "");
  for (int r = 0; r < 20; ++r) ASSERT_EQ(check_infer(c, bi, ball, r, 1 + r % 8), "") << r;

  // The same again with a synchronous infer waiting when the daemon dies (from another thread's
  // point of view: the kill happens while nnclient_infer waits on the slow detector).
  std::atomic<int64_t> killed_at{0};
  std::thread killer([&] {
    ::usleep(100000);  // not synchronisation: only makes it likely the request is running
    killed_at = now_us();
    d.kill9();
  });
  std::vector<float> det_out(di.outputs[0].sample_bytes / 4);
  std::vector<std::vector<float>> douts(di.num_outputs);
  std::vector<void*> doutp;
  for (uint32_t k = 0; k < di.num_outputs; ++k) {
    douts[k].resize(di.outputs[k].sample_bytes / 4);
    doutp.push_back(douts[k].data());
  }
  const void* dinp[1] = {img.data()};
  t0 = now_us();
  st = nnclient_infer(c, &di, dinp, 1, doutp.data(), kTimeoutUs);
  took = now_us() - t0;
  killer.join();
  if (st != NNCLIENT_OK) {  // OK only if the run finished before the kill
    EXPECT_TRUE(st == NNCLIENT_E_DAEMON_RESTARTED || st == NNCLIENT_E_DAEMON_NOT_RUNNING)
        << nnclient_status_name(st);
    EXPECT_LE(took, int64_t(kTimeoutUs + kSlackUs));
  }
  ASSERT_TRUE(d.start(cfg)) << d.log();
  ASSERT_TRUE(eventually(
      [&] {
        err = check_infer(c, bi, ball, 1, 2, &st, kTimeoutUs);
        return st != NNCLIENT_E_DAEMON_NOT_RUNNING && st != NNCLIENT_E_DAEMON_RESTARTED;
      },
      10000));
  EXPECT_EQ(err, "");
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}


// Counters shared between the test and its client processes (MAP_SHARED anonymous memory).
struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> progress{0};  // successful requests over all clients
  std::atomic<uint64_t> max_latency_us{0};
};

Shared* make_shared_block() {
  void* p = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) Shared();
}

// Does output `out` of a request of samples [first, first+batch) equal `e`'s single results?
bool matches(const std::vector<std::vector<float>>& out, const Expected& e, size_t first,
             uint32_t batch) {
  for (size_t k = 0; k < out.size(); ++k) {
    for (uint32_t b = 0; b < batch; ++b) {
      const size_t s = (first + b) % e.n;
      if (std::memcmp(out[k].data() + b * e.out_floats[k], e.single[k].data() + s * e.out_floats[k],
                      e.out_floats[k] * sizeof(float)) != 0) {
        return false;
      }
    }
  }
  return true;
}

// Runs one request and returns its status; fills `out`.
nnclient_status run_raw(nnclient_t* c, const nnclient_model_info_t& info, const Expected& e,
                        size_t first, uint32_t batch, std::vector<std::vector<float>>* out) {
  std::vector<float> in(batch * e.in_floats);
  for (uint32_t b = 0; b < batch; ++b) {
    std::memcpy(in.data() + b * e.in_floats, e.inputs.data() + ((first + b) % e.n) * e.in_floats,
                e.in_floats * sizeof(float));
  }
  out->assign(info.num_outputs, {});
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    (*out)[k].assign(batch * info.outputs[k].sample_bytes / 4, std::nanf(""));
    outp.push_back((*out)[k].data());
  }
  const void* inp[1] = {in.data()};
  return nnclient_infer(c, &info, inp, batch, outp.data(), 20'000'000);
}

// ---------------------------------------------------------------------------------------------
// 2. SIGHUP reload under load: `ball` alternates between two engines of the same layout (the JIT
// and the reference engine: same layout, different numbers, float32 against float64 rounded
// once), `flip` between two models of different layouts. Every request of every client is counted and checked: each ball result is entirely one
// engine's, never a mix; a flip request gets NNCLIENT_E_MODEL_CHANGED, then succeeds after the
// client asks for the model info again.

TEST(Integration, ReloadUnderLoadLosesAndCorruptsNothing) {
  const Expected exact = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kJit, 32, 5);
  const Expected other = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kReference, 32, 5);
  const Expected fbj = compute_expected(model_path("field_boundary.h5"), nnd::EngineKind::kJit, 8, 6);
  // The two ball engines must be told apart: some sample must differ.
  size_t differing = 0;
  for (size_t s = 0; s < exact.n; ++s) {
    differing += std::memcmp(exact.single[0].data() + s * exact.out_floats[0],
                             other.single[0].data() + s * other.out_floats[0],
                             exact.out_floats[0] * 4) != 0;
  }
  ASSERT_GT(differing, exact.n / 2) << "the JIT and the reference engine agree; pick other engines";

  Daemon d("reload");
  const std::string flip_a = "  - name: flip\n    path: " + model_path("ball_patch.h5") +
                             "\n    engine: jit\n    max_batch: 8\n";
  const std::string flip_b = "  - name: flip\n    path: " + model_path("field_boundary.h5") +
                             "\n    engine: jit\n    max_batch: 8\n";
  const std::string dextra = "  workers: 2\n";
  const auto cfg = d.write_config("nnd.yaml", ball_yaml() + flip_a, dextra);
  ASSERT_TRUE(d.start(cfg)) << d.log();

  Shared* sh = make_shared_block();
  ASSERT_NE(sh, nullptr);
  std::vector<Child> kids;
  for (int i = 0; i < 2; ++i) {  // ball clients
    kids.push_back(fork_child([&, i](const ChildIo& io) {
      std::string why;
      nnclient_t* c = open_or_report(d.socket_path(), &why);
      if (!c) return io.report(why), 1;
      nnclient_model_info_t info{};
      if (nnclient_model_info(c, "ball", &info) != NNCLIENT_OK) return io.report("info"), 1;
      std::mt19937 rng(200 + i);
      uint64_t n = 0, na = 0, nb = 0;
      std::vector<std::vector<float>> out;
      while (!sh->stop.load()) {
        const size_t first = rng() % exact.n;
        const uint32_t batch = 1 + rng() % 8;
        const nnclient_status st = run_raw(c, info, exact, first, batch, &out);
        if (st != NNCLIENT_OK) {
          return io.report("ball request " + std::to_string(n) + ": " + nnclient_status_name(st) +
                           " " + nnclient_last_error(c)), 1;
        }
        const bool a = matches(out, exact, first, batch), b = matches(out, other, first, batch);
        if (!a && !b) return io.report("ball request " + std::to_string(n) + " matches neither engine (mixed or corrupt)"), 1;
        na += a && !b;
        nb += b && !a;
        ++n;
        sh->progress.fetch_add(1);
      }
      io.report("ball " + std::to_string(n) + " " + std::to_string(na) + " " + std::to_string(nb));
      return (na > 0 && nb > 0) ? 0 : 2;
    }));
  }
  kids.push_back(fork_child([&](const ChildIo& io) {  // flip client
    std::string why;
    nnclient_t* c = open_or_report(d.socket_path(), &why);
    if (!c) return io.report(why), 1;
    nnclient_model_info_t info{};
    if (nnclient_model_info(c, "flip", &info) != NNCLIENT_OK) return io.report("info"), 1;
    uint64_t n = 0, changed = 0, on_ball = 0, on_fb = 0;
    std::vector<std::vector<float>> out;
    while (!sh->stop.load()) {
      const bool is_ball = info.inputs[0].sample_bytes == exact.in_floats * 4;
      const Expected& e = is_ball ? exact : fbj;
      const size_t first = n % e.n;
      const uint32_t batch = 1 + n % 4;
      const nnclient_status st = run_raw(c, info, e, first, batch, &out);
      if (st == NNCLIENT_E_MODEL_CHANGED) {
        ++changed;
        if (nnclient_model_info(c, "flip", &info) != NNCLIENT_OK) return io.report("re-query"), 1;
        continue;  // the same request again, on the new layout
      }
      if (st != NNCLIENT_OK) {
        return io.report(std::string("flip request: ") + nnclient_status_name(st) + " " +
                         nnclient_last_error(c)), 1;
      }
      if (!matches(out, e, first, batch)) return io.report("flip result wrong"), 1;
      (is_ball ? on_ball : on_fb) += 1;
      ++n;
      sh->progress.fetch_add(1);
    }
    io.report("flip " + std::to_string(n) + " " + std::to_string(changed) + " " +
              std::to_string(on_ball) + " " + std::to_string(on_fb));
    return (changed > 0 && on_ball > 0 && on_fb > 0) ? 0 : 2;
  }));

  constexpr int kReloads = 30;
  for (int r = 0; r < kReloads; ++r) {
    // Let every client make progress under the current config first (polled, bounded).
    const uint64_t p0 = sh->progress.load();
    ASSERT_TRUE(eventually([&] { return sh->progress.load() >= p0 + 60; }, 20000))
        << "clients stalled before reload " << r << "\n" << d.log();
    const bool to_b = r % 2 == 0;
    d.write_config("nnd.yaml",
                   ball_yaml("", to_b ? "reference" : "jit") +
                       (to_b ? flip_b : flip_a),
                   dextra);
    ASSERT_TRUE(d.reload()) << "reload " << r << " did not finish\n" << d.log();
  }
  const uint64_t p0 = sh->progress.load();
  ASSERT_TRUE(eventually([&] { return sh->progress.load() >= p0 + 60; }, 20000));
  sh->stop.store(true);
  for (auto& k : kids) {
    const ChildResult r = collect(k, 30000);
    EXPECT_TRUE(r.exited && r.code == 0) << r.text;
    std::printf("[ info ] %s\n", r.text.c_str());
  }
  ::munmap(sh, sizeof(Shared));
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 5. A hostile client scribbling random bytes over its shared memory (raw hand-shake, the segment
// mapped as libnnclient maps it) cannot crash or stall the daemon or another client.

TEST(Integration, HostileClientCannotHurtOthers) {
  const Expected ball = compute_expected(model_path("ball_patch.h5"), nnd::EngineKind::kJit, 32, 7);
  Daemon d("hostile");
  const auto cfg = d.write_config("nnd.yaml", ball_yaml(), "  workers: 2\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  Shared* sh = make_shared_block();
  ASSERT_NE(sh, nullptr);
  Child good = fork_child([&](const ChildIo& io) {
    std::string why;
    nnclient_t* c = open_or_report(d.socket_path(), &why);
    if (!c) return io.report(why), 1;
    nnclient_model_info_t info{};
    if (nnclient_model_info(c, "ball", &info) != NNCLIENT_OK) return io.report("info"), 1;
    uint64_t n = 0;
    while (!sh->stop.load()) {
      const int64_t t0 = now_us();
      const std::string err = check_infer(c, info, ball, n, 1 + n % 8, nullptr, 10'000'000);
      if (!err.empty()) return io.report("good client request " + std::to_string(n) + ": " + err), 1;
      const uint64_t lat = static_cast<uint64_t>(now_us() - t0);
      uint64_t m = sh->max_latency_us.load();
      while (lat > m && !sh->max_latency_us.compare_exchange_weak(m, lat)) {
      }
      ++n;
      sh->progress.fetch_add(1);
    }
    io.report("good client ran " + std::to_string(n) + " requests");
    return 0;
  });
  ASSERT_TRUE(eventually([&] { return sh->progress.load() > 10; }, 20000));

  std::mt19937_64 rng(42);
  int sessions = 0;
  const int64_t end = now_us() + 2'000'000;
  uint64_t before = sh->progress.load();
  while (now_us() < end) {
    nnd::test::RawClient h;
    const int w = h.connect_and_hello(d.socket_path(), 8, "hostile");
    // A session the daemon has not yet seen closed may still count against max_clients.
    ASSERT_TRUE(w == NND_IPC_OK || w == NND_IPC_E_TOO_MANY_CLIENTS) << w;
    if (w != NND_IPC_OK) continue;
    ++sessions;
    for (int round = 0; round < 100 && now_us() < end; ++round) {
      uint64_t* p = reinterpret_cast<uint64_t*>(h.base());
      const size_t words = h.bytes() / 8;
      for (int i = 0; i < 256; ++i) p[rng() % words] = rng();
      if (round % 3 == 0) {  // sometimes a plausible request, so validation past the ring runs
        h.submit(static_cast<uint32_t>(rng() % 8), (rng() & 1) ? "ball" : "bal",
                 (rng() & 1) ? 0 : rng(), static_cast<uint32_t>(rng() % 80),
                 (rng() & 1) ? 4096 * (rng() % 10) : rng());
      }
      h.poke();
      ::usleep(100);
    }
    // The good client keeps being served while this session is being scribbled on.
    ASSERT_TRUE(eventually([&] { return sh->progress.load() > before; }, 5000))
        << "good client stalled\n" << d.log();
    before = sh->progress.load();
    ASSERT_TRUE(d.alive()) << d.log();
  }
  EXPECT_GT(sessions, 0);
  sh->stop.store(true);
  const ChildResult r = collect(good, 20000);
  EXPECT_TRUE(r.exited && r.code == 0) << r.text;
  EXPECT_LT(sh->max_latency_us.load(), 1'000'000u) << "a good request waited over 1 s";
  std::printf("[ info ] %d hostile sessions; %s; worst good latency %.2f ms\n", sessions,
              r.text.c_str(), sh->max_latency_us.load() / 1000.0);
  ::munmap(sh, sizeof(Shared));
  // Afterwards a new client is served correctly.
  std::string why;
  nnclient_t* c = open_or_report(d.socket_path(), &why);
  ASSERT_NE(c, nullptr) << why;
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(check_infer(c, info, ball, i, 1 + i), "");
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// ---------------------------------------------------------------------------------------------
// 6. A user outside the configured user/group is refused; a member of the group is admitted; no
// segment has a name anyone could open (memfds: /dev/shm holds nothing of nnd's).

// In a child: switch to uid/gid (no supplementary groups) and try nnclient_open + model info.
// Exit code: the nnclient_open status (0 when admitted and model info worked).
int open_as(const std::string& path, uid_t uid, gid_t gid, const ChildIo& io) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) {
    io.report("cannot drop privileges");
    return 100;
  }
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(path.c_str(), &st);
  if (!c) {
    io.report(nnclient_last_error(nullptr));
    return st;
  }
  nnclient_model_info_t info{};
  const nnclient_status s2 = nnclient_model_info(c, "ball", &info);
  nnclient_close(c);
  return s2 == NNCLIENT_OK ? 0 : 101;
}

TEST(Integration, OutsideUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to run a child as another uid)";
  if (!::getgrgid(65534)) GTEST_SKIP() << "no group 65534 on this system";
  constexpr uid_t kStranger = 12345;
  // Socket opened to everyone after the start (the config refuses modes wider than 0660, so
  // chmod it behind the daemon's back): the daemon's peer-credential check alone must refuse.
  {
    Daemon d("access");
    // Let the stranger reach the socket: search permission suffices (a folder others can write,
    // non-sticky, would be refused by the daemon: anyone could replace the socket in it).
    const auto reachable = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec;
    fs::permissions(d.dir(), reachable);
    fs::permissions(d.dir() / "run", reachable);
    const auto cfg = d.write_config("nnd.yaml", ball_yaml());
    ASSERT_TRUE(d.start(cfg)) << d.log();
    struct stat st {};
    ASSERT_EQ(::stat(d.socket_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0660u) << std::oct << st.st_mode;
    fs::permissions(d.socket_path(), fs::perms::owner_read | fs::perms::owner_write |
                                         fs::perms::group_read | fs::perms::group_write |
                                         fs::perms::others_read | fs::perms::others_write);
    Child c = fork_child([&](const ChildIo& io) { return open_as(d.socket_path(), kStranger, kStranger, io); });
    ChildResult r = collect(c, 20000);
    EXPECT_EQ(r.code, NNCLIENT_E_ACCESS) << r.text;
    EXPECT_TRUE(eventually([&] { return d.log().find("access denied") != std::string::npos; }, 5000))
        << d.log();
    // The daemon's own user (root) still gets in.
    std::string why;
    nnclient_t* h = open_or_report(d.socket_path(), &why);
    EXPECT_NE(h, nullptr) << why;
    nnclient_close(h);
    EXPECT_EQ(d.stop(), 0);
  }
  // Default mode 0660 with group 65534: a stranger outside it is refused (by the file mode or by
  // the daemon), a member of the group is admitted.
  {
    Daemon d("group");
    const auto reachable = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec;
    fs::permissions(d.dir(), reachable);
    fs::permissions(d.dir() / "run", reachable);
    const auto cfg = d.write_config("nnd.yaml", ball_yaml(), "  group: \"65534\"\n");
    ASSERT_TRUE(d.start(cfg)) << d.log();
    // The socket belongs to the configured group, with no access for others.
    struct stat sst {};
    ASSERT_EQ(::stat(d.socket_path().c_str(), &sst), 0);
    EXPECT_TRUE(S_ISSOCK(sst.st_mode));
    EXPECT_EQ(sst.st_gid, 65534u);
    EXPECT_EQ(sst.st_mode & 07777, 0660u) << std::oct << sst.st_mode;
    // A connected client, whose segment a stranger must not be able to reach by name.
    std::string why;
    nnclient_t* h = open_or_report(d.socket_path(), &why);
    ASSERT_NE(h, nullptr) << why;
    Child c = fork_child([&](const ChildIo& io) { return open_as(d.socket_path(), kStranger, kStranger, io); });
    ChildResult r = collect(c, 20000);
    EXPECT_TRUE(r.code == NNCLIENT_E_ACCESS || r.code == NNCLIENT_E_DAEMON_NOT_RUNNING)
        << r.code << " " << r.text;
    Child m = fork_child([&](const ChildIo& io) { return open_as(d.socket_path(), kStranger, 65534, io); });
    r = collect(m, 20000);
    EXPECT_EQ(r.code, 0) << "group member refused: " << r.text << "\n" << d.log();
    // Nor through /proc/<pid>/fd: the memfds held by the daemon and by this (root) client.
    std::vector<std::string> memfds;
    for (pid_t pid : {d.pid(), ::getpid()}) {
      for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
        std::error_code ec;
        const auto target = fs::read_symlink(e.path(), ec);
        if (!ec && target.string().find("memfd:") != std::string::npos) {
          memfds.push_back(e.path().string());
        }
      }
    }
    EXPECT_FALSE(memfds.empty());
    // Every segment the daemon holds is close-on-exec (no child could inherit it) and sealed
    // against resizing (a client cannot make the daemon's mapping fault).
    for (const auto& f : memfds) {
      if (f.rfind("/proc/" + std::to_string(d.pid()) + "/", 0) != 0) continue;
      const std::string fdinfo = read_text(fs::path(f).parent_path().parent_path() / "fdinfo" /
                                           fs::path(f).filename());
      const size_t p = fdinfo.find("flags:");
      ASSERT_NE(p, std::string::npos) << fdinfo;
      EXPECT_NE(std::stoul(fdinfo.substr(p + 6), nullptr, 8) & O_CLOEXEC, 0u) << f << ": " << fdinfo;
      const int fd = ::open(f.c_str(), O_RDWR);  // root: a new description of the same memfd
      ASSERT_GE(fd, 0) << f;
      const int seals = ::fcntl(fd, F_GET_SEALS);
      EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
          << f << " seals " << seals;
      ::close(fd);
    }
    Child peek = fork_child([&](const ChildIo& io) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(kStranger) != 0) return 100;
      int opened = 0;
      for (const auto& f : memfds) {
        const int fd = ::open(f.c_str(), O_RDONLY);
        if (fd >= 0) {
          io.report("opened " + f + "; ");
          ++opened;
          ::close(fd);
        }
      }
      return opened;
    });
    r = collect(peek, 20000);
    EXPECT_EQ(r.code, 0) << r.text;
    for (const auto& e : fs::directory_iterator("/dev/shm")) {
      EXPECT_EQ(e.path().filename().string().find("nnd"), std::string::npos)
          << "named shared memory: " << e.path();
    }
    nnclient_close(h);
    EXPECT_EQ(d.stop(), 0);
  }
}

}  // namespace
