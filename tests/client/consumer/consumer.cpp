// Uses the installed C++ wrapper: argv[1] is an endpoint nobody listens on.
#include <nnclient.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    nnclient::Client client(argv[1]);
  } catch (const nnclient::Error& e) {
    std::printf("%s\n", e.what());
    return e.status() == NNCLIENT_E_DAEMON_NOT_RUNNING ? 0 : 1;
  }
  return 1;
}
