#include "core/jit/loop_record.h"

#include "core/util/error.h"

namespace nnd::jit {

void LoopRecorder::open(size_t begin, int64_t trips, bool per_sample) {
  LoopRecord r;
  r.begin = begin;
  r.parent = open_.empty() ? -1 : open_.back();
  r.trips = trips;
  r.per_sample = per_sample;
  open_.push_back(static_cast<int>(records_.size()));
  records_.push_back(r);
}

void LoopRecorder::close(size_t end) noexcept {
  if (open_.empty()) {
    unbalanced_ = true;
    return;
  }
  records_[static_cast<size_t>(open_.back())].end = end;
  open_.pop_back();
}

std::vector<LoopRecord> LoopRecorder::records(const std::string& kernel) const {
  if (unbalanced_ || !open_.empty()) {
    std::string m = "JIT internal error: the loop records of ";
    m += kernel;
    m += " do not nest (a region left open or closed twice)";
    throw Error(ErrorCode::kInternal, m);
  }
  return records_;
}

}  // namespace nnd::jit
