// What a test puts before a program of the build that it starts itself (fork + execve): nothing
// natively; in a cross build the emulator, from NND_TEST_EXEC_PREFIX ("/usr/bin/qemu-aarch64 -L
// <sysroot> -cpu cortex-a76", set by the CMakeLists.txt of the tests that need it), split at
// spaces. An environment variable of the test, not binfmt_misc: no global state on the host.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace nnd::test {

// The words of the prefix; the first, when any, is an absolute path (execve searches no PATH).
inline std::vector<std::string> exec_prefix() {
  std::vector<std::string> words;
  if (const char* p = std::getenv("NND_TEST_EXEC_PREFIX")) {
    std::istringstream in(p);
    for (std::string w; in >> w;) words.push_back(w);
  }
  return words;
}

// The argv of `exe` with `args`, behind the prefix: argv[0] is what to execve.
inline std::vector<std::string> prefixed_command(const std::string& exe, const std::vector<std::string>& args) {
  std::vector<std::string> cmd = exec_prefix();
  cmd.push_back(exe);
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

}  // namespace nnd::test
