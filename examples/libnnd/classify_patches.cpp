// classify_patches: a batch of 32x32 gray patches through the ball classifier, in this process
// (libnnd's C++ wrapper nnd.hpp, C++17). Patches come as camera bytes: the model is opened with
// its input declared uint8, as a daemon config entry would say `inputs: {patch: uint8}`.
//   classify_patches [MODEL]   (default /usr/share/nnd/models/ball_patch.h5)
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include <nnd.hpp>

int main(int argc, char** argv) try {
  const char* path = argc > 1 ? argv[1] : "/usr/share/nnd/models/ball_patch.h5";
  libnnd::Model ball(path, libnnd::Options().set("inputs.patch", "uint8").set("threads", "auto"));
  const libnnd::TensorInfo in = ball.input(0), out = ball.output(0);

  const uint32_t batch = 8;
  std::vector<uint8_t> patches(batch * in.sample_elements);
  for (size_t i = 0; i < patches.size(); ++i) patches[i] = static_cast<uint8_t>(i * 7);
  std::vector<float> scores(batch * out.sample_elements);
  ball.run(batch, {patches}, {scores});

  std::printf("%s on %s: %u patches, %zu scores each\n", path, ball.engine().c_str(), batch,
              out.sample_elements);
  for (uint32_t b = 0; b < batch; ++b) {
    std::printf("patch %u:", b);
    for (size_t k = 0; k < out.sample_elements; ++k) std::printf(" %.4f", scores[b * out.sample_elements + k]);
    std::printf("\n");
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "classify_patches: %s\n", e.what());
  return 1;
}
