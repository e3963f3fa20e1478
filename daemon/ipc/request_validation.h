// Validation of one request a client wrote into its shared-memory slot: the only code that turns
// untrusted slot bytes into something the scheduler and the workers use.
//
// It is a pure function of (the slot's bytes, the session's limits, a view of the served models,
// the time): no server state, no allocation, no system call. The IPC server calls it for every
// request it pops from a submit ring, and the fuzz target tests/fuzz/fuzz_request.cpp calls the
// very same functions on arbitrary segment bytes.
//
// What it does not decide (server state, not request bytes): whether the daemon is draining, and
// whether the client already has max_inflight_per_client requests queued.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "daemon/ipc/segment.h"
#include "ipc/nnd_ipc.h"

namespace nnd::daemon::ipc {

// What validation needs to know about one served model; the server builds one per model of the
// current snapshot (pointers into the ServedModel, which outlives the view).
struct ModelView {
  std::string_view name;
  uint64_t signature = 0;
  uint32_t max_batch = 1;  // >= 1
  const size_t* input_sample_bytes = nullptr;
  size_t num_inputs = 0;
  const size_t* output_sample_bytes = nullptr;
  size_t num_outputs = 0;
};

// The session's limits: the daemon's own copies, never read from shared memory.
struct RequestLimits {
  uint64_t slot_data_bytes = 0;    // data area of one slot of this session
  uint64_t max_request_bytes = 0;  // input bytes of one request (0: no limit besides the slot)
};

// The request fields of a slot, each loaded from shared memory exactly once.
struct RequestFields {
  char model[NND_IPC_MAX_NAME];
  uint64_t signature;
  uint32_t batch;
  int64_t deadline_ns;
  uint64_t input_bytes;
};

// Copies the request fields out of a slot (the client may change them at any time afterwards;
// only the copy is checked and used).
RequestFields read_request_fields(const nnd_ipc_slot* slot);

struct ValidatedRequest {
  size_t model = 0;          // index into the model table
  uint32_t batch = 0;        // 1..max_batch
  int64_t deadline_ns = 0;   // 0 = none, else in the future
  DataLayout layout;         // fits in the slot's data area
};

// Checks `f` against the models and limits. Returns NND_IPC_OK and fills *out, or the error
// status for the client. *model_index is the matched model (for its error statistics) or
// SIZE_MAX when the name matched none; it is set in both cases. Checks, in order:
//   name not NUL-terminated            -> NND_IPC_E_BAD_REQUEST
//   no model of that name              -> NND_IPC_E_UNKNOWN_MODEL
//   signature differs                  -> NND_IPC_E_MODEL_CHANGED
//   batch 0 or over max_batch, layout overflow, input_bytes not the layout's inputs end (with or
//   without the final alignment padding), or inputs+outputs larger than the slot's data area
//                                      -> NND_IPC_E_SHAPE
//   input bytes over max_request_bytes -> NND_IPC_E_REQUEST_TOO_LARGE
//   deadline already passed            -> NND_IPC_E_DEADLINE
int32_t validate_request(const RequestFields& f, std::span<const ModelView> models,
                         const RequestLimits& limits, int64_t now_ns, ValidatedRequest* out,
                         size_t* model_index);

}  // namespace nnd::daemon::ipc
