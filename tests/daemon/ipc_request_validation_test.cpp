// Request validation (daemon/ipc/request_validation.h): every status it can give, in its order,
// from slot bytes as a client writes them.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "daemon/ipc/request_validation.h"

namespace nnd::daemon::ipc {
namespace {

// Two models: "ball" (one float32 input of 12 bytes per sample, one output of 8), "pair" (a uint8
// input of 5 bytes and a float32 input of 16, two outputs).
struct Table {
  size_t ball_in[1] = {12}, ball_out[1] = {8};
  size_t pair_in[2] = {5, 16}, pair_out[2] = {4, 4};
  std::vector<ModelView> views;
  Table() {
    views.push_back({"ball", 0x1111, 8, ball_in, 1, ball_out, 1});
    views.push_back({"pair", 0x2222, 4, pair_in, 2, pair_out, 2});
  }
};

nnd_ipc_slot slot_for(const char* model, uint64_t sig, uint32_t batch, uint64_t input_bytes,
                      int64_t deadline = 0) {
  nnd_ipc_slot s{};
  std::strncpy(s.model, model, sizeof(s.model) - 1);
  s.signature = sig;
  s.batch = batch;
  s.input_bytes = input_bytes;
  s.deadline_ns = deadline;
  return s;
}

struct Outcome {
  int32_t status;
  size_t model;
  ValidatedRequest req;
};

Outcome check(const Table& t, const nnd_ipc_slot& s, RequestLimits lim = {4096, 0}, int64_t now = 1000) {
  Outcome o{};
  o.status = validate_request(read_request_fields(&s), t.views, lim, now, &o.req, &o.model);
  return o;
}

TEST(RequestValidation, ValidRequestsGetTheirLayout) {
  const Table t;
  Outcome o = check(t, slot_for("ball", 0x1111, 3, 36));
  ASSERT_EQ(o.status, NND_IPC_OK);
  EXPECT_EQ(o.model, 0u);
  EXPECT_EQ(o.req.model, 0u);
  EXPECT_EQ(o.req.batch, 3u);
  EXPECT_EQ(o.req.layout.in_bytes[0], 36u);
  EXPECT_EQ(o.req.layout.outputs_begin, 64u);
  EXPECT_EQ(o.req.layout.out_bytes[0], 24u);
  EXPECT_EQ(o.req.layout.total, 128u);
  // The aligned end of the inputs is accepted as well.
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 3, 64)).status, NND_IPC_OK);
  // Two inputs: 2*5 bytes, then 2*16 at offset 64; inputs end at 96.
  o = check(t, slot_for("pair", 0x2222, 2, 96, 5000));
  ASSERT_EQ(o.status, NND_IPC_OK);
  EXPECT_EQ(o.model, 1u);
  EXPECT_EQ(o.req.deadline_ns, 5000);
  EXPECT_EQ(o.req.layout.in_off[1], 64u);
  EXPECT_EQ(o.req.layout.out_off[0], 128u);
  EXPECT_EQ(o.req.layout.out_off[1], 192u);
}

TEST(RequestValidation, EachProblemHasItsStatus) {
  const Table t;
  nnd_ipc_slot s = slot_for("ball", 0x1111, 1, 12);
  std::memset(s.model, 'x', sizeof(s.model));  // no NUL
  Outcome o = check(t, s);
  EXPECT_EQ(o.status, NND_IPC_E_BAD_REQUEST);
  EXPECT_EQ(o.model, SIZE_MAX);
  o = check(t, slot_for("bal", 0x1111, 1, 12));
  EXPECT_EQ(o.status, NND_IPC_E_UNKNOWN_MODEL);
  EXPECT_EQ(o.model, SIZE_MAX);
  o = check(t, slot_for("", 0x1111, 1, 12));
  EXPECT_EQ(o.status, NND_IPC_E_UNKNOWN_MODEL);
  // From here on the model is known, so its statistics can count the error.
  o = check(t, slot_for("ball", 0x1112, 1, 12));
  EXPECT_EQ(o.status, NND_IPC_E_MODEL_CHANGED);
  EXPECT_EQ(o.model, 0u);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 0, 0)).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 9, 108)).status, NND_IPC_E_SHAPE);  // > max_batch
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 2, 23)).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 2, 25)).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 2, UINT64_MAX)).status, NND_IPC_E_SHAPE);
  // Request larger than the slot's data area: 8 samples have 96 input bytes, outputs at 128,
  // 64 output bytes: 192 bytes.
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 8, 96), {128, 0}).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 8, 96), {192, 0}).status, NND_IPC_OK);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 1, 12, 999)).status, NND_IPC_E_DEADLINE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 1, 12, 1000)).status, NND_IPC_E_DEADLINE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 1, 12, -5)).status, NND_IPC_E_DEADLINE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 1, 12, 1001)).status, NND_IPC_OK);
}

TEST(RequestValidation, MaxRequestBytesCountsInputBytes) {
  const Table t;
  // 4 samples of ball: 48 input bytes. The limit is on input bytes, padding excluded.
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 4, 48), {4096, 48}).status, NND_IPC_OK);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 4, 64), {4096, 48}).status, NND_IPC_OK);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 4, 48), {4096, 47}).status, NND_IPC_E_REQUEST_TOO_LARGE);
  // A request that is malformed anyway stays a SHAPE error, and the limit comes before the
  // deadline (a too-large request is refused whatever its deadline).
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 4, 50), {4096, 47}).status, NND_IPC_E_SHAPE);
  EXPECT_EQ(check(t, slot_for("ball", 0x1111, 4, 48, 1), {4096, 47}).status, NND_IPC_E_REQUEST_TOO_LARGE);
  // Two inputs: 2*5 + padding + 2*16 = inputs end 96.
  EXPECT_EQ(check(t, slot_for("pair", 0x2222, 2, 96), {4096, 96}).status, NND_IPC_OK);
  EXPECT_EQ(check(t, slot_for("pair", 0x2222, 2, 96), {4096, 95}).status, NND_IPC_E_REQUEST_TOO_LARGE);
}

TEST(RequestValidation, HugeModelsOverflowIntoShapeErrors) {
  // A model whose per-sample bytes make batch * bytes overflow 64 bits: SHAPE, never a wrap.
  size_t in[1] = {SIZE_MAX / 2}, out[1] = {4};
  const std::vector<ModelView> views = {{"big", 7, 4096, in, 1, out, 1}};
  nnd_ipc_slot s = slot_for("big", 7, 4000, 0);
  ValidatedRequest r;
  size_t mi = 0;
  EXPECT_EQ(validate_request(read_request_fields(&s), views, {UINT64_MAX, 0}, 0, &r, &mi), NND_IPC_E_SHAPE);
  EXPECT_EQ(mi, 0u);
  // No models at all.
  EXPECT_EQ(validate_request(read_request_fields(&s), {}, {4096, 0}, 0, &r, &mi), NND_IPC_E_UNKNOWN_MODEL);
}

}  // namespace
}  // namespace nnd::daemon::ipc
