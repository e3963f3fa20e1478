#include "daemon/registry/model_memory.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/ir/cost.h"
#include "core/ir/shape_inference.h"

namespace nnd::daemon {

namespace {

uint64_t add_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t value_bytes(const Value& v) {
  uint64_t n = v.dtype == DType::kUInt8 ? 1 : 4;
  for (int64_t d : v.shape) n = mul_sat(n, d > 0 ? static_cast<uint64_t>(d) : 0);
  return n;
}

}  // namespace

uint64_t ModelMemoryNeed::total() const { return add_sat(add_sat(weights, activations), code); }

ModelMemoryNeed model_memory_need(Graph& g, uint32_t batch) {
  verify_structure(g);
  infer_shapes(g);
  ModelMemoryNeed need;
  need.batch = std::max<uint32_t>(1, batch);
  need.weights = mul_sat(static_cast<uint64_t>(std::max<int64_t>(0, parameter_count(g))), 4);
  need.code = mul_sat(g.nodes.size(), kCodeBytesPerLayer);

  // Each value's last reader (node index); graph inputs and outputs live throughout.
  const int64_t end = static_cast<int64_t>(g.nodes.size());
  std::vector<int64_t> last(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (ValueId in : g.nodes[i].inputs) last[static_cast<size_t>(in)] = static_cast<int64_t>(i);
  }
  for (ValueId out : g.outputs) last[static_cast<size_t>(out)] = end;
  uint64_t live = 0;
  for (ValueId in : g.inputs) {
    live = add_sat(live, value_bytes(g.values[static_cast<size_t>(in)]));
    last[static_cast<size_t>(in)] = end;
  }
  uint64_t peak = live;
  std::vector<std::vector<ValueId>> dies(g.nodes.size());
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (last[v] >= 0 && last[v] < end) dies[static_cast<size_t>(last[v])].push_back(static_cast<ValueId>(v));
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ValueId out = g.nodes[i].output;
    if (out >= 0) live = add_sat(live, value_bytes(g.values[static_cast<size_t>(out)]));
    peak = std::max(peak, live);
    for (ValueId v : dies[i]) {
      const uint64_t b = value_bytes(g.values[static_cast<size_t>(v)]);
      live = live >= b ? live - b : 0;
    }
    // A value nobody reads (a dead end of the graph) dies at once.
    if (out >= 0 && last[static_cast<size_t>(out)] < 0) {
      const uint64_t b = value_bytes(g.values[static_cast<size_t>(out)]);
      live = live >= b ? live - b : 0;
    }
  }
  need.activations = mul_sat(peak, need.batch);
  return need;
}

std::string byte_text(uint64_t bytes) {
  if (bytes == UINT64_MAX) return "more than 16 EiB";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string describe_memory_need(const ModelMemoryNeed& n) {
  return byte_text(n.total()) + " (weights " + byte_text(n.weights) + ", activations " +
         byte_text(n.activations) + " at max_batch " + std::to_string(n.batch) + ", code " +
         byte_text(n.code) + ")";
}

}  // namespace nnd::daemon
