#include "core/jit/x86/product_pipeline.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/util/error.h"

namespace nnd::jit {

ProductPipeline::ProductPipeline(VecEmitter& ve, std::vector<int> temps) : ve_(ve), temps_(std::move(temps)) {
  if (ve_.fmadd_needs_copy() && temps_.empty()) {
    throw Error(ErrorCode::kInternal, "JIT internal error: a product pipeline without a temporary");
  }
  shape_ = shape_for(static_cast<int>(temps_.size()));
}

namespace {

std::vector<int> spare_and_scratch(const VecEmitter& ve, const VecRegs& spare) {
  std::vector<int> temps;
  for (int i = 0; i < spare.size(); ++i) temps.push_back(spare[i]);
  temps.push_back(ve.scratch());
  return temps;
}

}  // namespace

ProductPipeline::ProductPipeline(VecEmitter& ve, const VecRegs& spare) : ProductPipeline(ve, spare_and_scratch(ve, spare)) {}

ProductPipeline::Shape ProductPipeline::shape_for(int temps) {
  if (temps >= 4) return {3, 1};
  if (temps == 3) return {2, 1};
  if (temps == 2) return {2, 0};
  return {1, 0};
}

void ProductPipeline::input(int dest, std::function<void()> emit) {
  if (std::find(temps_.begin(), temps_.end(), dest) != temps_.end()) {
    throw Error(ErrorCode::kInternal, "JIT internal error: a product pipeline input writes one of its temporaries");
  }
  Op op;
  op.is_input = true;
  op.dest = dest;
  op.emit = std::move(emit);
  ops_.push_back(std::move(op));
}

void ProductPipeline::broadcast(int dest, const x86::Mem& m) {
  if (!ve_.fmadd_needs_copy()) {
    input(dest, [this, dest, m] { ve_.broadcast(dest, m); });
    return;
  }
  input(dest, [this, dest, m] { ve_.load_scalar(dest, m); });
  ops_.back().finish = [this, dest] { ve_.broadcast_lane0(dest); };
}

void ProductPipeline::product(int acc, int a, const x86::Mem& m) {
  Op op;
  op.acc = acc;
  op.a = a;
  op.m = m;
  ops_.push_back(std::move(op));
}

void ProductPipeline::flush() {
  if (ve_.fmadd_needs_copy()) emit_pipelined();
  else emit_in_order();
  ops_.clear();
}

void ProductPipeline::emit_in_order() {
  for (const Op& op : ops_) {
    if (op.is_input) {
      op.emit();
      if (op.finish) op.finish();
    } else ve_.fmadd_mem(op.acc, op.a, op.m);
  }
}

void ProductPipeline::emit_pipelined() {
  std::vector<const Op*> prods;
  // Input stages by the step whose load stage emits them (before product `step + ahead`'s factor
  // load), in queue order; step -1 is the prologue, prods.size() the end. A stable sort by step
  // keeps a stage behind everything queued before it at the same step.
  struct Stage {
    int step;
    const std::function<void()>* emit;
  };
  std::vector<Stage> stages;
  const int ahead = shape_.ahead, lag = shape_.lag;
  int last_first_stage = -1;
  for (const Op& op : ops_) {
    if (!op.is_input) {
      if (std::find(temps_.begin(), temps_.end(), op.acc) != temps_.end() ||
          std::find(temps_.begin(), temps_.end(), op.a) != temps_.end()) {
        throw Error(ErrorCode::kInternal, "JIT internal error: a product pipeline operand is one of its temporaries");
      }
      prods.push_back(&op);
      continue;
    }
    // Its consumer is the next product queued (index prods.size()). A stage wanted `early`
    // products before it goes there, but not above a multiply that still reads the register's
    // previous value.
    const int j = static_cast<int>(prods.size());
    auto place = [&](int early) {
      for (int i = j - 1; i >= std::max(j - early, 0); --i) {
        if (prods[static_cast<size_t>(i)]->a == op.dest) return i + 1;
      }
      return std::max(j - early, -1);
    };
    // An earlier input may have been placed later (its own conflict): keep the queue's order.
    const int first = std::max(place(op.finish ? ahead + 1 : ahead), last_first_stage);
    last_first_stage = first;
    stages.push_back({first, &op.emit});
    if (op.finish) stages.push_back({std::max(place(ahead), first), &op.finish});
  }
  std::stable_sort(stages.begin(), stages.end(), [](const Stage& x, const Stage& y) { return x.step < y.step; });
  const int n = static_cast<int>(prods.size()), nt = static_cast<int>(temps_.size());
  auto temp = [&](int j) { return temps_[static_cast<size_t>(j % nt)]; };
  size_t next_stage = 0;
  auto inputs_at = [&](int step) {
    for (; next_stage < stages.size() && stages[next_stage].step <= step; ++next_stage) (*stages[next_stage].emit)();
  };
  auto load = [&](int j) {
    if (j < n) ve_.load(temp(j), prods[static_cast<size_t>(j)]->m);
  };
  inputs_at(-1);
  for (int j = 0; j < ahead; ++j) load(j);
  for (int j = 0; j < n; ++j) {
    if (j >= lag) ve_.add(prods[static_cast<size_t>(j - lag)]->acc, prods[static_cast<size_t>(j - lag)]->acc, temp(j - lag));
    inputs_at(j);
    load(j + ahead);
    ve_.mul(temp(j), temp(j), prods[static_cast<size_t>(j)]->a);
  }
  for (int j = std::max(n - lag, 0); j < n; ++j) {
    ve_.add(prods[static_cast<size_t>(j)]->acc, prods[static_cast<size_t>(j)]->acc, temp(j));
  }
  inputs_at(n);
}

}  // namespace nnd::jit
