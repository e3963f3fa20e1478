// Sums of products acc += a * [m] in the order an in-order FP pipeline wants (the robot's Atom).
//
// SSE has no FMA: each product is `movups t, [m]; mulps t, a; addps acc, t`. Emitted back to back,
// every addps waits 5 cycles for its mulps, and on Silvermont, whose FP reservation queues issue
// in program order, the waiting add holds up the adds behind it and the loads feeding the next
// multiplies. The pipeline queues a block of products (and the instructions that load their `a`
// operands) and emits them software-pipelined across the block, step j being
//
//   addps acc(j - lag), t(j - lag)     the sum `lag` products behind its multiply
//   <inputs of product j + ahead>      hoisted as far as their registers allow
//   movups t(j + ahead), [m(j + ahead)] the factor loaded `ahead` products before its multiply
//   mulps t(j), a(j)
//
// with lag + ahead temporaries in rotation. llvm-mca's Silvermont model (nnbench --cpu-model
// silvermont) priced the shapes per temporary count on the kernels that use this: bop's planar
// stem 259 -> 121 cycles per block (bound 112) with 4, the 3x4v GEMM 240 -> 160 with 3, the
// 6x2v depthwise 57 -> 41 with 2. Out-of-order x86 cores reorder the same instructions anyway.
//
// ISAs with FMA (VecEmitter::fmadd_needs_copy() false) get the queued operations in the order they
// were queued, through fmadd_mem(): their code does not change.
//
// Rules for a block (between two flush() calls): no general-purpose register a memory operand uses
// changes; an input writes a register no product accumulates into and no temporary; inputs use
// only hooks that leave scratch() alone (load, broadcast), since scratch() may be a temporary.
#pragma once

#include <functional>
#include <vector>

#include "core/jit/x86/vec_emitter.h"
#include "core/jit/vec_reg_pool.h"

namespace nnd::jit {

class ProductPipeline {
 public:
  // `temps`: registers the pipeline may overwrite until the last flush() (scratch() allowed). SSE
  // needs at least one; more buy a longer lag and a load ahead (see shape_for()).
  ProductPipeline(VecEmitter& ve, std::vector<int> temps);
  // The registers of `spare` and scratch(): what a generator has left over after its own registers.
  ProductPipeline(VecEmitter& ve, const VecRegs& spare);
  ProductPipeline(const ProductPipeline&) = delete;
  ProductPipeline& operator=(const ProductPipeline&) = delete;
  ~ProductPipeline() = default;  // what is queued and not flushed is dropped: flush() every block

  // `emit` writes register `dest` (for instance loads or broadcasts a product's input); it runs
  // before the first product queued after it multiplies, and after every product queued before it.
  void input(int dest, std::function<void()> emit);
  // An input that broadcasts the float at m to every lane of `dest`. Pipelined (SSE) it is two
  // instructions placed apart: the scalar load one product earlier than a plain input, the
  // in-register broadcast where a plain input goes. Back to back, Silvermont's in-order FP queue
  // holds the shufps, and every multiply behind it, for the movss's 3-cycle load (the 3x4v GEMM
  // block: 148 cycles against a multiplier bound of 96; with two broadcast registers in rotation
  // and the load placed apart, a 2x4v block prices at 72 against 64).
  void broadcast(int dest, const x86::Mem& m);
  // acc += a * [m].
  void product(int acc, int a, const x86::Mem& m);
  // Emits the queued block; call before code that reads the accumulators or changes a register the
  // block's memory operands use (a pointer increment, a loop's end).
  void flush();

  struct Shape {
    int lag = 1, ahead = 0;
  };
  // The shape `temps` temporaries allow: 1 -> lag 1; 2 -> lag 2; 3 -> lag 2, ahead 1; 4 or more ->
  // lag 3, ahead 1 (the model's best per count: lag 3 covers mulps' 5 cycles at one multiply per 2
  // cycles, one load ahead its 3-cycle latency).
  static Shape shape_for(int temps);

 private:
  struct Op {
    bool is_input = false;
    int dest = -1;  // input: the register it writes
    std::function<void()> emit;
    std::function<void()> finish;  // an input's second stage (broadcast()), placed `ahead` early
    int acc = -1, a = -1;  // product
    x86::Mem m;
  };
  void emit_in_order();
  void emit_pipelined();

  VecEmitter& ve_;
  std::vector<int> temps_;
  Shape shape_;
  std::vector<Op> ops_;
};

}  // namespace nnd::jit
