// Named vector registers for the kernel generators of every architecture: a generator takes
// registers from a pool instead of numbering them by hand, and a generator bug (two values in one register, more
// registers than the ISA has, the hooks' scratch register) is an nnd::Error naming the kernel and
// the registers, not silently clobbered code.
//
//   VecRegPool pool(ve, "f32-conv");
//   VecRegs acc = pool.take_array(R * V, "acc");   // lowest free block: 0 .. R*V-1
//   VecReg x = pool.take("x");                     // lowest free register
//   VecReg t = pool.take(10, "t");                 // exactly register 10 (a fixed assignment)
//
// Allocation is deterministic (lowest free first), so a generator that takes its registers in
// the order it used to number them emits the same code. VecReg and VecRegs give their registers
// back when they go out of scope; both convert to the register index the VecEmitter hooks take.
// The kernel and register names are kept as views, not copies (no allocation while compiling:
// a pool per tile is on the load-time path), so they must outlive the pool: string literals.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace nnd::jit {

class VecRegPool;

class VecReg {
 public:
  VecReg() = default;
  VecReg(VecReg&& o) noexcept : pool_(o.pool_), index_(o.index_) { o.pool_ = nullptr; }
  VecReg& operator=(VecReg&& o) noexcept;
  VecReg(const VecReg&) = delete;
  VecReg& operator=(const VecReg&) = delete;
  ~VecReg() { release(); }

  int index() const { return index_; }
  operator int() const { return index_; }  // NOLINT(google-explicit-constructor): hook argument
  void release();

 private:
  friend class VecRegPool;
  VecReg(VecRegPool* pool, int index) : pool_(pool), index_(index) {}
  VecRegPool* pool_ = nullptr;
  int index_ = -1;
};

// A block of consecutive registers (an accumulator tile): first() .. first() + size() - 1.
class VecRegs {
 public:
  VecRegs() = default;
  VecRegs(VecRegs&& o) noexcept : pool_(o.pool_), first_(o.first_), count_(o.count_) { o.pool_ = nullptr; }
  VecRegs& operator=(VecRegs&& o) noexcept;
  VecRegs(const VecRegs&) = delete;
  VecRegs& operator=(const VecRegs&) = delete;
  ~VecRegs() { release(); }

  int first() const { return first_; }
  int size() const { return count_; }
  int end() const { return first_ + count_; }  // one past the last register
  int operator[](int i) const {                // checked: 0 <= i < size()
    if (i < 0 || i >= count_) out_of_range(i);
    return first_ + i;
  }
  void release();

 private:
  friend class VecRegPool;
  [[noreturn]] void out_of_range(int i) const;
  VecRegs(VecRegPool* pool, int first, int count) : pool_(pool), first_(first), count_(count) {}
  VecRegPool* pool_ = nullptr;
  int first_ = 0, count_ = 0;
};

class VecRegPool {
 public:
  // The registers 0 .. ve.usable_regs()-1 of an architecture's vector emitter (VecEmitter,
  // NeonEmitter); its scratch() belongs to the hooks and is never handed out.
  template <class Ve>
    requires requires(const Ve& ve) { ve.usable_regs(); }
  VecRegPool(const Ve& ve, std::string_view kernel) : VecRegPool(ve.usable_regs(), kernel) {}
  // For tests: `usable` registers.
  VecRegPool(int usable, std::string_view kernel);
  VecRegPool(const VecRegPool&) = delete;
  VecRegPool& operator=(const VecRegPool&) = delete;
  // Every register given back; a register still held here would outlive the pool (a VecReg kept
  // past its generator), which is a bug but cannot throw from a destructor.
  ~VecRegPool() = default;

  VecReg take(std::string_view name);                    // the lowest free register
  VecReg take(int index, std::string_view name);         // exactly `index`
  VecRegs take_array(int count, std::string_view name);  // the lowest free block of `count`
  VecRegs take_array(int first, int count, std::string_view name);  // exactly first .. first+count-1

  int usable() const { return usable_; }
  int free_count() const;
  bool is_free(int index) const;
  std::string_view kernel() const { return kernel_; }

 private:
  friend class VecReg;
  friend class VecRegs;
  static constexpr int kMaxRegs = 32;
  [[noreturn]] void fail(const std::string& what) const;
  // element: the index inside a block taken by take_array, -1 for a single register.
  void claim(int index, std::string_view name, int element);
  void give_back(int index);
  std::string held_by(int index) const;

  struct Owner {
    std::string_view name;
    int element = -1;
    bool held = false;
  };
  std::string_view kernel_;
  int usable_;
  std::array<Owner, kMaxRegs> owner_{};
};

// Hands out registers in turn (the first, the second, ..., the first again): an input loaded ahead
// of its use takes the next one, so its load need not wait for the readers of the one before.
class RegRotation {
 public:
  explicit RegRotation(std::vector<int> regs) : regs_(std::move(regs)) {}
  explicit RegRotation(const VecRegs& regs) {
    for (int i = 0; i < regs.size(); ++i) regs_.push_back(regs[i]);
  }
  int next() {
    const int r = regs_.at(next_);
    next_ = (next_ + 1) % regs_.size();
    return r;
  }
  size_t size() const { return regs_.size(); }

 private:
  std::vector<int> regs_;
  size_t next_ = 0;
};

}  // namespace nnd::jit
