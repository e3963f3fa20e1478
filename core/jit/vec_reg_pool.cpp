#include "core/jit/vec_reg_pool.h"

#include <utility>

#include "core/util/error.h"

namespace nnd::jit {

VecReg& VecReg::operator=(VecReg&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::exchange(o.pool_, nullptr);
    index_ = o.index_;
  }
  return *this;
}

void VecReg::release() {
  if (pool_ != nullptr) pool_->give_back(index_);
  pool_ = nullptr;
}

VecRegs& VecRegs::operator=(VecRegs&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::exchange(o.pool_, nullptr);
    first_ = o.first_;
    count_ = o.count_;
  }
  return *this;
}

void VecRegs::out_of_range(int i) const {
  const std::string kernel = pool_ != nullptr ? std::string(pool_->kernel()) : std::string("?");
  throw Error(ErrorCode::kInternal, "JIT internal error in " + kernel + ": register " + std::to_string(i) + " of a block of " +
              std::to_string(count_));
}

void VecRegs::release() {
  if (pool_ != nullptr) {
    for (int i = 0; i < count_; ++i) pool_->give_back(first_ + i);
  }
  pool_ = nullptr;
}


VecRegPool::VecRegPool(int usable, std::string_view kernel) : kernel_(kernel), usable_(usable) {
  if (usable_ < 0 || usable_ > kMaxRegs) fail("a pool of " + std::to_string(usable_) + " registers");
}

void VecRegPool::fail(const std::string& what) const {
  throw Error(ErrorCode::kInternal, "JIT internal error in " + std::string(kernel_) + ": " + what + " (" + std::to_string(usable_) +
              " usable vector registers)");
}

std::string VecRegPool::held_by(int index) const {
  const Owner& o = owner_[static_cast<size_t>(index)];
  std::string s = o.name.empty() ? std::string("(unnamed)") : std::string(o.name);
  if (o.element >= 0) s.append("[").append(std::to_string(o.element)).append("]");  // not "[" + ...: GCC 12 -Wrestrict
  return s;
}

bool VecRegPool::is_free(int index) const {
  return index >= 0 && index < usable_ && !owner_[static_cast<size_t>(index)].held;
}

int VecRegPool::free_count() const {
  int n = 0;
  for (int i = 0; i < usable_; ++i) n += is_free(i) ? 1 : 0;
  return n;
}

void VecRegPool::claim(int index, std::string_view name, int element) {
  if (index >= 0 && index < usable_ && is_free(index)) {
    owner_[static_cast<size_t>(index)] = Owner{name, element, true};
    return;
  }
  std::string who = name.empty() ? std::string("(unnamed)") : std::string(name);
  if (element >= 0) who.append("[").append(std::to_string(element)).append("]");
  if (index < 0 || index >= usable_) {
    fail("register " + std::to_string(index) + " for '" + who + "' is out of range" +
         (index == usable_ ? " (it is the hooks' scratch register)" : ""));
  }
  fail("register " + std::to_string(index) + " for '" + who + "' is already held by '" + held_by(index) + "'");
}

void VecRegPool::give_back(int index) {
  if (index >= 0 && index < usable_) owner_[static_cast<size_t>(index)] = Owner{};
}

VecReg VecRegPool::take(std::string_view name) {
  for (int i = 0; i < usable_; ++i) {
    if (is_free(i)) {
      claim(i, name, -1);
      return VecReg(this, i);
    }
  }
  fail("no free register for '" + std::string(name) + "'");
}

VecReg VecRegPool::take(int index, std::string_view name) {
  claim(index, name, -1);
  return VecReg(this, index);
}

VecRegs VecRegPool::take_array(int count, std::string_view name) {
  if (count < 0) fail("a block of " + std::to_string(count) + " registers for '" + std::string(name) + "'");
  for (int first = 0; first + count <= usable_; ++first) {
    bool all_free = true;
    for (int i = first; i < first + count && all_free; ++i) all_free = is_free(i);
    if (all_free) return take_array(first, count, name);
  }
  fail("no free block of " + std::to_string(count) + " registers for '" + std::string(name) + "' (" +
       std::to_string(free_count()) + " free)");
}

VecRegs VecRegPool::take_array(int first, int count, std::string_view name) {
  if (count < 0) fail("a block of " + std::to_string(count) + " registers for '" + std::string(name) + "'");
  for (int i = 0; i < count; ++i) {
    try {
      claim(first + i, name, i);
    } catch (...) {
      for (int j = 0; j < i; ++j) give_back(first + j);
      throw;
    }
  }
  return VecRegs(this, first, count);
}

}  // namespace nnd::jit
