// Runs one batch on an engine: gathers the inputs of the batch's requests from their data areas
// into contiguous buffers, calls the engine once, and scatters the outputs back to each request's
// data area. A batch of a single request runs in place on its data area (zero copy): the
// request's inputs and outputs are already laid out batch-major and 64-byte aligned
// (ipc/nnd_ipc.h), which is what the engine takes.
//
// It knows nothing of sessions, rings or the scheduler: a request is a data area, its layout
// (daemon/ipc/segment.h compute_layout) and its sample count, so a test drives it with plain
// buffers and a fake engine.
//
// Threads: one BatchRunner per worker thread (its gather/scatter buffers only grow and are reused
// for every batch, so the hot path stops allocating once they reached the largest batch). No
// lock: the data areas of the requests of a batch belong to the worker running it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/engine/engine.h"
#include "daemon/ipc/segment.h"
#include "ipc/nnd_ipc.h"

namespace nnd::daemon::ipc {

// What the runner needs to know of a model's inputs and outputs (ServedModel's figures).
struct ModelIo {
  std::span<const DType> input_dtypes;          // per graph input
  std::span<const size_t> input_sample_bytes;   // per graph input
  std::span<const DType> output_dtypes;         // per graph output (float32 or int64)
  std::span<const size_t> output_sample_bytes;  // per graph output
};

// One request of a batch.
struct BatchPart {
  uint8_t* data = nullptr;            // the request's data area
  const DataLayout* layout = nullptr; // where its inputs and outputs are in `data`
  uint32_t batch = 0;                 // samples
};

struct BatchOutcome {
  int32_t status = NND_IPC_OK;  // NND_IPC_E_INTERNAL when the engine threw
  uint32_t samples = 0;         // sum of the parts' samples: the batch the engine ran
  int64_t start_ns = 0;         // CLOCK_MONOTONIC when the engine was called
  int64_t run_ns = 0;           // engine time
  std::string error;            // what the engine threw
};

class BatchRunner {
 public:
  // Runs `parts` (at least one, all of the same model, with layouts computed for `io`) as one
  // engine call of sum(batch) samples. On success every part's outputs are in its data area;
  // when the engine throws, the outputs are left as they are and the status says so.
  BatchOutcome run(Engine& engine, const ModelIo& io, std::span<const BatchPart> parts);

 private:
  std::array<std::vector<uint8_t>, NND_IPC_MAX_TENSORS> in_;
  std::array<std::vector<float>, NND_IPC_MAX_TENSORS> out_;
};

}  // namespace nnd::daemon::ipc
