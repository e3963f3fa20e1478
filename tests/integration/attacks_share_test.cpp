// Issue 36, attacks 2 and 3: fair shares between users; a huge model does not lock out default clients.
#include <gtest/gtest.h>

#include "attack_support.h"

namespace {

using namespace nnd::integ;
using namespace nnd::integ::attack;

// ---- 2. Fair shares between users -------------------------------------------------------------

// Opens a handle as nnctl does: one slot.
nnclient_t* open_control(const Daemon& d) {
  nnclient_open_options_t o{};
  o.struct_size = sizeof o;
  o.slots = 1;
  const std::string path = d.socket_path();
  o.endpoint = path.c_str();
  nnclient_status st = NNCLIENT_OK;
  return nnclient_open_with(&o, &st);
}

TEST(Attack, OneUidCannotTakeEverySession) {
  NEEDS_ROOT();
  Daemon d("fair_sessions");
  open_folders(d);
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(), admit_strangers() + "  max_clients: 8\n"))) << d.log();
  Child greedy = hold_sessions(d, kMember, kMember, 100, 1, 0);
  const auto [g, gst] = held(greedy);
  EXPECT_EQ(gst, NND_IPC_E_TOO_MANY_CLIENTS);
  Child other = hold_sessions(d, kOther, kGroup, 100, 1, 0);
  const auto [o, ost] = held(other);
  EXPECT_GE(o, 1) << "a second uid gets no session while the first holds " << g;
  // And nnctl (root here, a control connection: one slot) is never locked out.
  nnclient_t* ctl = open_control(d);
  EXPECT_NE(ctl, nullptr) << nnclient_last_error(nullptr);
  if (ctl) {
    nnclient_daemon_info_t di{};
    di.struct_size = sizeof di;
    EXPECT_EQ(nnclient_daemon_info(ctl, &di), NNCLIENT_OK);
    nnclient_close(ctl);
  }
  figure("max_clients 8: sessions the first uid holds / a second uid gets", std::to_string(g) + " / " + std::to_string(o));
  kill_child(greedy);
  kill_child(other);
  EXPECT_EQ(d.stop(), 0);
}

TEST(Attack, OneUidCannotTakeAllSharedMemory) {
  NEEDS_ROOT();
  Daemon d("fair_memory");
  open_folders(d);
  // ball at max_batch 256: a request of about 1.3 MiB; 64 such slots are far over the 8 MiB budget.
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball(256), admit_strangers() + "  max_shared_memory_bytes: 8M\n")))
      << d.log();
  Child greedy = hold_sessions(d, kMember, kMember, 100, 64, UINT64_MAX);
  const auto [g, gst] = held(greedy);
  EXPECT_EQ(gst, NND_IPC_E_MEMORY_LIMIT);
  Child other = hold_sessions(d, kOther, kGroup, 1, 64, UINT64_MAX);
  const auto [o, ost] = held(other);
  EXPECT_EQ(o, 1) << "a second uid gets no shared memory (status " << ost << ")";
  nnclient_t* ctl = open_control(d);
  EXPECT_NE(ctl, nullptr) << nnclient_last_error(nullptr);
  if (ctl) nnclient_close(ctl);
  figure("max_shared_memory_bytes 8M: sessions of the first uid / the second uid gets", std::to_string(g) + " / " + std::to_string(o));
  kill_child(greedy);
  kill_child(other);
  EXPECT_EQ(d.stop(), 0);
}

// ---- 3. A huge model does not lock out default clients ----------------------------------------

// huge_input.onnx declares 64 MiB per sample (in and out: 128 MiB a request) in an 84-byte file;
// with max_shared_memory_bytes 64M one slot for it does not fit. A plain nnclient_open client
// was refused; now it gets slots for the models that fit and the exact limit for the huge one.
TEST(Attack, HugeModelDoesNotLockOutDefaultClients) {
  Daemon d("huge");
  ASSERT_TRUE(d.start(d.write_config("nnd.yaml", ball() + model_yaml("huge", fixture("huge_input.onnx")),
                                     "  max_shared_memory_bytes: 64M\n")))
      << d.log();
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(d.socket_path().c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_status_name(st) << ": " << nnclient_last_error(nullptr) << "\n" << d.log();
  uint32_t slots = 0;
  uint64_t slot_bytes = 0;
  ASSERT_EQ(nnclient_slots(c, &slots, &slot_bytes), NNCLIENT_OK);
  nnclient_model_info_t info{};
  ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
  std::vector<float> in(info.inputs[0].sample_bytes / 4, 0.5f);
  std::vector<std::vector<float>> out(info.num_outputs);
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    out[k].resize(info.outputs[k].sample_bytes / 4);
    outp.push_back(out[k].data());
  }
  const void* inp[1] = {in.data()};
  EXPECT_EQ(nnclient_infer(c, &info, inp, 1, outp.data(), 10'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  // The huge model: the limit by name, not the SHAPE status a malformed request gets.
  nnclient_model_info_t huge{};
  ASSERT_EQ(nnclient_model_info(c, "huge", &huge), NNCLIENT_OK);
  std::vector<float> hin(huge.inputs[0].sample_bytes / 4), hout(huge.outputs[0].sample_bytes / 4);
  const void* hinp[1] = {hin.data()};
  void* houtp[1] = {hout.data()};
  const nnclient_status hs = nnclient_infer(c, &huge, hinp, 1, houtp, 10'000'000);
  const std::string why = nnclient_last_error(c);
  EXPECT_EQ(hs, NNCLIENT_E_MEMORY_LIMIT) << nnclient_status_name(hs) << ": " << why;
  EXPECT_NE(why.find("max_shared_memory_bytes"), std::string::npos) << why;
  // The handle still serves the small model afterwards, with the slots it had.
  EXPECT_EQ(nnclient_infer(c, &info, inp, 1, outp.data(), 10'000'000), NNCLIENT_OK) << nnclient_last_error(c);
  uint32_t slots_after = 0;
  uint64_t bytes_after = 0;
  ASSERT_EQ(nnclient_slots(c, &slots_after, &bytes_after), NNCLIENT_OK);
  EXPECT_EQ(bytes_after, slot_bytes);
  figure("huge model served: what a default client gets",
         std::to_string(slots) + " slots of " + std::to_string(slot_bytes) + " bytes; ball OK; huge: " +
             nnclient_status_name(hs) + " (" + why + ")");
  nnclient_close(c);
  EXPECT_EQ(d.stop(), 0);
}

}  // namespace
