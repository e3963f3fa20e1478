// Machine code back to assembly text that llvm-mca accepts: llvm-mc --disassemble with the
// encodings shown, so each instruction's byte offset is known and code can be cut at the loop
// records' boundaries. One llvm-mc run for all the pieces of a network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nnd::cost {

struct AsmInstruction {
  size_t offset = 0;  // within its piece
  size_t size = 0;
  std::string text;   // AT&T syntax, as llvm-mc prints it ("mulps\t%xmm0, %xmm1")
};

// Each piece must be whole instructions (a kernel's code without its constant pool). nnd::Error
// (kFormat) when llvm-mc cannot decode a byte or an instruction crosses a piece's end.
std::vector<std::vector<AsmInstruction>> disassemble(const std::string& llvm_mc, const std::string& triple,
                                                     const std::vector<std::span<const uint8_t>>& pieces);

// The lines of llvm-mc's output with --show-encoding, as (text, encoded bytes); the parser of
// disassemble(), separate for tests.
std::vector<std::pair<std::string, size_t>> parse_llvm_mc_listing(const std::string& out);

}  // namespace nnd::cost
