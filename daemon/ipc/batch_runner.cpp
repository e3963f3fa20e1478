#include "daemon/ipc/batch_runner.h"

#include <cstring>
#include <exception>

#include "daemon/ipc/server_support.h"

namespace nnd::daemon::ipc {

BatchOutcome BatchRunner::run(Engine& engine, const ModelIo& io, std::span<const BatchPart> parts) {
  BatchOutcome out;
  for (const BatchPart& p : parts) out.samples += p.batch;
  const DataLayout& l0 = *parts[0].layout;
  const size_t ni = l0.num_inputs, no = l0.num_outputs;
  std::array<InputView, NND_IPC_MAX_TENSORS> inputs;
  std::array<OutputView, NND_IPC_MAX_TENSORS> outputs;
  const bool single = parts.size() == 1;
  if (single) {
    const BatchPart& p = parts[0];
    for (size_t k = 0; k < ni; ++k) inputs[k] = {io.input_dtypes[k], p.data + p.layout->in_off[k]};
    for (size_t k = 0; k < no; ++k) outputs[k] = {io.output_dtypes[k], p.data + p.layout->out_off[k]};
  } else {
    for (size_t k = 0; k < ni; ++k) {
      auto& buf = in_[k];
      buf.resize(uint64_t{out.samples} * io.input_sample_bytes[k]);
      size_t pos = 0;
      for (const BatchPart& p : parts) {
        std::memcpy(buf.data() + pos, p.data + p.layout->in_off[k], p.layout->in_bytes[k]);
        pos += p.layout->in_bytes[k];
      }
      inputs[k] = {io.input_dtypes[k], buf.data()};
    }
    for (size_t k = 0; k < no; ++k) {
      out_[k].resize((uint64_t{out.samples} * io.output_sample_bytes[k] + sizeof(float) - 1) / sizeof(float));
      outputs[k] = {io.output_dtypes[k], out_[k].data()};
    }
  }
  out.start_ns = mono_ns();
  try {
    engine.run(out.samples, std::span<const InputView>(inputs.data(), ni),
               std::span<const OutputView>(outputs.data(), no));
  } catch (const std::exception& e) {
    out.status = NND_IPC_E_INTERNAL;
    out.error = e.what();
  }
  out.run_ns = mono_ns() - out.start_ns;
  if (!single && out.status == NND_IPC_OK) {
    for (size_t k = 0; k < no; ++k) {
      size_t pos = 0;
      const uint8_t* src = reinterpret_cast<const uint8_t*>(out_[k].data());
      for (const BatchPart& p : parts) {
        std::memcpy(p.data + p.layout->out_off[k], src + pos, p.layout->out_bytes[k]);
        pos += p.layout->out_bytes[k];
      }
    }
  }
  return out;
}

}  // namespace nnd::daemon::ipc
