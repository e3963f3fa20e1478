#include "tools/cost_model/llvm_tool.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/error.h"

namespace nnd::cost {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return std::nullopt;
}

// Single quotes for /bin/sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  q += "'";
  return q;
}

// A file under the temporary directory, removed with this object.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    std::string pattern = (fs::temp_directory_path() / "nnd-cost-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw Error(ErrorCode::kIo, "cost model: cannot create a temporary file in " + fs::temp_directory_path().string());
    close(fd);
    path_ = pattern;
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::optional<std::string> find_llvm_tool(const std::string& name) {
  if (auto p = on_path(name)) return p;
  for (int v = 19; v >= 14; --v) {
    std::string versioned = name;
    versioned += '-';
    versioned += std::to_string(v);
    if (auto p = on_path(versioned)) return p;
  }
  return std::nullopt;
}

ToolRun run_tool(const std::string& exe, const std::vector<std::string>& args, const std::string& input) {
  TempFile in(input), err("");
  std::string cmd = quoted(exe);
  for (const std::string& a : args) {
    cmd += ' ';
    cmd += quoted(a);
  }
  cmd += " < " + quoted(in.path());
  cmd += " 2> " + quoted(err.path());
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw Error(ErrorCode::kIo, "cost model: cannot start " + exe);
  ToolRun r;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err.path(), std::ios::binary);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  return r;
}

LlvmTools LlvmTools::find() {
  LlvmTools t;
  const std::pair<const char*, std::string*> tools[] = {{"llvm-mc", &t.mc}, {"llvm-mca", &t.mca}, {"llc", &t.llc}};
  for (const auto& [name, path] : tools) {
    const std::optional<std::string> p = find_llvm_tool(name);
    if (!p) {
      std::string m = "cost model: ";
      m += name;
      m += " not found on PATH (Debian package `llvm`: apt-get install llvm; scripts/install-deps.sh installs it)";
      throw Error(ErrorCode::kUnsupported, m);
    }
    *path = *p;
  }
  return t;
}

}  // namespace nnd::cost
