// Issue 36, attacks 4, 5 and 6: what a reload re-reads, reuses and survives.
#include <gtest/gtest.h>

#include "attack_support.h"

namespace {

using namespace nnd::integ;
using namespace nnd::integ::attack;

// ---- 4. A reload that lowers max_batch is a "model changed" signal ----------------------------

TEST(Attack, LoweredMaxBatchIsModelChanged) {
  Daemon d("max_batch");
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(8)))) << d.log();
  nnclient_open_options_t o{};
  o.struct_size = sizeof o;
  const std::string path = d.socket_path();
  o.endpoint = path.c_str();
  o.max_batch = 8;
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open_with(&o, &st);
  ASSERT_NE(c, nullptr) << nnclient_last_error(nullptr);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  ASSERT_EQ(info.max_batch, 8u);
  std::vector<float> in(8 * info.inputs[0].sample_bytes / 4);
  std::vector<std::vector<float>> out(info.num_outputs);
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    out[k].resize(8 * info.outputs[k].sample_bytes / 4);
    outp.push_back(out[k].data());
  }
  const void* inp[1] = {in.data()};
  ASSERT_EQ(nnclient_infer(c, &info, inp, 8, outp.data(), 10'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  d.write_config("nnd.yaml", ball(2));
  ASSERT_TRUE(d.reload()) << d.log();
  const nnclient_status s = nnclient_infer(c, &info, inp, 8, outp.data(), 10'000'000);
  EXPECT_EQ(s, NNCLIENT_E_MODEL_CHANGED) << nnclient_status_name(s) << ": " << nnclient_last_error(c);
  nnclient_model_info_t now{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &now), NNCLIENT_OK);
  EXPECT_EQ(now.max_batch, 2u);
  EXPECT_EQ(nnclient_infer(c, &now, inp, 2, outp.data(), 10'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  figure("max_batch 8 -> 2 by a reload: an old client's batch of 8 gets", nnclient_status_name(s));
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0);
}

// ---- 5. Reuse by content, and scheduling-only reloads ------------------------------------------

TEST(Attack, SameMtimeSwapIsNoticedAndSchedulingChangesDoNotRecompile) {
  Daemon d("mtime");
  const fs::path m = d.dir() / "m.h5";
  fs::copy_file(model_path("ball_patch.h5"), m);
  const std::string yaml = model_yaml("m", m.string(), "    engine: jit\n");
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", yaml))) << d.log();
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(d.socket_path().c_str(), &st);
  ASSERT_NE(c, nullptr);
  nnclient_model_info_t before{};
  ASSERT_EQ(nnclient_model_info(c, "m", &before), NNCLIENT_OK);
  // `cp -p`: another network in the file, its modification time kept.
  struct stat old {};
  ASSERT_EQ(::stat(m.c_str(), &old), 0);
  const fs::path tmp = d.dir() / "m.h5.new";
  fs::copy_file(model_path("field_boundary.h5"), tmp);
  const timespec times[2] = {old.st_atim, old.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, tmp.c_str(), times, 0), 0);
  fs::rename(tmp, m);
  ASSERT_TRUE(d.reload()) << d.log();
  const std::string swapped = reload_summary(d.log());
  EXPECT_NE(swapped.find("1 compiled"), std::string::npos) << swapped;
  nnclient_model_info_t after{};
  ASSERT_EQ(nnclient_model_info(c, "m", &after), NNCLIENT_OK);
  EXPECT_NE(after.signature, before.signature) << "the old network still serves";
  EXPECT_EQ(after.version, before.version + 1);
  figure("same-mtime swap: reload result", swapped);
  // A scheduling-only change: no recompile, the model keeps its version.
  d.write_config("nnd.yaml", yaml + "    batch_delay_us: 500\n    priority: 3\n");
  ASSERT_TRUE(d.reload()) << d.log();
  const std::string sched = reload_summary(d.log());
  EXPECT_NE(sched.find("0 compiled"), std::string::npos) << sched;
  nnclient_model_info_t later{};
  ASSERT_EQ(nnclient_model_info(c, "m", &later), NNCLIENT_OK);
  EXPECT_EQ(later.version, after.version);
  EXPECT_EQ(later.signature, after.signature);
  figure("batch_delay_us/priority-only reload: reload result", sched);
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0);
}

// ---- 6. Resource failures on a control path fail that request, never the daemon ----------------

// Under an address-space limit, a client fills the daemon's address space with segments (each
// within max_shared_memory_bytes); the next SIGHUP could not start the reload thread and ended
// the daemon ("terminate called after throwing 'std::system_error'").
TEST(Attack, ReloadUnderAnAddressSpaceLimitFailsAndKeepsServing) {
  Daemon d("rlimit_as");
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(256), "  workers: 1\n  max_clients: 1000\n  max_shared_memory_bytes: 1T\n"))) << d.log();
  const uint64_t vm = vm_size_bytes(d.pid());
  ASSERT_GT(vm, 0u);
  const rlimit lim{vm + (48u << 20), vm + (48u << 20)};
  ASSERT_EQ(::prlimit(d.pid(), RLIMIT_AS, &lim, nullptr), 0);
  // One-slot segments of about 1 MiB until the daemon cannot map another.
  std::vector<std::unique_ptr<nnd::test::RawClient>> held;
  int refused = NND_IPC_OK;
  for (int i = 0; i < 200 && refused == NND_IPC_OK; ++i) {
    auto r = std::make_unique<nnd::test::RawClient>();
    refused = r->connect_and_hello(d.socket_path(), 1, "filler", UINT64_MAX);
    if (refused == NND_IPC_OK) held.push_back(std::move(r));
  }
  ASSERT_GT(held.size(), 2u);
  ASSERT_EQ(refused, NND_IPC_E_INTERNAL) << "the address space never filled (" << held.size() << " segments)";
  held.pop_back();  // room for small allocations, not for a thread's stack
  ::usleep(100000);
  ::kill(d.pid(), SIGHUP);
  const std::string r = d.wait_for("READY=1", 20000);
  EXPECT_TRUE(d.alive()) << d.log().substr(d.log().size() > 3000 ? d.log().size() - 3000 : 0);
  EXPECT_NE(r.find("reload failed"), std::string::npos) << r;
  // The served model still answers.
  const int status = [&] {
    nnd::test::RawClient& c = *held.front();
    const nnd_ipc_model_info mi = c.model_info("ball");
    if (mi.status != NND_IPC_OK) return -100;
    c.submit(0, "ball", mi.signature, 1, 32 * 32 * 4);
    const int got = c.wait_complete(10'000'000'000);
    return got == 0 ? c.slot(0)->status : -200 - got;
  }();
  EXPECT_EQ(status, NND_IPC_OK);
  // nnctl reload takes the reload queue's thread: that request fails, the daemon does not.
  nnd_ipc_model_query q{};
  q.type = NND_MSG_RELOAD;
  ASSERT_EQ(::send(held.front()->sock(), &q, sizeof q, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof q));
  nnd_ipc_reply rep{};
  pollfd pf{held.front()->sock(), POLLIN, 0};
  ASSERT_GT(::poll(&pf, 1, 20000), 0);
  ASSERT_GT(::recv(held.front()->sock(), &rep, sizeof rep, 0), 0);
  EXPECT_EQ(rep.type, static_cast<uint32_t>(NND_MSG_RELOAD));
  EXPECT_NE(rep.status, NND_IPC_OK) << rep.message;
  EXPECT_TRUE(d.alive());
  figure("nnctl reload under the address-space limit", std::string(d.alive() ? "daemon alive" : "daemon dead") +
                                                           ", reply " + std::to_string(rep.status) + " '" + rep.message + "'");
  figure("SIGHUP under the address-space limit", std::string(d.alive() ? "daemon alive" : "daemon dead") +
                                                      ", " + (r.empty() ? "no READY" : r.substr(0, 160)));
  held.clear();
  EXPECT_EQ(d.stop(), 0);
}

// ---- 9b. A reload back to fewer models gives their memory back ---------------------------------

// Back from 262 models to 2, RSS stayed at 394 MB (38 MB at start): the poller kept the replaced
// snapshot (every engine of it) until a request arrived, and glibc kept the heap freed after that.
// A client that used the large generation stays connected and idle, as a robot's would.
TEST(Attack, ReloadBackToFewModelsGivesTheMemoryBack) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator decides what RSS shows";
#endif
  Daemon d("rss");
  const std::string path = model_path("ball_patch.h5");
  auto models = [&path](int n) {
    std::string y;
    for (int i = 0; i < n; ++i) {
      y += "  - name: m";
      y += std::to_string(i);
      y += "\n    path: ";
      y += path;
      y += "\n    engine: jit\n";
    }
    return y;
  };
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", models(2)))) << d.log();
  const uint64_t at_start = vm_rss_bytes(d.pid());
  d.write_config("nnd.yaml", models(262));
  ASSERT_TRUE(d.reload(100000)) << d.log();
  ASSERT_NE(reload_summary(d.log()).find("262 model(s)"), std::string::npos) << reload_summary(d.log());
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(d.socket_path().c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_last_error(nullptr);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "m261", &info), NNCLIENT_OK);
  std::vector<float> in(info.inputs[0].sample_bytes / 4);
  std::vector<std::vector<float>> out(info.num_outputs);
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    out[k].resize(info.outputs[k].sample_bytes / 4);
    outp.push_back(out[k].data());
  }
  const void* inp[1] = {in.data()};
  ASSERT_EQ(nnclient_infer(c, &info, inp, 1, outp.data(), 10'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  const uint64_t with_262 = vm_rss_bytes(d.pid());
  d.write_config("nnd.yaml", models(2));
  ASSERT_TRUE(d.reload()) << d.log();
  ASSERT_NE(reload_summary(d.log()).find("2 model(s)"), std::string::npos) << reload_summary(d.log());
  const uint64_t back_to_2 = vm_rss_bytes(d.pid());
  figure("RSS at start (2 models) / after a reload to 262 / after a reload back to 2",
         mib(at_start) + " / " + mib(with_262) + " / " + mib(back_to_2));
  ASSERT_GT(with_262, at_start);
  // What the 260 extra models took, at most a quarter of it kept.
  EXPECT_LE(back_to_2, at_start + (with_262 - at_start) / 4);
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0);
}

}  // namespace
