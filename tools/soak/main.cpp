// nnd_soak: soak and chaos test of nnd (see docs/soak.md). Starts its own nnd on a private
// runtime dir, runs N client processes against it while reloading, killing clients and killing
// the daemon, checks every answer bit for bit against nnd's engine run in-process, and reports
// requests done / wrong / lost, errors by status, and the daemon's RSS, descriptors and
// shared-memory segments. Exit status: 0 pass, 1 fail, 2 usage or setup error.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "nnd_version.h"
#include "soak_run.h"

namespace {

namespace fs = std::filesystem;

// nnd next to nnd_soak (installed side by side) or in the build tree (build/tools/soak ->
// build/daemon), else on PATH.
std::string find_nnd() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {self.parent_path() / "nnd", self.parent_path() / "../../daemon/nnd"}) {
      if (::access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p).string();
    }
  }
  return "nnd";  // execve needs a path: resolved below against PATH
}

std::string on_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string d = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string c = (d.empty() ? "." : d) + "/" + name;
    if (::access(c.c_str(), X_OK) == 0) return c;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  nnd::soak::SoakOptions o;
  o.models_dir = NND_SOAK_MODELS_DIR;
  CLI::App app{
      "nnd_soak: soak and chaos test of the nnd daemon.\n\n"
      "Starts nnd on a private runtime dir with a generated config A, forks --clients client\n"
      "processes (rates 50..2000 req/s, synchronous and asynchronous calls, batches 1..max_batch,\n"
      "models ball/fb/flip/det), and for --duration seconds: rewrites the config (A <-> B) and\n"
      "sends SIGHUP every --reload-every s, kill -9s a random client every --kill-client-every s\n"
      "(a new one replaces it), kill -9s and restarts nnd every --kill-daemon-every s. Every\n"
      "answer is compared bit for bit with nnd's engine run in-process on the same inputs.\n\n"
      "Counts: done = right answer; wrong = answer differs; lost = no answer nor error within\n"
      "--request-timeout-ms while the client lived; interrupted = in flight when its client was\n"
      "killed; errors by nnclient status, 'expected' when a daemon kill or a reload explains them\n"
      "(DAEMON_RESTARTED/NOT_RUNNING around a daemon kill, MODEL_CHANGED on flip, UNKNOWN_MODEL\n"
      "on fb while config B may be live). Exit 1 on any wrong, lost or unexpected error, a failed\n"
      "reload, an unexpected client or daemon exit, a descriptor or segment leak, files left in\n"
      "the runtime dir or /dev/shm, or an RSS drift (per daemon process, after warm-up, RSS\n"
      "without shared segments) above --max-rss-drift-kib. Details: docs/soak.md."};
  app.add_option("--nnd", o.nnd_exe, "nnd executable (default: next to nnd_soak, else on PATH)");
  app.add_option("--models-dir", o.models_dir, "folder with ball_patch.h5, field_boundary.h5, "
                 "detector.h5")->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds of chaos")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--clients", o.clients, "client processes alive at any time (1..32)")
      ->capture_default_str()->check(CLI::Range(1, 32));
  app.add_option("--workers", o.workers, "nnd inference workers")->capture_default_str()->check(CLI::Range(1, 64));
  app.add_option("--reload-every", o.reload_every_s, "seconds between SIGHUP reloads (0 = never)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--kill-client-every", o.kill_client_every_s,
                 "seconds between client kill -9 (0 = never)")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--kill-daemon-every", o.kill_daemon_every_s,
                 "seconds between daemon kill -9 + restart (0 = never)")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--warmup", o.warmup_s, "seconds after each daemon start before the RSS baseline")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--sample-every", o.sample_every_s, "seconds between resource samples")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--print-every", o.print_every_s, "seconds between progress lines (0 = none)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--request-timeout-ms", o.request_timeout_ms,
                 "a request unanswered this long counts as lost")->capture_default_str()->check(CLI::Range(100, 600000));
  app.add_option("--max-rss-drift-kib", o.max_rss_drift_kib, "largest RSS drift allowed")->capture_default_str();
  bool no_rss = false;
  app.add_flag("--no-rss-check", no_rss, "report the RSS drift but do not fail on it (sanitizer builds)");
  app.add_option("--seed", o.seed, "seed of the chaos choices (which client dies)")->capture_default_str();
  app.add_option("--work-dir", o.work_dir, "folder for configs, runtime dir and nnd.log (default: "
                 "a new temp folder, removed after a passing run)");
  app.add_flag("--keep", o.keep, "keep the temp work folder");
  app.set_version_flag("--version", NND_VERSION_TEXT("nnd_soak"));
  CLI11_PARSE(app, argc, argv);
  o.rss_check = !no_rss;
  if (o.nnd_exe.empty()) o.nnd_exe = find_nnd();
  o.nnd_exe = on_path(o.nnd_exe);
  if (o.nnd_exe.empty() || ::access(o.nnd_exe.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "nnd_soak: no nnd executable found; give --nnd PATH\n");
    return 2;
  }
  try {
    return nnd::soak::run_soak(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnd_soak: %s\n", e.what());
    return 2;
  }
}
