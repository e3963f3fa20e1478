#include "daemon/service/check.h"

#include <cstdio>
#include <exception>
#include <filesystem>

#include "daemon/base/service_unit.h"
#include "daemon/registry/model_table.h"
#include "daemon/service/service_access.h"
#include "daemon/sys/log.h"

namespace nnd::daemon {

namespace {

// The files the daemon reads (the config on every reload, each model), as the service will: as
// its user, and through its unit's sandbox. Prints a line about whom it checked as; problems go to
// stderr. Returns false when the service user cannot read a file (the daemon would fail on it);
// a file the unit hides is a warning (a BindReadOnlyPaths= the operator adds later fixes it).
// Runs before anything starts a thread: the check forks.
bool check_as_service(const std::string& config_path, const Config& cfg) {
  std::optional<ServiceUnit> unit;
  std::optional<ServiceUser> user;
  try {
    unit = read_service_unit();
    user = service_user(cfg.daemon, unit);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd --check: %s\n", e.what());
    return false;
  }
  std::vector<std::string> paths{std::filesystem::absolute(config_path).lexically_normal().string()};
  std::vector<std::string> what{"config"};
  for (const ModelSettings& m : cfg.models) {
    paths.push_back(m.path);
    what.push_back("model '" + m.name + "'");
  }
  bool ok = true;
  if (user) {
    std::printf("files checked as user '%s' (%s)%s\n", user->name.c_str(), user->because.c_str(),
                unit ? (", through the sandbox of " + unit->source).c_str() : "");
    std::vector<std::string> why;
    try {
      why = unreadable_as(*user, paths);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nnd --check: %s\n", e.what());
      return false;
    }
    for (size_t i = 0; i < paths.size(); ++i) {
      if (why[i].empty()) continue;
      const bool checked = why[i].rfind("not checked", 0) != 0;
      std::fprintf(stderr, "nnd --check: %s%s: %s: %s\n", checked ? "" : "warning: ", what[i].c_str(),
                   paths[i].c_str(), why[i].c_str());
      if (checked) ok = false;
    }
  } else {
    std::printf("files checked as the calling user (no daemon.run_as, no nnd.service installed)\n");
  }
  if (unit) {
    for (size_t i = 0; i < paths.size(); ++i) {
      std::error_code ec;
      const std::string real = std::filesystem::weakly_canonical(paths[i], ec).string();
      std::optional<std::string> hidden = hidden_by_unit(*unit, paths[i]);
      if (!hidden && !ec) hidden = hidden_by_unit(*unit, real);
      if (!hidden) continue;
      std::fprintf(stderr, "nnd --check: warning: %s: %s: %s, so the service will not find it; %s\n",
                   what[i].c_str(), paths[i].c_str(), hidden->c_str(),
                   how_to_allow(std::filesystem::path(paths[i]).parent_path().string()).c_str());
    }
  }
  return ok;
}

}  // namespace

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
  const bool readable = check_as_service(path, cfg);
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
    if (!readable) {
      std::fprintf(stderr, "nnd --check: the service's user cannot read every file it needs (above)\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd --check: %s\n", e.what());
    return 1;
  }
}

}  // namespace nnd::daemon
