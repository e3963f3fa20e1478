// The robot cost model for code nnd did not generate (CompiledNN), or without loop records: the
// basic blocks one inference executed, counted by valgrind's exp-bbv tool, priced by llvm-mca.
//
//   1. A harness compiles the network, writes its JIT code regions (address, bytes, name) to a
//      file (write_code_regions), and runs it under
//        valgrind --tool=exp-bbv --vex-guest-chase=no --vex-guest-max-insns=N ...
//      (tools/cost_model/bbv/: nnd_bbv_harness for nnd, cnn_bbv_harness for CompiledNN).
//   2. exp-bbv writes, per interval, how many instructions each block executed ("T:id:count") and
//      where each block starts ("F:id:address:function"): read_bbv sums them per start address.
//   3. executed_blocks() decodes each block that starts inside a region (Capstone) up to its first
//      control transfer or N instructions, as VEX cut it with chasing off, and divides the
//      instruction count by the block's length: how often it ran.
//   4. nnd_bbv_price prices every block with CostModel::price (llvm-mca) and sums cycles x runs.
//
// Valgrind cuts blocks like this only when it is told not to chase branches and how long a block
// may be; a count that is not a multiple of the decoded length means the cut differs (a warning,
// the block is priced at the rounded count).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nnd::cost {

struct CodeRegion {
  uint64_t address = 0;        // where the code ran
  std::vector<uint8_t> bytes;  // instructions only (no constant pool)
  std::string name;            // a kernel's name, "CompiledNN network"
};

// One region per line: "<address hex> <size> <bytes hex> <name>". nnd::Error (kIo/kFormat).
void write_code_regions(const std::string& path, const std::vector<CodeRegion>& regions);
std::vector<CodeRegion> read_code_regions(const std::string& path);

// Instructions executed per block start address, summed over exp-bbv's intervals (its block ids
// mapped to addresses by the pc file). nnd::Error (kIo/kFormat) for unreadable or malformed files.
std::map<uint64_t, uint64_t> read_bbv(const std::string& bb_path, const std::string& pc_path);

struct ExecutedBlock {
  size_t region = 0;
  size_t offset = 0;       // within the region's bytes
  size_t size = 0;         // bytes
  int instructions = 0;
  int64_t runs = 0;        // over the whole valgrind run
};

// The blocks of `counts` that start inside a region, in region and address order. Blocks whose
// count is not a multiple of their decoded length, or that cannot be decoded, are reported in
// *warnings (the first cases are priced at the rounded count, the others left out).
std::vector<ExecutedBlock> executed_blocks(const std::vector<CodeRegion>& regions,
                                           const std::map<uint64_t, uint64_t>& counts, int max_insns,
                                           std::vector<std::string>* warnings);

}  // namespace nnd::cost
