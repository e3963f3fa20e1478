#include "daemon/service/check.h"

#include <cstdio>
#include <exception>

#include "daemon/registry/model_table.h"
#include "daemon/sys/log.h"

namespace nnd::daemon {

int run_check(const std::string& path, const CliOverrides& o) {
  Config cfg;
  try {
    cfg = load_with_overrides(path, o);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::fprintf(stderr, "nnd --check: %s: %zu problem(s) in the config\n", path.c_str(),
                 e.issues().size());
    return 1;
  }
  std::printf("config %s: OK (endpoint %s -> %s, %u worker(s), %zu model(s))\n", path.c_str(),
              cfg.daemon.endpoint.c_str(), endpoint_socket_path(cfg.daemon.endpoint).c_str(),
              cfg.daemon.workers, cfg.models.size());
  std::fflush(stdout);
  BuildOptions bo;
  bo.log = [](LogLevel l, const std::string& m) {
    if (l <= LogLevel::kNotice ||
        (l == LogLevel::kInfo && (m.find("engine auto") != std::string::npos || m.find("': isa ") != std::string::npos))) {
      log(l, m);
    }
  };
  // Like the daemon: a file that crashes a parser is reported, not a crash of `nnd --check`.
  bo.load_graph = model_loader(cfg.daemon, bo.log);
  bo.max_model_memory_bytes = cfg.daemon.max_model_memory_bytes;
  bo.isa_cache = isa_calibration_cache_path(cfg.daemon.isa_calibration_cache);
  try {
    BuildStats st;
    auto set = build_model_set(cfg.models, nullptr, bo, &st);
    std::printf("%s", format_model_table(*set).c_str());
    std::printf("all %zu model(s) compiled in %.1f ms (wall)\n", set->models.size(), st.wall_ms);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd --check: %s\n", e.what());
    return 1;
  }
}

}  // namespace nnd::daemon
