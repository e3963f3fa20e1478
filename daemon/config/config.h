// The daemon's YAML configuration: parsing, validation and defaults (config/SCHEMA.md documents
// every key). Validation collects every problem it finds and reports each with the file, line and
// column (from yaml-cpp's marks) and the dotted key it concerns, e.g.
//   /etc/nnd/nnd.yaml:14:5: models[1].max_batch: must be 1..4096, got 0
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/daemon_error.h"
#include "daemon/base/logger.h"
#include "daemon/config/model_settings.h"
#include "daemon/config/serving_settings.h"

namespace nnd::daemon {

inline constexpr const char* kDefaultConfigPath = "/etc/nnd/nnd.yaml";

// `daemon:`: the serving settings the IPC server takes (ServingSettings, one definition shared
// with ServerOptions) and what only the Daemon uses.
struct DaemonSettings : ServingSettings {
  std::string user;                    // who may connect ("" = only the daemon's own user);
                                       // resolved into allowed_uid
  std::string group;                   // group that may connect ("" = none); into allowed_gid
  std::string control_group;           // group that may reload besides root and the daemon's
                                       // user; into control_gid
  std::string run_as;                  // user to switch to when started as root ("" = stay);
                                       // into run_as_uid
  std::string run_as_group;            // its group ("" = the user's primary group)
  std::optional<gid_t> run_as_gid;     // resolved `run_as_group`, else run_as's primary group
  LogLevel log_level = LogLevel::kInfo;
  bool watchdog = true;                // send WATCHDOG=1 when systemd asks for it
  bool skip_failed_models = true;      // on_model_error: skip (true) | fail (false), at start-up
  bool isolated_model_validation = true;  // validate_models: isolated (true) | in_process (false):
                                          // parse new model files in a child process first
  // Where `isa: auto` keeps the ISA it measured fastest per CPU and network
  // (core/jit/isa_calibration_cache.h): "auto", "off" or an absolute file path.
  std::string isa_calibration_cache = "auto";
  // The most memory one model may need once compiled (weights, activations at its max_batch,
  // code: daemon/registry/model_memory.h), checked before anything is allocated, in the
  // validator child as in the daemon.
  uint64_t max_model_memory_bytes = uint64_t{4} << 30;
};

struct Config {
  std::string path;                    // the file read ("" when parsed from text)
  DaemonSettings daemon;
  std::vector<ModelSettings> models;   // paths absolute, resolved against the config's folder
  std::vector<int> model_lines;        // line of each model's entry (1-based), for messages
};

// One validation problem.
struct ConfigIssue {
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  std::string key; // dotted key path, e.g. "models[2].isa"
  std::string message;
  std::string to_string(const std::string& file) const;
};

// Every problem of one config file (code kConfig).
class ConfigError : public DaemonError {
 public:
  ConfigError(std::string file, std::vector<ConfigIssue> issues);
  const std::vector<ConfigIssue>& issues() const { return issues_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<ConfigIssue> issues_;
};

// The most models one config may list (a robot serves a few to a few hundred).
inline constexpr size_t kMaxModels = 1024;

// The largest config file load_config reads (a config listing hundreds of models is ~100 KiB).
inline constexpr uint64_t kMaxConfigBytes = 4u << 20;

// Reads and validates the config at `path`. Throws ConfigError listing every problem (also for an
// unreadable file, a path that is not a regular file -- a FIFO, a device, a directory -- or one
// larger than kMaxConfigBytes, and a YAML syntax error). Never blocks on the path.
Config load_config(const std::string& path);

// Same for text in memory; relative model paths resolve against `base_dir`, messages use
// `source_name`.
Config parse_config(const std::string& yaml_text, const std::string& source_name,
                    const std::string& base_dir);

// The socket path of `endpoint` by the rule of ipc/nnd_endpoint.h (shared with the IPC server
// and libnnclient): a value containing '/' is the path; a name is <dir>/<name>.sock with <dir>
// $NND_RUNTIME_DIR, else /run/nnd when it is a directory, else /tmp. "" for an empty endpoint.
std::string endpoint_socket_path(const std::string& endpoint);

// The calibration cache file of the setting daemon.isa_calibration_cache: a path is itself, "off"
// is "" (no cache), "auto" is the file every nnd program shares (default_isa_cache_path(), core/engine:
// $NND_ISA_CACHE, else $CACHE_DIRECTORY/isa-calibration under systemd's CacheDirectory=nnd, else
// the user's ~/.cache/nnd/isa-calibration; "" when none is set).
std::string isa_calibration_cache_path(const std::string& setting);

}  // namespace nnd::daemon
