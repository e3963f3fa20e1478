// Issue 36, attack 8: bounded model memory.
#include <gtest/gtest.h>

#include "attack_support.h"

namespace {

using namespace nnd::integ;
using namespace nnd::integ::attack;

// ---- 8. Bounded model memory: the Pad bomb ------------------------------------------------------

// pad_bomb.onnx (181 bytes) pads a 1x1 input to an 8 GiB tensor. It passed the validator child;
// under `ulimit -v` the whole message was "std::bad_alloc". Now its need is computed from the
// plan before anything is allocated and refused, naming the model, the file and the size, in the
// validator child as in the daemon; the other model serves.
TEST(Attack, PadBombIsRefusedByName) {
  for (const char* validation : {"isolated", "in_process"}) {
    Daemon d(std::string("bomb_") + validation);
    const auto cfg = d.write_config("nnd.yaml", ball() + model_yaml("bomb", fixture("pad_bomb.onnx")),
                                    std::string("  validate_models: ") + validation + "\n");
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    // As under `ulimit -v`: never 8 GiB. (Sanitizer builds reserve terabytes of shadow address
    // space and cannot start under such a limit; there the refusal by name is checked alone.)
    d.set_address_space_limit(rlim_t{4} << 30);
#endif
    ASSERT_TRUE(d.start(cfg, 60000)) << d.log();
    const std::string log = d.log();
    const size_t p = log.find("not serving model 'bomb'");
    ASSERT_NE(p, std::string::npos) << log;
    const std::string line = log.substr(p, log.find('\n', p) - p);
    EXPECT_NE(line.find("pad_bomb.onnx"), std::string::npos) << line;
    EXPECT_NE(line.find("max_model_memory_bytes"), std::string::npos) << line;
    EXPECT_EQ(line.find("bad_alloc"), std::string::npos) << line;
    nnclient_status st = NNCLIENT_OK;
    nnclient_t* c = nnclient_open(d.socket_path().c_str(), &st);
    ASSERT_NE(c, nullptr);
    nnclient_model_info_t info{};
    EXPECT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK);
    nnclient_close(c);
    figure(std::string("pad bomb, validate_models ") + validation + ": the error", line);
    EXPECT_EQ(d.stop(), 0);
  }
}

}  // namespace
