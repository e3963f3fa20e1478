// The batch runner (daemon/ipc/batch_runner.h) with a fake engine: zero copy for one request,
// gather/scatter for several, and an engine that throws.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "daemon/ipc/batch_runner.h"

namespace nnd::daemon::ipc {
namespace {

// Two inputs (2 floats and 1 uint8 per sample), two outputs (1 and 3 floats per sample).
// Output 0 of sample s = in0[s][0] + in0[s][1] + in1[s]; output 1 = (in1[s], -in1[s], batch).
class FakeEngine : public Engine {
 public:
  void run_views(int64_t batch, std::span<const InputView> in, std::span<const OutputView> out) override {
    calls.push_back(batch);
    seen_inputs.assign({in[0].data, in[1].data});
    seen_outputs.clear();
    for (const OutputView& o : out) seen_outputs.push_back(static_cast<float*>(o.data));
    if (throw_next) throw std::runtime_error("fake engine failure");
    const float* a = static_cast<const float*>(in[0].data);
    const uint8_t* b = static_cast<const uint8_t*>(in[1].data);
    float* y0 = static_cast<float*>(out[0].data);
    float* y1 = static_cast<float*>(out[1].data);
    for (int64_t s = 0; s < batch; ++s) {
      y0[s] = a[2 * s] + a[2 * s + 1] + b[s];
      y1[3 * s] = b[s];
      y1[3 * s + 1] = -static_cast<float>(b[s]);
      y1[3 * s + 2] = static_cast<float>(batch);
    }
  }
  const Graph& graph() const override { return graph_; }
  std::string name() const override { return "fake"; }

  std::vector<int64_t> calls;
  std::vector<const void*> seen_inputs;
  std::vector<float*> seen_outputs;
  bool throw_next = false;

 private:
  Graph graph_;
};

const DType kDtypes[] = {DType::kFloat32, DType::kUInt8};
const size_t kIn[] = {2 * sizeof(float), 1};
const size_t kOut[] = {1 * sizeof(float), 3 * sizeof(float)};
const DType kOutDtypes[] = {DType::kFloat32, DType::kFloat32};
const ModelIo kIo{kDtypes, kIn, kOutDtypes, kOut};

// One request's data area with its layout, inputs filled from `seed`.
struct FakeRequest {
  DataLayout layout;
  std::vector<uint8_t> area;
  uint32_t batch;
  FakeRequest(uint32_t b, int seed) : batch(b) {
    EXPECT_TRUE(compute_layout(kIn, 2, kOut, 2, b, &layout));
    area.assign(layout.total + NND_IPC_DATA_ALIGN, 0xEE);  // 0xEE: "not written"
    float* a = in0();
    for (uint32_t i = 0; i < 2 * b; ++i) a[i] = static_cast<float>(seed * 100 + static_cast<int>(i));
    for (uint32_t s = 0; s < b; ++s) in1()[s] = static_cast<uint8_t>(seed + s);
  }
  uint8_t* data() { return area.data(); }
  float* in0() { return reinterpret_cast<float*>(data() + layout.in_off[0]); }
  uint8_t* in1() { return data() + layout.in_off[1]; }
  float* out(int k) { return reinterpret_cast<float*>(data() + layout.out_off[k]); }
  BatchPart part() { return {data(), &layout, batch}; }

  void expect_outputs(uint32_t served) {
    for (uint32_t s = 0; s < batch; ++s) {
      EXPECT_FLOAT_EQ(out(0)[s], in0()[2 * s] + in0()[2 * s + 1] + in1()[s]) << "sample " << s;
      EXPECT_FLOAT_EQ(out(1)[3 * s], in1()[s]);
      EXPECT_FLOAT_EQ(out(1)[3 * s + 1], -static_cast<float>(in1()[s]));
      EXPECT_FLOAT_EQ(out(1)[3 * s + 2], static_cast<float>(served));
    }
  }
};

TEST(IpcBatchRunner, SingleRequestRunsInPlace) {
  FakeEngine eng;
  BatchRunner runner;
  FakeRequest r(3, 1);
  const BatchPart parts[] = {r.part()};
  const BatchOutcome o = runner.run(eng, kIo, parts);
  EXPECT_EQ(o.status, NND_IPC_OK);
  EXPECT_EQ(o.samples, 3u);
  ASSERT_EQ(eng.calls, std::vector<int64_t>{3});
  // Zero copy: the engine read and wrote the request's own data area.
  EXPECT_EQ(eng.seen_inputs[0], r.data() + r.layout.in_off[0]);
  EXPECT_EQ(eng.seen_inputs[1], r.data() + r.layout.in_off[1]);
  EXPECT_EQ(eng.seen_outputs[0], r.out(0));
  EXPECT_EQ(eng.seen_outputs[1], r.out(1));
  r.expect_outputs(3);
  EXPECT_GT(o.start_ns, 0);
  EXPECT_GE(o.run_ns, 0);
}

TEST(IpcBatchRunner, SeveralRequestsAreGatheredAndScatteredToTheirSlots) {
  FakeEngine eng;
  BatchRunner runner;
  FakeRequest a(1, 1), b(2, 2), c(4, 3);
  const BatchPart parts[] = {a.part(), b.part(), c.part()};
  const BatchOutcome o = runner.run(eng, kIo, parts);
  EXPECT_EQ(o.status, NND_IPC_OK);
  EXPECT_EQ(o.samples, 7u);
  ASSERT_EQ(eng.calls, std::vector<int64_t>{7});  // one engine call for the whole batch
  // Gathered: the engine saw private contiguous buffers, none of the requests' areas.
  for (FakeRequest* r : {&a, &b, &c}) {
    EXPECT_NE(eng.seen_inputs[0], r->data() + r->layout.in_off[0]);
    EXPECT_NE(eng.seen_outputs[0], r->out(0));
  }
  // Each request got its own samples' outputs, at its layout's offsets.
  a.expect_outputs(7);
  b.expect_outputs(7);
  c.expect_outputs(7);
  // Nothing written past the outputs.
  for (FakeRequest* r : {&a, &b, &c}) {
    for (size_t i = r->layout.outputs_end; i < r->area.size(); ++i) ASSERT_EQ(r->area[i], 0xEE) << i;
  }
  // The buffers are reused: a second, smaller batch still scatters right.
  FakeRequest d(2, 4), e(1, 5);
  const BatchPart again[] = {d.part(), e.part()};
  EXPECT_EQ(runner.run(eng, kIo, again).status, NND_IPC_OK);
  d.expect_outputs(3);
  e.expect_outputs(3);
}

TEST(IpcBatchRunner, EngineThrowingIsAnInternalErrorAndLeavesOutputsAlone) {
  FakeEngine eng;
  eng.throw_next = true;
  BatchRunner runner;
  FakeRequest a(1, 1), b(2, 2);
  const BatchPart parts[] = {a.part(), b.part()};
  const BatchOutcome o = runner.run(eng, kIo, parts);
  EXPECT_EQ(o.status, NND_IPC_E_INTERNAL);
  EXPECT_EQ(o.error, "fake engine failure");
  EXPECT_EQ(o.samples, 3u);
  for (FakeRequest* r : {&a, &b}) {
    for (size_t i = r->layout.outputs_begin; i < r->layout.outputs_end; ++i) ASSERT_EQ(r->area[i], 0xEE);
  }
  // The single-request path reports the failure the same way.
  FakeRequest c(2, 3);
  const BatchPart one[] = {c.part()};
  const BatchOutcome o1 = runner.run(eng, kIo, one);
  EXPECT_EQ(o1.status, NND_IPC_E_INTERNAL);
  EXPECT_EQ(o1.error, "fake engine failure");
}

}  // namespace
}  // namespace nnd::daemon::ipc
