#include "tools/cost_model/disassembly.h"

#include <cstdio>
#include <sstream>

#include "core/util/error.h"
#include "tools/cost_model/llvm_tool.h"

namespace nnd::cost {

std::vector<std::pair<std::string, size_t>> parse_llvm_mc_listing(const std::string& out) {
  std::vector<std::pair<std::string, size_t>> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    // The comment starts with '#' on x86, with "//" on AArch64.
    size_t enc = line.find("# encoding: [");
    if (enc == std::string::npos) {
      enc = line.find("// encoding: [");
      if (enc != std::string::npos) ++enc;  // the same layout one character later
    }
    if (enc == std::string::npos) continue;  // .text, fixup notes
    std::string text = line.substr(0, line[enc - 1] == '/' ? enc - 1 : enc);
    const size_t b = text.find_first_not_of(" \t");
    const size_t e = text.find_last_not_of(" \t");
    text = b == std::string::npos ? "" : text.substr(b, e - b + 1);
    const size_t open = enc + 13, close = line.find(']', open);
    if (close == std::string::npos) throw Error(ErrorCode::kFormat, "llvm-mc: unterminated encoding in: " + line);
    size_t bytes = 1;  // "0x48,0x89,0xc8" or "0x75,A": one byte per comma-separated cell
    for (size_t i = open; i < close; ++i) bytes += line[i] == ',' ? 1 : 0;
    lines.emplace_back(std::move(text), bytes);
  }
  return lines;
}

std::vector<std::vector<AsmInstruction>> disassemble(const std::string& llvm_mc, const std::string& triple,
                                                     const std::vector<std::span<const uint8_t>>& pieces) {
  std::string hex;
  size_t total = 0;
  for (const auto& p : pieces) {
    char b[8];
    for (uint8_t byte : p) {
      std::snprintf(b, sizeof b, "0x%02x ", byte);
      hex += b;
    }
    hex += '\n';
    total += p.size();
  }
  const ToolRun r = run_tool(llvm_mc, {"--disassemble", "--show-encoding", "-triple=" + triple}, hex);
  if (r.exit_code != 0 || r.err.find("invalid instruction encoding") != std::string::npos) {
    throw Error(ErrorCode::kFormat, "llvm-mc could not decode the generated code: " + r.err.substr(0, 300));
  }
  const auto lines = parse_llvm_mc_listing(r.out);
  std::vector<std::vector<AsmInstruction>> out(pieces.size());
  size_t piece = 0, at = 0, decoded = 0;
  for (const auto& [text, size] : lines) {
    while (piece < pieces.size() && at == pieces[piece].size()) {
      ++piece;
      at = 0;
    }
    if (piece == pieces.size() || at + size > pieces[piece].size()) {
      throw Error(ErrorCode::kFormat, "llvm-mc: an instruction crosses the end of a kernel's code (" + text + ")");
    }
    out[piece].push_back({at, size, text});
    at += size;
    decoded += size;
  }
  if (decoded != total) {
    throw Error(ErrorCode::kFormat, "llvm-mc decoded " + std::to_string(decoded) + " of " + std::to_string(total) + " bytes");
  }
  return out;
}

}  // namespace nnd::cost
