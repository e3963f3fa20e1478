// vision_process: behaves like a robot's vision process talking to nnd.
//
// Per camera frame it sends
//   - one batched request to the ball classifier (model "ball"): N 32x32 ball-candidate patches,
//   - one whole-image request to the detector (model "detector"): a 240x320x2 uint8 YUYV image,
// both written straight into shared memory (zero-copy), submitted together so the daemon may run
// them side by side, then waits for both and prints the frame's latency. At the end it prints
// min / p50 / p99 / max over all frames.
//
//   vision_process [--endpoint E] [--frames N] [--patches N] [--fps F] [--timeout-ms T]
//                  [--ball-model NAME] [--detector-model NAME]
//
// Exit status: 0 all frames answered, 1 a daemon/model error (the message names the status),
// 2 usage error. Built as an ordinary client: find_package(nnclient) and nnclient::nnclient.
#include <nnclient.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string endpoint;
  int frames = 30;
  int patches = 16;
  double fps = 30;
  int timeout_ms = 100;
  std::string ball_model = "ball";
  std::string detector_model = "detector";
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "vision_process: %s\n"
               "usage: vision_process [--endpoint E] [--frames N] [--patches N] [--fps F]\n"
               "                      [--timeout-ms T] [--ball-model NAME] [--detector-model NAME]\n"
               "  --frames N        frames to process (default 30)\n"
               "  --patches N       ball-candidate patches per frame, one batched request (16)\n"
               "  --fps F           camera frame rate to pace at; 0 = as fast as possible (30)\n"
               "  --timeout-ms T    per-frame timeout of each request (100)\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") usage("run a vision-process-like load against nnd");
    if (i + 1 >= argc) usage(("missing value for " + a).c_str());
    const char* v = argv[++i];
    char* end = nullptr;
    if (a == "--endpoint") o.endpoint = v;
    else if (a == "--ball-model") o.ball_model = v;
    else if (a == "--detector-model") o.detector_model = v;
    else if (a == "--frames") o.frames = static_cast<int>(std::strtol(v, &end, 10));
    else if (a == "--patches") o.patches = static_cast<int>(std::strtol(v, &end, 10));
    else if (a == "--timeout-ms") o.timeout_ms = static_cast<int>(std::strtol(v, &end, 10));
    else if (a == "--fps") o.fps = std::strtod(v, &end);
    else usage(("unknown option " + a).c_str());
    if (end && *end) usage(("bad number for " + a).c_str());
  }
  if (o.frames < 1 || o.patches < 1 || o.timeout_ms < 1 || o.fps < 0) usage("values out of range");
  return o;
}

// A synthetic camera: a moving bright blob on a gradient, as YUYV bytes.
void render_frame(std::span<std::byte> image, int frame) {
  const size_t n = image.size();
  for (size_t i = 0; i < n; ++i) {
    image[i] = static_cast<std::byte>((i / 2 + static_cast<size_t>(frame) * 3) & 0xff);
  }
}

void cut_patches(std::span<std::byte> patches, int frame) {
  // Whatever the ball model's input dtype, fill it with a plausible byte/float pattern.
  for (size_t i = 0; i < patches.size(); ++i) {
    patches[i] = static_cast<std::byte>((i * 7 + static_cast<size_t>(frame)) & 0x3f);
  }
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  try {
    nnclient::Client client(opt.endpoint);
    const nnclient::ModelInfo ball = client.model_info(opt.ball_model);
    const nnclient::ModelInfo detector = client.model_info(opt.detector_model);
    uint32_t patches = static_cast<uint32_t>(opt.patches);
    if (ball.max_batch() && patches > ball.max_batch()) {
      std::printf("note: %u patches exceed %s's max_batch %u; using %u\n", patches,
                  ball.name().c_str(), ball.max_batch(), ball.max_batch());
      patches = ball.max_batch();
    }
    std::printf("ball:     %s %s -> %s (engine %s)\n", ball.name().c_str(),
                nnclient::dims_string(ball.input(0)).c_str(),
                nnclient::dims_string(ball.output(0)).c_str(), ball.engine().c_str());
    std::printf("detector: %s %s %s -> %s (engine %s)\n", detector.name().c_str(),
                nnclient::dims_string(detector.input(0)).c_str(),
                nnclient::dtype_name(detector.input(0).dtype),
                nnclient::dims_string(detector.output(0)).c_str(), detector.engine().c_str());

    const auto timeout = std::chrono::milliseconds(opt.timeout_ms);
    const auto period = opt.fps > 0 ? std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(1.0 / opt.fps))
                                    : Clock::duration::zero();
    std::vector<double> latencies;
    auto next = Clock::now();
    for (int f = 0; f < opt.frames; ++f) {
      const auto t0 = Clock::now();
      nnclient::Request det = client.begin(detector, 1);
      for (uint32_t k = 0; k < detector.inputs().size(); ++k) render_frame(det.input(k), f);
      det.submit(timeout);  // deadline: a late frame is worthless
      nnclient::Request balls = client.begin(ball, patches);
      for (uint32_t k = 0; k < ball.inputs().size(); ++k) cut_patches(balls.input(k), f);
      balls.submit(timeout);
      balls.wait(timeout);
      det.wait(timeout);
      const double lat = ms(Clock::now() - t0);
      latencies.push_back(lat);

      std::span<const float> scores = balls.output(0);
      const float best = scores.empty() ? 0.0f : *std::max_element(scores.begin(), scores.end());
      std::span<const float> d = det.output(0);
      std::printf("frame %4d: %u patches + 1 image in %7.3f ms  (best ball score %.4f, "
                  "detector[0] %.4f)\n", f, patches, lat, best, d.empty() ? 0.0f : d[0]);
      if (period > Clock::duration::zero()) {
        next += period;
        std::this_thread::sleep_until(next);
      }
    }
    std::sort(latencies.begin(), latencies.end());
    const auto pct = [&](double p) {
      return latencies[std::min(latencies.size() - 1,
                                static_cast<size_t>(p * static_cast<double>(latencies.size())))];
    };
    std::printf("%zu frames: latency min %.3f ms, p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                latencies.size(), latencies.front(), pct(0.5), pct(0.99), latencies.back());
  } catch (const nnclient::Error& e) {
    std::fprintf(stderr, "vision_process: %s\n", e.what());
    return 1;
  }
  return 0;
}
