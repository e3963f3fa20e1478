// cnn_bbv_harness: B-Human's CompiledNN side of the basic-block cost model (bbv_blocks.h). Built
// by compare_compilednn.sh against CompiledNN (../shared/anchors; C++14, not part of nnd's build):
// compiles a Keras model with the NAO settings (SSE only, no AVX2/FMA), writes the code it
// generated as regions in nnd's format, and applies the network, for valgrind's exp-bbv to count.
//
//   cnn_bbv_harness MODEL.h5 REGIONS [UINT8] [RUNS]
//
// The code's address and size come from a JitRuntime whose _add() records them (CompiledNN takes
// an external runtime); only the text section (instructions) is written. Inputs follow the
// anchors' cnn_harness (nnrun's pattern; UINT8 1 feeds input 0 as camera bytes). After the runs
// a loop of about 60 M instructions closes exp-bbv's last interval.
#include "CompiledNN/CompiledNN.h"
#include "CompiledNN/Model.h"

#include <asmjit/asmjit.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

class RecordingRuntime : public asmjit::JitRuntime {
 public:
  std::vector<std::pair<const uint8_t*, size_t>> regions;

  asmjit::Error _add(void** dst, asmjit::CodeHolder* code) noexcept override {
    const asmjit::Error e = asmjit::JitRuntime::_add(dst, code);
    if (e == asmjit::kErrorOk) regions.emplace_back(static_cast<const uint8_t*>(*dst), code->textSection()->bufferSize());
    return e;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.h5 REGIONS [UINT8] [RUNS]\n", argv[0]);
    return 2;
  }
  const bool u8 = argc > 3 && std::atoi(argv[3]) != 0;
  const int runs = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
  NeuralNetwork::Model model;
  model.load(argv[1]);
  if (u8) model.setInputUInt8(0);
  NeuralNetwork::CompilationSettings settings;
  settings.useAVX2 = false;
  settings.useFMA3 = false;
  RecordingRuntime rt;
  NeuralNetwork::CompiledNN nn(&rt);
  nn.compile(model, settings);
  if (!nn.valid()) {
    std::fprintf(stderr, "compile failed\n");
    return 1;
  }
  std::FILE* f = std::fopen(argv[2], "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", argv[2]);
    return 1;
  }
  for (size_t i = 0; i < rt.regions.size(); ++i) {
    std::fprintf(f, "%llx %zu ", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(rt.regions[i].first)),
                 rt.regions[i].second);
    for (size_t b = 0; b < rt.regions[i].second; ++b) std::fprintf(f, "%02x", rt.regions[i].first[b]);
    std::fprintf(f, " CompiledNN code %zu\n", i);
  }
  std::fclose(f);
  std::vector<std::vector<float>> saved(nn.numOfInputs());
  for (size_t k = 0; k < nn.numOfInputs(); ++k) {
    NeuralNetwork::TensorXf& t = nn.input(k);
    for (size_t j = 0; j < t.size(); ++j) {
      saved[k].push_back(u8 && k == 0 ? static_cast<float>((37 * j) % 256)
                                      : static_cast<float>((37 * j + 101 * k) % 256) / 255.0f);
    }
  }
  for (int r = 0; r < runs; ++r) {
    for (size_t k = 0; k < nn.numOfInputs(); ++k) {  // apply() uses its inputs as scratch
      NeuralNetwork::TensorXf& t = nn.input(k);
      if (u8 && k == 0) {
        auto* p = reinterpret_cast<uint8_t*>(t.data());
        for (size_t j = 0; j < t.size(); ++j) p[j] = static_cast<uint8_t>(saved[k][j]);
      } else {
        for (size_t j = 0; j < t.size(); ++j) t[j] = saved[k][j];
      }
    }
    nn.apply();
  }
  volatile uint64_t spin = 0;
  for (int i = 0; i < 20000000; ++i) spin = spin + static_cast<uint64_t>(i);
  std::printf("%s: %zu code region(s), %d run(s); output 0[0] = %g\n", argv[1], rt.regions.size(), runs,
              static_cast<double>(nn.output(0)[0]));
  return 0;
}
