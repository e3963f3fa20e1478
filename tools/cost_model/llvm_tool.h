// Running LLVM's command-line tools (llvm-mc, llvm-mca, llc from Debian's `llvm` package) for the
// cost model: finding them on PATH and capturing what they print.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nnd::cost {

// The path of `name` on PATH, or of the newest versioned name Debian installs (llvm-mca-19 ...
// llvm-mca-14); nullopt when there is none.
std::optional<std::string> find_llvm_tool(const std::string& name);

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

// Runs `exe args... < input` and captures stdout and stderr. nnd::Error (kIo) when it cannot start.
ToolRun run_tool(const std::string& exe, const std::vector<std::string>& args, const std::string& input);

// The three tools the cost model needs, found once; nnd::Error (kUnsupported) naming the missing
// one and the Debian package that has it.
struct LlvmTools {
  std::string mc, mca, llc;
  static LlvmTools find();
};

}  // namespace nnd::cost
