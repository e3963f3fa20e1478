// nnd: the on-robot neural-network inference daemon. This file only wires: it parses the command
// line and runs one of the program's three modes.
//
//   nnd [--config FILE] [--endpoint NAME] [--log-level L]   serve: the Daemon
//                                                          (daemon/service/daemon.h)
//   nnd --check [FILE]                                     validate + compile, print the table
//                                                          (daemon/service/check.h; FILE
//                                                          defaults to the --config file)
//   nnd --validate-model NAME                              the daemon's model-validator child
//                                                          (internal; daemon/registry/model_validator.h)
#include <CLI/CLI.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/registry/model_validator.h"
#include "daemon/service/check.h"
#include "daemon/service/daemon.h"
#include "daemon/sys/log.h"
#include "nnd_version.h"

int main(int argc, char** argv) {
  using namespace nnd::daemon;
  // The daemon's model validator (a child process it starts; see model_validator.h): before
  // anything else, and not through CLI11, so that the child runs no code it does not need.
  if (argc >= 2 && std::strcmp(argv[1], kValidateModelFlag) == 0) {
    return run_model_validator(argc, argv);
  }
  CLI::App app{
      "nnd: the neural-network inference daemon.\n\n"
      "Reads a YAML config (see config/SCHEMA.md), compiles every model listed in it (in\n"
      "parallel; each engine runs one warm-up inference), then serves inference requests from\n"
      "libnnclient clients over shared memory on the configured endpoint. Logs go to stderr\n"
      "(sd-daemon level prefixes when stderr is the journal).\n\n"
      "Signals: SIGHUP re-reads the config and recompiles new or changed models while the old\n"
      "ones keep serving, then switches atomically (a failed reload keeps the old set);\n"
      "SIGTERM/SIGINT stop accepting, finish in-flight requests, remove the socket and exit 0.\n"
      "Under systemd (Type=notify) it sends READY=1, RELOADING=1, STOPPING=1, STATUS= and\n"
      "WATCHDOG=1 pings.\n\n"
      "Endpoint: a name maps to $NND_RUNTIME_DIR/<name>.sock (NND_RUNTIME_DIR defaults to\n"
      "/run/nnd when it exists, else /tmp); a value containing '/' is the socket path itself.\n\n"
      "Exit status: 0 after a clean shutdown or a passing --check; 1 on a config, model or\n"
      "start-up error; 2 on a usage error."};
  std::string config_path = kDefaultConfigPath;
  std::vector<std::string> check_files;
  std::string endpoint, level;
  app.add_option("-c,--config", config_path, "config file to serve (default /etc/nnd/nnd.yaml)");
  auto* check = app.add_option(
      "--check", check_files,
      "validate the config FILE (default: --config) and compile every model, print a table "
      "(model, inputs, outputs, parameters, FLOPs, compile ms, code bytes, engine) and exit: 0 "
      "if everything is fine, 1 on any problem");
  check->expected(0, 1);
  app.add_option("--endpoint", endpoint,
                 "override daemon.endpoint: a name (socket $NND_RUNTIME_DIR/NAME.sock) or a "
                 "socket path");
  app.add_option("--log-level", level, "override daemon.log_level")
      ->check(CLI::IsMember({"error", "warning", "notice", "info", "debug"}));
  app.set_version_flag("--version", NND_VERSION_TEXT("nnd"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int r = app.exit(e);
    return r == 0 ? 0 : 2;
  }

  CliOverrides o;
  if (!endpoint.empty()) o.endpoint = endpoint;
  if (!level.empty()) {
    o.log_level = parse_log_level(level);
    set_log_level(*o.log_level);
  }
  if (check->count() > 0) {
    // A bare --check arrives as no value or as one empty string (CLI11 fills an expected(0,1)
    // vector option with ""), and means the --config file, like serving does: `nnd --check`
    // validates what `nnd` would serve.
    const bool bare = check_files.empty() || check_files.front().empty();
    return run_check(bare ? config_path : check_files.front(), o);
  }
  Daemon d(config_path, o);
  return d.run();
}
