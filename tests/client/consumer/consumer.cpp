// Uses the installed C++ wrapper; built as C++17 (consumer_cpp17) and C++20 (consumer_cpp).
//   consumer_cpp NOBODY_SOCKET [FAKE_DAEMON_SOCKET]
// argv[1] is an endpoint nobody listens on (the error path); argv[2], when given, is the tests'
// fake daemon, on which the copying and the zero-copy inference run through nnclient::span.
#include <nnclient.hpp>

#include <array>
#include <cstdio>
#include <vector>

static int fail(const char* what) {
  std::printf("FAIL (C++%ld): %s\n", static_cast<long>(__cplusplus), what);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) return 2;
  try {
    nnclient::Client client(argv[1]);
    return fail("connected to nobody");
  } catch (const nnclient::Error& e) {
    std::printf("%s\n", e.what());
    if (e.status() != NNCLIENT_E_DAEMON_NOT_RUNNING) return 1;
  }
  if (argc == 2) return 0;

  nnclient::Client client(argv[2]);
  const nnclient::ModelInfo info = client.model_info("double");  // y = 2 x, x and y of 4 floats
  nnclient::span<const nnclient::TensorInfo> inputs = info.inputs();
  if (inputs.size() != 1 || info.input(0).sample_bytes != 16) return fail("model info");

  // Copying inference from a std::vector, a std::array and a raw pointer + size.
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  std::array<float, 8> y{};
  client.infer(info, {nnclient::as_bytes(x)}, 2, {nnclient::as_writable_bytes(y)},
               std::chrono::milliseconds(2000));
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] != 2 * x[i]) return fail("infer result");
  }
  float raw_out[4] = {};
  const float raw_in[4] = {4, 3, 2, 1};
  client.infer(info, {nnclient::as_bytes(raw_in)}, 1, {nnclient::as_writable_bytes(raw_out)},
               std::chrono::milliseconds(2000));
  if (raw_out[0] != 8 || raw_out[3] != 2) return fail("infer from C arrays");
  const nnclient::span<const std::byte> in1(reinterpret_cast<const std::byte*>(x.data()), 16);
  const nnclient::span<std::byte> out1(reinterpret_cast<std::byte*>(raw_out), sizeof raw_out);
  std::vector<nnclient::span<const std::byte>> ins{in1};
  std::vector<nnclient::span<std::byte>> outs{out1};
  client.infer(info, ins, 1, outs, std::chrono::milliseconds(2000));
  if (raw_out[3] != 8) return fail("infer from vectors of spans");

  // Zero-copy request: spans over shared memory.
  nnclient::Request r = client.begin(info, 1);
  nnclient::span<float> in = r.input<float>(0);
  if (in.size() != 4) return fail("request input size");
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) + 0.5f;
  r.submit();
  r.wait(std::chrono::milliseconds(2000));
  nnclient::span<const float> out = r.output<float>(0);
  float sum = 0;
  for (const float v : out) sum += v;
  if (out.size() != 4 || sum != 2 * (0.5f + 1.5f + 2.5f + 3.5f)) return fail("request output");
  std::printf("C++%ld wrapper: infer and zero-copy request OK\n", static_cast<long>(__cplusplus));
  return 0;
}
