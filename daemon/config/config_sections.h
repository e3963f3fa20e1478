// The sections of the config file, each parsed by its own unit over a shared ConfigReader:
//   daemon_section.cpp   `daemon:` -- DaemonSettings (serving keys, privileges, logging, loading)
//   models_section.cpp   `models:` -- one ModelSettings per entry, unique names
// A new key goes into the section that holds its neighbours, and into config/SCHEMA.md.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "daemon/config/config.h"
#include "daemon/config/config_reader.h"

namespace nnd::daemon {

// `daemon:` (may be null: every default).
void parse_daemon_section(ConfigReader& r, const YAML::Node& d, DaemonSettings& s);

// `models:` (may be null: no model). Relative paths resolve against `base_dir`.
void parse_models_section(ConfigReader& r, const YAML::Node& v, const std::string& key,
                          const std::string& base_dir, Config& cfg);

}  // namespace nnd::daemon
