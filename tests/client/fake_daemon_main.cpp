// nnd_fake_daemon SOCKET_PATH: runs the tests' fake daemon (fake_daemon.h) until killed, for
// shell-level tests (the installed-tree consumer test runs examples/vision_process against it).
#include <unistd.h>

#include <cstdio>

#include "fake_daemon.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nnd_fake_daemon SOCKET_PATH\n");
    return 2;
  }
  nnd::test::FakeDaemonConfig cfg;
  cfg.socket_path = argv[1];
  cfg.slot_data_bytes = 1 << 16;
  nnd::test::FakeDaemon daemon(cfg);  // the child dies with this process (PR_SET_PDEATHSIG)
  for (;;) pause();
}
