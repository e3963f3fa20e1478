// What the Daemon and `nnd --check` share: the config read with the command line's overrides, and
// how model files are loaded (daemon.validate_models).
#pragma once

#include <optional>
#include <string>

#include "daemon/base/logger.h"
#include "daemon/config/config.h"
#include "daemon/registry/registry_builder.h"

namespace nnd::daemon {

// Settings the command line overrides (`--endpoint`, `--log-level`).
struct CliOverrides {
  std::optional<std::string> endpoint;
  std::optional<LogLevel> log_level;
};

// load_config(path) with the overrides applied. Throws ConfigError.
Config load_with_overrides(const std::string& path, const CliOverrides& o);

// How new or changed model files are loaded: `isolated` lets a child process parse each file
// before this process does (daemon/registry/model_validator.h); `in_process` loads it directly
// (an empty loader).
GraphLoader model_loader(const DaemonSettings& d, const Logger& log);

// The first line of a (multi-line) message, for systemd's one-line STATUS=.
std::string first_line(const std::string& s);

}  // namespace nnd::daemon
