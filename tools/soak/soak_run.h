// The soak run: starts nnd, forks the clients, drives the chaos (reloads alternating configs A
// and B, client kill -9 and replacement, daemon kill -9 and restart), samples the daemon's
// resources, then stops everything and prints the report. Returns the process exit code.
#pragma once

#include <cstdint>
#include <string>

namespace nnd::soak {

struct SoakOptions {
  std::string nnd_exe;
  std::string models_dir;
  std::string work_dir;          // empty: a fresh folder under $TMPDIR (removed afterwards)
  bool keep = false;             // keep the work dir (configs, nnd.log)
  double duration_s = 60;
  int clients = 4;
  int workers = 2;
  double reload_every_s = 6;     // 0: never
  double kill_client_every_s = 10;
  double kill_daemon_every_s = 0;
  double warmup_s = 30;          // per daemon incarnation, before the RSS baseline
  double sample_every_s = 1;
  double print_every_s = 60;
  uint64_t request_timeout_ms = 10000;
  int64_t max_rss_drift_kib = 1024;
  bool rss_check = true;         // off under sanitizers (their allocators hold memory back)
  uint64_t seed = 1;
};

int run_soak(const SoakOptions& o);

}  // namespace nnd::soak
