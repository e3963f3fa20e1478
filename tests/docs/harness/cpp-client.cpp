// The program around a documented C++ client fragment that runs "ball": the buffers it names
// (patches, scores, batch), sized from the served model.
#include <nnclient.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

int main() try {
  const uint32_t batch = 4;
  nnclient::ModelInfo served = nnclient::Client().model_info("ball");
  std::vector<float> patches(batch * served.input(0).sample_bytes / sizeof(float), 0.5f);
  std::vector<float> scores(batch * served.output(0).sample_bytes / sizeof(float));
@FRAGMENT@
  std::printf("scores[0] = %g\n", scores[0]);
  return 0;
} catch (const nnclient::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
