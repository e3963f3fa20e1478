#include "daemon/config/serving_settings.h"

#include <algorithm>

namespace nnd::daemon {

namespace {

// One row per field of ServingSettings, named by its YAML key.
struct ServingKey {
  const char* key;
  bool (*same)(const ServingSettings& a, const ServingSettings& b);
};

#define NND_SERVING_KEY(yaml_key, field) \
  ServingKey { yaml_key, [](const ServingSettings& a, const ServingSettings& b) { return a.field == b.field; } }

constexpr ServingKey kServingKeys[] = {
    NND_SERVING_KEY("endpoint", endpoint),
    NND_SERVING_KEY("user", allowed_uid),
    NND_SERVING_KEY("group", allowed_gid),
    NND_SERVING_KEY("control_group", control_gid),
    NND_SERVING_KEY("socket_mode", socket_mode),
    NND_SERVING_KEY("run_as", run_as_uid),
    NND_SERVING_KEY("workers", workers),
    NND_SERVING_KEY("cpu_affinity", cpu_affinity),
    NND_SERVING_KEY("realtime_priority", realtime_priority),
    NND_SERVING_KEY("max_clients", max_clients),
    NND_SERVING_KEY("max_inflight_per_client", max_inflight_per_client),
    NND_SERVING_KEY("slots_per_client", slots_per_client),
    NND_SERVING_KEY("spin_us", spin_us),
    NND_SERVING_KEY("max_request_bytes", max_request_bytes),
    NND_SERVING_KEY("max_shared_memory_bytes", max_shared_memory_bytes),
    NND_SERVING_KEY("max_clients_per_uid", max_clients_per_uid),
    NND_SERVING_KEY("max_shared_memory_bytes_per_uid", max_shared_memory_bytes_per_uid),
    NND_SERVING_KEY("handshake_timeout_ms", handshake_timeout_ms),
    NND_SERVING_KEY("max_pending_connections", max_pending_connections),
};

#undef NND_SERVING_KEY

// A tripwire: a field added to ServingSettings needs its row above (this size is libstdc++'s on
// x86-64 and AArch64 alike).
static_assert(sizeof(ServingSettings) == 160, "a new ServingSettings field needs a row in kServingKeys");

}  // namespace

std::vector<std::string> changed_serving_keys(const ServingSettings& a, const ServingSettings& b) {
  std::vector<std::string> out;
  for (const ServingKey& k : kServingKeys) {
    if (!k.same(a, b)) out.emplace_back(k.key);
  }
  return out;
}

uint32_t clients_per_uid(const ServingSettings& s) {
  if (s.max_clients_per_uid) return std::min(s.max_clients_per_uid, s.max_clients);
  return std::max<uint32_t>(1, s.max_clients - std::max<uint32_t>(1, s.max_clients / 8));
}

uint64_t shared_memory_bytes_per_uid(const ServingSettings& s) {
  if (s.max_shared_memory_bytes_per_uid) {
    return std::min(s.max_shared_memory_bytes_per_uid, s.max_shared_memory_bytes);
  }
  return std::max<uint64_t>(uint64_t{1} << 20, s.max_shared_memory_bytes - s.max_shared_memory_bytes / 8);
}

}  // namespace nnd::daemon
