// Which buffers get bordered storage, decided on the kernel plan (see padded_storage.h).
#include "core/jit/padded_storage.h"

#include <cstddef>
#include <vector>

namespace nnd::jit {

namespace {

// Per buffer: how many kernels write it and read it (a kernel reading it twice counts twice), and
// the last of each.
struct BufferUse {
  int writes = 0, reads = 0;
  int writer = -1, reader = -1;
};

std::vector<BufferUse> buffer_uses(const LowerContext& cx) {
  std::vector<BufferUse> use(cx.buffers.size());
  for (size_t k = 0; k < cx.kernels.size(); ++k) {
    const PlannedKernel& pk = cx.kernels[k];
    BufferUse& out = use[static_cast<size_t>(pk.out)];
    ++out.writes;
    out.writer = static_cast<int>(k);
    for (int b : pk.in) {
      ++use[static_cast<size_t>(b)].reads;
      use[static_cast<size_t>(b)].reader = static_cast<int>(k);
    }
  }
  return use;
}

// Drops the buffers replaced_by names a replacement for (every reference moves to it) and renumbers
// the others, keeping their order: the memory plan assigns offsets in buffer order.
void drop_buffers(LowerContext& cx, const std::vector<int>& replaced_by) {
  std::vector<int> index(cx.buffers.size(), -1);
  std::vector<PlanBuffer> kept;
  for (size_t b = 0; b < cx.buffers.size(); ++b) {
    if (replaced_by[b] >= 0) continue;
    index[b] = static_cast<int>(kept.size());
    kept.push_back(std::move(cx.buffers[b]));
  }
  auto renumber = [&](int& b) {
    if (b < 0) return;
    const int target = replaced_by[static_cast<size_t>(b)] >= 0 ? replaced_by[static_cast<size_t>(b)] : b;
    b = index[static_cast<size_t>(target)];
  };
  for (PlannedKernel& k : cx.kernels) {
    for (int& b : k.in) renumber(b);
    renumber(k.out);
  }
  for (int& b : cx.value_buf) renumber(b);
  for (GraphInputBuffers& in : cx.inputs) {
    renumber(in.input);
    renumber(in.u8);
  }
  cx.buffers = std::move(kept);
}

}  // namespace

int plan_padded_storage(LowerContext& cx) {
  const std::vector<BufferUse> use = buffer_uses(cx);
  // Graph outputs not written into their slot are copied from their buffer after the run.
  std::vector<bool> read_after_run(cx.buffers.size(), false);
  for (ValueId v : cx.g.outputs) {
    const int b = cx.value_buf[static_cast<size_t>(v)];
    if (b >= 0) read_after_run[static_cast<size_t>(b)] = true;
  }
  std::vector<int> replaced_by(cx.buffers.size(), -1);
  int bordered = 0;
  for (size_t b = 0; b < cx.buffers.size(); ++b) {
    const BufferUse& u = use[b];
    if (cx.buffers[b].kind != PlanBuffer::kArena || read_after_run[b] || u.writes != 1 || u.reads != 1) continue;
    PlannedKernel& producer = cx.kernels[static_cast<size_t>(u.writer)];
    PlannedKernel& reader = cx.kernels[static_cast<size_t>(u.reader)];
    if (!reader.reads_padding || reader.in.empty() || reader.in[0] != static_cast<int>(b)) continue;
    const PaddedStore store = *reader.reads_padding;
    if (!accepts_output_placement(producer.spec, store)) continue;
    place_output(producer, store);
    cx.buffers[b].floats = store.padded_floats();
    cx.buffers[b].placed = store;
    read_bordered_input(reader);
    // A border fill works in place: the pad copy's own buffer is no longer needed.
    if (std::holds_alternative<PadSpec>(reader.spec)) replaced_by[static_cast<size_t>(reader.out)] = static_cast<int>(b);
    ++bordered;
  }
  drop_buffers(cx, replaced_by);
  return bordered;
}

}  // namespace nnd::jit
