#include "daemon/ipc/request_validation.h"

#include <cstring>

namespace nnd::daemon::ipc {

RequestFields read_request_fields(const nnd_ipc_slot* slot) {
  RequestFields f;
  // The name bytes are copied once; the NUL check below runs on the copy.
  std::memcpy(f.model, slot->model, sizeof(f.model));
  f.signature = shm_load(&slot->signature);
  f.batch = shm_load(&slot->batch);
  f.deadline_ns = shm_load(&slot->deadline_ns);
  f.input_bytes = shm_load(&slot->input_bytes);
  return f;
}

int32_t validate_request(const RequestFields& f, std::span<const ModelView> models,
                         const RequestLimits& limits, int64_t now_ns, ValidatedRequest* out,
                         size_t* model_index) {
  *model_index = SIZE_MAX;
  const size_t len = strnlen(f.model, sizeof(f.model));
  if (len == sizeof(f.model)) return NND_IPC_E_BAD_REQUEST;
  const std::string_view name(f.model, len);
  size_t idx = SIZE_MAX;
  for (size_t i = 0; i < models.size(); ++i) {
    if (models[i].name == name) {
      idx = i;
      break;
    }
  }
  if (idx == SIZE_MAX) return NND_IPC_E_UNKNOWN_MODEL;
  *model_index = idx;
  const ModelView& m = models[idx];
  if (f.signature != m.signature) return NND_IPC_E_MODEL_CHANGED;
  if (f.batch < 1 || f.batch > m.max_batch) return NND_IPC_E_SHAPE;
  DataLayout l;
  if (!compute_layout(m.input_sample_bytes, m.num_inputs, m.output_sample_bytes, m.num_outputs,
                      f.batch, &l)) {
    return NND_IPC_E_SHAPE;
  }
  // input_bytes: the end of the last input, with or without the final alignment padding (the
  // client library reports either).
  if (f.input_bytes != l.inputs_end && f.input_bytes != nnd_ipc_align(l.inputs_end)) {
    return NND_IPC_E_SHAPE;
  }
  if (l.total > limits.slot_data_bytes) return NND_IPC_E_SHAPE;
  // After the shape checks: a request the model cannot take at all is a SHAPE error whatever its
  // size; one the model takes but the daemon's limit does not is REQUEST_TOO_LARGE.
  if (limits.max_request_bytes != 0 && l.inputs_end > limits.max_request_bytes) {
    return NND_IPC_E_REQUEST_TOO_LARGE;
  }
  if (f.deadline_ns != 0 && f.deadline_ns <= now_ns) return NND_IPC_E_DEADLINE;
  out->model = idx;
  out->batch = f.batch;
  out->deadline_ns = f.deadline_ns;
  out->layout = l;
  return NND_IPC_OK;
}

}  // namespace nnd::daemon::ipc
