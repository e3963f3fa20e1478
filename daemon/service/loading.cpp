#include "daemon/service/loading.h"

#include "daemon/registry/model_validator.h"

namespace nnd::daemon {

Config load_with_overrides(const std::string& path, const CliOverrides& o) {
  Config c = load_config(path);
  if (o.endpoint) c.daemon.endpoint = *o.endpoint;
  if (o.log_level) c.daemon.log_level = *o.log_level;
  return c;
}

GraphLoader model_loader(const DaemonSettings& d, const Logger& log) {
  if (!d.isolated_model_validation) return {};
  ValidatorOptions o;
  o.max_model_memory_bytes = d.max_model_memory_bytes;
  return isolated_graph_loader(o, log);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace nnd::daemon
