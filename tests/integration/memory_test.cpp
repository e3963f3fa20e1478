// Shared memory per client (issue: "memory per need"): a real nnd serving a small and a large
// model, clients opened with and without options, growth on demand and after a reload, the
// budget cutting slots, and the control thread taking turns between a flooding client and
// others' hand-shakes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/nnclient.h"
#include "tests/integration/daemon_harness.h"
#include "tests/support/required_files.h"

namespace nnd::integ {
namespace {

std::string model_yaml(const std::string& name, const std::string& path, uint32_t max_batch) {
  return "  - name: " + name + "\n    path: " + path + "\n    max_batch: " +
         std::to_string(max_batch) + "\n";
}

nnclient_t* open_at(const std::string& socket, nnclient_open_options_t o = {}) {
  o.struct_size = sizeof o;
  o.endpoint = socket.c_str();
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open_with(&o, &st);
  EXPECT_NE(c, nullptr) << nnclient_status_name(st) << ": " << nnclient_last_error(nullptr);
  return c;
}

// Runs `batch` samples of zeros through `model`; the status.
nnclient_status infer_zeros(nnclient_t* c, const char* model, uint32_t batch) {
  nnclient_model_info_t info{};
  const nnclient_status st = nnclient_model_info(c, model, &info);
  if (st != NNCLIENT_OK) return st;
  std::vector<std::vector<unsigned char>> in(info.num_inputs), out(info.num_outputs);
  std::vector<const void*> ip;
  std::vector<void*> op;
  for (uint32_t k = 0; k < info.num_inputs; ++k) {
    in[k].assign(info.inputs[k].sample_bytes * batch, 0);
    ip.push_back(in[k].data());
  }
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    out[k].assign(info.outputs[k].sample_bytes * batch, 0);
    op.push_back(out[k].data());
  }
  return nnclient_infer(c, &info, ip.data(), batch, op.data(), 30'000'000);
}

uint64_t slot_bytes(const nnclient_t* c) {
  uint64_t b = 0;
  nnclient_slots(c, nullptr, &b);
  return b;
}

// The example ball classifier at max_batch 64 and bop (the largest robot network here) at 16,
// with the daemon's default limits (max_shared_memory_bytes 256M). One size for every slot, as
// before, made each client hold 16 slots of bop at batch 16 and refused the second client.
TEST(Memory, EightClientsOfBallAndBopFitTheDefaultBudget) {
  const std::string bop = std::string(NND_SHARED_MODELS_DIR) + "/bop.h5";
  NND_REQUIRE_FILE(bop);
  Daemon d("memory8");
  const auto cfg = d.write_config(
      "nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 64) + model_yaml("bop", bop, 16));
  ASSERT_TRUE(d.start(cfg)) << d.log();

  std::vector<nnclient_t*> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(open_at(d.socket_path()));
    ASSERT_NE(clients.back(), nullptr);
  }
  for (nnclient_t* c : clients) {
    EXPECT_EQ(infer_zeros(c, "ball", 1), NNCLIENT_OK) << nnclient_last_error(c);
    EXPECT_EQ(infer_zeros(c, "bop", 1), NNCLIENT_OK) << nnclient_last_error(c);
  }
  // A vision process that says what it runs: ball patches in batches of up to 64.
  nnclient_open_options_t o{};
  const char* models[] = {"ball"};
  o.models = models;
  o.num_models = 1;
  o.max_batch = 64;
  o.slots = 4;
  nnclient_t* vision = open_at(d.socket_path(), o);
  ASSERT_NE(vision, nullptr);
  EXPECT_EQ(infer_zeros(vision, "ball", 64), NNCLIENT_OK) << nnclient_last_error(vision);

  nnclient_daemon_info_t di{};
  di.struct_size = sizeof di;
  ASSERT_EQ(nnclient_daemon_info(vision, &di), NNCLIENT_OK);
  EXPECT_EQ(di.clients, 9u);
  uint32_t index = 0;
  nnclient_client_info_t ci{};
  ci.struct_size = sizeof ci;
  uint64_t sum = 0;
  while (nnclient_client_info(vision, index, &ci) == NNCLIENT_OK) {
    std::printf("client %u: %s pid %u, %u slots of %llu bytes, %.2f MiB\n", index, ci.name, ci.pid,
                ci.slots, static_cast<unsigned long long>(ci.slot_bytes),
                static_cast<double>(ci.shared_memory_bytes) / (1 << 20));
    sum += ci.shared_memory_bytes;
    ++index;
  }
  EXPECT_EQ(index, 9u);
  EXPECT_EQ(sum, di.shared_memory_bytes);
  EXPECT_EQ(ci.slots, 4u);  // the last one listed is the vision client
  std::printf("all clients: %.2f MiB of the default 256 MiB budget\n",
              static_cast<double>(sum) / (1 << 20));
  EXPECT_LT(sum, uint64_t{256} << 20);
  EXPECT_TRUE(fs::exists(d.socket_path()));
  for (nnclient_t* c : clients) nnclient_close(c);
  nnclient_close(vision);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// Defect: after a reload raised a model's max_batch, existing handles got NNCLIENT_E_SHAPE for
// the larger batches forever (their slots were sized at the hand-shake). Now the handle grows.
TEST(Memory, ReloadRaisingMaxBatchGrowsTheSlots) {
  Daemon d("memgrow");
  const auto cfg = d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 4));
  ASSERT_TRUE(d.start(cfg)) << d.log();
  nnclient_t* c = open_at(d.socket_path());
  ASSERT_NE(c, nullptr);
  const uint64_t one = slot_bytes(c);
  EXPECT_EQ(infer_zeros(c, "ball", 4), NNCLIENT_OK) << nnclient_last_error(c);
  const uint64_t four = slot_bytes(c);
  EXPECT_GT(four, one);
  EXPECT_EQ(infer_zeros(c, "ball", 64), NNCLIENT_E_SHAPE);  // over max_batch 4

  d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 64));
  ASSERT_TRUE(d.reload()) << d.log();
  EXPECT_EQ(infer_zeros(c, "ball", 64), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_GT(slot_bytes(c), four);
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A handle with requests in flight grows after they are answered; their outputs stay readable
// (the old segment stays mapped while a request refers to it). Only a request begun and not yet
// submitted keeps it from growing, and the caller learns why.
TEST(Memory, GrowingWaitsForTheRequestsInFlight) {
  Daemon d("meminflight");
  const auto cfg = d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 32));
  ASSERT_TRUE(d.start(cfg)) << d.log();
  nnclient_t* c = open_at(d.socket_path());
  ASSERT_NE(c, nullptr);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  const uint64_t before = slot_bytes(c);

  // Two in flight, then a request too large for the slots.
  nnclient_request_t* small[2] = {};
  for (auto& r : small) {
    ASSERT_EQ(nnclient_request_begin(c, &info, 1, &r), NNCLIENT_OK);
    std::memset(nnclient_request_input(r, 0), 0, info.inputs[0].sample_bytes);
    ASSERT_EQ(nnclient_submit(c, r, nullptr), NNCLIENT_OK);
  }
  nnclient_request_t* big = nullptr;
  ASSERT_EQ(nnclient_request_begin(c, &info, 32, &big), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_GT(slot_bytes(c), before);
  for (auto& r : small) {
    EXPECT_EQ(nnclient_wait(c, r, 30'000'000), NNCLIENT_OK) << nnclient_last_error(c);
    EXPECT_NE(nnclient_request_output(r, 0), nullptr);
    nnclient_request_release(c, r);
  }
  std::memset(nnclient_request_input(big, 0), 0, 32 * info.inputs[0].sample_bytes);
  ASSERT_EQ(nnclient_submit(c, big, nullptr), NNCLIENT_OK);
  EXPECT_EQ(nnclient_wait(c, big, 30'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  nnclient_request_release(c, big);
  nnclient_close(c);

  // A begun request holds a slot of the segment it will be sent from.
  d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 64));
  ASSERT_TRUE(d.reload()) << d.log();
  c = open_at(d.socket_path());
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  nnclient_request_t* held = nullptr;
  ASSERT_EQ(nnclient_request_begin(c, &info, 1, &held), NNCLIENT_OK);
  EXPECT_EQ(nnclient_request_begin(c, &info, 64, &big), NNCLIENT_E_SHAPE);
  EXPECT_NE(std::string(nnclient_last_error(c)).find("begun request"), std::string::npos)
      << nnclient_last_error(c);
  nnclient_request_release(c, held);
  ASSERT_EQ(nnclient_request_begin(c, &info, 64, &big), NNCLIENT_OK) << nnclient_last_error(c);
  nnclient_request_release(c, big);
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// A short budget gives fewer slots (logged), and refuses only when one slot does not fit.
TEST(Memory, TheBudgetCutsSlotsBeforeItRefuses) {
  Daemon d("membudget");
  const auto cfg = d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 64),
                                  "  max_shared_memory_bytes: 1M\n");
  ASSERT_TRUE(d.start(cfg)) << d.log();
  nnclient_open_options_t o{};
  o.max_batch = 64;
  o.slots = 64;
  nnclient_t* c = open_at(d.socket_path(), o);
  ASSERT_NE(c, nullptr);
  uint32_t slots = 0;
  ASSERT_EQ(nnclient_slots(c, &slots, nullptr), NNCLIENT_OK);
  EXPECT_GE(slots, 1u);
  EXPECT_LT(slots, 64u);
  EXPECT_EQ(infer_zeros(c, "ball", 64), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_TRUE(eventually([&] { return d.log().find("fewer slots than the 64 asked") != std::string::npos; }, 5000))
      << d.log();
  // The budget is now nearly all this client's: the next one asking as much is refused.
  nnclient_open_options_t o2 = o;
  o2.struct_size = sizeof o2;
  o2.endpoint = d.socket_path().c_str();
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* second = nnclient_open_with(&o2, &st);
  if (second) {
    // It fitted in what was left: it must have got at most what the budget holds.
    uint32_t s2 = 0;
    nnclient_slots(second, &s2, nullptr);
    EXPECT_LE(s2 + slots, 64u);
    nnclient_close(second);
  } else {
    EXPECT_EQ(st, NNCLIENT_E_MEMORY_LIMIT);
    EXPECT_NE(std::string(nnclient_last_error(nullptr)).find("max_shared_memory_bytes"),
              std::string::npos);
  }
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

// Options are checked: an unknown model name fails the open with the served list in the message,
// and a struct_size that was not set is refused.
TEST(Memory, OpenOptionsAreChecked) {
  Daemon d("memopts");
  const auto cfg = d.write_config("nnd.yaml", model_yaml("ball", model_path("ball_patch.h5"), 8));
  ASSERT_TRUE(d.start(cfg)) << d.log();
  nnclient_open_options_t o{};
  o.struct_size = sizeof o;
  o.endpoint = d.socket_path().c_str();
  const char* models[] = {"bal"};
  o.models = models;
  o.num_models = 1;
  nnclient_status st = NNCLIENT_OK;
  EXPECT_EQ(nnclient_open_with(&o, &st), nullptr);
  EXPECT_EQ(st, NNCLIENT_E_UNKNOWN_MODEL);
  EXPECT_NE(std::string(nnclient_last_error(nullptr)).find("ball"), std::string::npos)
      << nnclient_last_error(nullptr);
  o.struct_size = 0;
  EXPECT_EQ(nnclient_open_with(&o, &st), nullptr);
  EXPECT_EQ(st, NNCLIENT_E_INVALID_ARGUMENT);
  o.struct_size = sizeof o;
  o.num_models = 0;
  o.slots = 65;
  EXPECT_EQ(nnclient_open_with(&o, &st), nullptr);
  EXPECT_EQ(st, NNCLIENT_E_INVALID_ARGUMENT);
  EXPECT_EQ(d.stop(), 0) << d.log();
}

}  // namespace
}  // namespace nnd::integ
