// The environment of an `nnd` started by a test harness (the integration tests, nnd_soak).
#pragma once

#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace nnd::test {

// The caller's environment as "KEY=value" strings (sorted by key), without the variables systemd
// sets for the caller's own service (a child must not feed the caller's watchdog or write to its
// journal stream) and without an endpoint override, plus the child's own notify socket and
// runtime folder.
inline std::vector<std::string> nnd_child_environment(const std::string& notify_socket, const std::string& runtime_dir) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string s = *e;
    const size_t eq = s.find('=');
    if (eq != std::string::npos) env[s.substr(0, eq)] = s.substr(eq + 1);
  }
  for (const char* k : {"JOURNAL_STREAM", "WATCHDOG_USEC", "WATCHDOG_PID", "NND_ENDPOINT"}) env.erase(k);
  env["NOTIFY_SOCKET"] = notify_socket;
  env["NND_RUNTIME_DIR"] = runtime_dir;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// execve()'s null-terminated array over `strings`, which must outlive it.
inline std::vector<char*> exec_pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace nnd::test
