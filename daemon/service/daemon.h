// The Daemon: one run of the inference daemon from start-up to shutdown (DESIGN.md "Lifecycle").
//
//   startup   read the config, compile every model in parallel (each engine warmed up once), start
//             the IPC server, then READY=1. Here and on reload, every model file not loaded yet is
//             parsed by a child process first (daemon.validate_models: isolated; see
//             daemon/registry/model_validator.h): a file that crashes a parser fails its model
//             like any damaged file and never takes the daemon down.
//   SIGHUP    RELOADING=1 + MONOTONIC_USEC; a reload thread re-reads the config and compiles new or
//             changed models at low priority while the old set keeps serving; the new set is
//             published atomically (requests in flight finish on their version). On any failure
//             the old set stays, the reason goes to the log and STATUS=. READY=1 after, either way.
//             `nnctl reload` takes the same path.
//   SIGTERM/SIGINT  STOPPING=1, stop accepting, finish in-flight requests, remove the socket,
//             exit 0.
//   watchdog  WATCHDOG=1 every WATCHDOG_USEC/2 when systemd asks (and `daemon.watchdog` is on).
//
// main() parses the command line and hands it here; the Daemon owns the config, the model
// registry, the IPC server and the reload thread, and runs the main loop on the calling thread.
#pragma once

#include <memory>
#include <string>

#include "daemon/service/loading.h"

namespace nnd::daemon {

class Daemon {
 public:
  Daemon(std::string config_path, CliOverrides overrides);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs until SIGTERM/SIGINT; returns the exit status (0 after a clean shutdown, 1 when the
  // start-up failed).
  int run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnd::daemon
