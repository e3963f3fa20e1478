// A kernel's code cut into the blocks the cost model prices: per loop record, its straight-line
// code (its bytes less those of the records nested in it, loop control included), and the
// kernel's own straight-line code outside every record. Each block runs a known number of times
// per call: its record's count times the counts of the records around it. Pure arithmetic on
// core/jit/loop_record.h, no tools involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/jit/loop_record.h"

namespace nnd::cost {

struct CodeBlock {
  int record = -1;  // index into the kernel's loop records; -1: the code outside every record
  std::vector<std::pair<size_t, size_t>> ranges;  // byte ranges [begin, end), ascending
  int64_t runs = 1;  // times the block runs per kernel call (0: a branch the plan never takes)
  int depth = 0;     // records around it (0 outside every record)
};

// Blocks of a kernel with `code_size` bytes of instructions and these records, the outside block
// first, then one per record in record order (a record whose children cover it whole still has
// its loop control). nnd::Error (kInternal) when a record lies outside the code or its parent.
std::vector<CodeBlock> code_blocks(const std::vector<jit::LoopRecord>& loops, size_t code_size);

// A kernel's cycles per call: each block's cycles per run times its runs.
double weighted_cycles(const std::vector<CodeBlock>& blocks, const std::vector<double>& cycles_per_run);

}  // namespace nnd::cost
