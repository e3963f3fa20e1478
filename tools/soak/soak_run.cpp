#include "soak_run.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <vector>

#include "client/nnclient.h"
#include "tests/support/monotonic_clock.h"
#include "proc_sample.h"
#include "soak_client.h"
#include "soak_daemon.h"
#include "soak_report.h"
#include "soak_state.h"
#include "workload.h"

namespace nnd::soak {
namespace {

namespace fs = std::filesystem;

using test::now_us;

std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

double mib(int64_t kib) { return static_cast<double>(kib) / 1024.0; }

std::string tail_lines(const std::string& path, size_t n) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(f, l)) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
    out += "    " + lines[i] + "\n";
  }
  return out;
}

class Soak {
 public:
  Soak(const SoakOptions& o, const Workload& w, SharedState* sh, DaemonProcess& d,
       std::string dir)
      : o_(o), w_(w), sh_(sh), d_(d), dir_(std::move(dir)), rng_(o.seed) {}

  int run();

 private:
  struct Live {
    pid_t pid;
    int slot;
  };

  std::string config_path() const { return dir_ + "/nnd.yaml"; }
  double t(int64_t at) const { return static_cast<double>(at - t0_) / 1e6; }
  void problem(const std::string& s) {
    ev_.problems.push_back(format("[%7.1f s] ", t(now_us())) + s);
    std::printf("  problem: %s\n", ev_.problems.back().c_str());
    std::fflush(stdout);
  }

  void write_config(Config c) {
    const std::string tmp = config_path() + ".tmp";
    {
      std::ofstream f(tmp);
      f << w_.config_yaml(c, "soak", o_.workers);
    }
    fs::rename(tmp, config_path());  // atomic: nnd never reads a half-written file
  }

  bool start_daemon() {
    if (!d_.start(config_path(), 120000)) {
      problem("nnd did not become ready (" + d_.exit_description() + "); log tail:\n" +
              tail_lines(d_.log_path(), 20));
      return false;
    }
    inc_.push_back(Incarnation{});
    inc_.back().start_us = now_us();
    return true;
  }

  void spawn(int slot) {
    const ClientProfile p = make_profile(static_cast<int>(ev_.client_generations++), slot,
                                         d_.socket_path(), o_.request_timeout_ms * 1000);
    new (&sh_->clients[slot]) ClientCounters();
    std::fflush(stdout);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // A client must die with nnd_soak, whatever ends it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(3);
      int rc = 2;
      try {
        rc = run_client(p, w_, sh_);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "soak client: %s\n", e.what());
      }
      ::_exit(rc);
    }
    if (pid < 0) {
      problem("fork failed");
      return;
    }
    live_.push_back(Live{pid, slot});
  }

  // A client that ended although nobody killed it.
  void reap_unexpected() {
    for (size_t i = 0; i < live_.size(); ++i) {
      int st = 0;
      if (::waitpid(live_[i].pid, &st, WNOHANG) != live_[i].pid) continue;
      ++ev_.unexpected_client_exits;
      problem(format("client pid %d ended by itself (%s %d)", live_[i].pid,
                     WIFSIGNALED(st) ? "signal" : "exit code",
                     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)));
      totals_.add(sh_->clients[live_[i].slot], false);
      const int slot = live_[i].slot;
      live_.erase(live_.begin() + static_cast<long>(i));
      spawn(slot);
      return;
    }
  }

  void kill_random_client() {
    if (live_.empty()) return;
    const size_t i = rng_() % live_.size();
    ::kill(live_[i].pid, SIGKILL);
    ::waitpid(live_[i].pid, nullptr, 0);
    ++ev_.client_kills;
    totals_.add(sh_->clients[live_[i].slot], true);
    const int slot = live_[i].slot;
    live_.erase(live_.begin() + static_cast<long>(i));
    last_client_kill_us_ = now_us();
    spawn(slot);
  }

  void reload() {
    const Config next = sh_->cfg_live.load() == kConfigA ? kConfigB : kConfigA;
    write_config(next);
    sh_->cfg_live.store(next);
    sh_->cfg_seq.fetch_add(1);  // odd: reload running
    bool failed = false;
    std::string status;
    const bool ok = d_.reload(60000, &failed, &status);
    sh_->cfg_seq.fetch_add(1);
    last_reload_end_us_ = now_us();
    ++ev_.reloads;
    if (!ok) {
      ++ev_.reload_failures;
      problem(std::string("reload to config ") + (next == kConfigA ? "A" : "B") +
              " did not finish (no READY=1 within 60 s)");
    } else if (failed) {
      ++ev_.reload_failures;
      problem("reload failed: " + status);
    }
  }

  void kill_daemon() {
    sh_->daemon_seq.fetch_add(1);  // odd: daemon down
    d_.kill9();
    inc_.back().ended = "killed";
    ++ev_.daemon_kills;
    const bool ok = start_daemon();
    sh_->daemon_seq.fetch_add(1);
    if (!ok) aborted_ = true;
  }

  // The daemon died although nobody killed it: a bug; restart it so the run goes on.
  void daemon_died() {
    ++ev_.unexpected_daemon_exits;
    inc_.back().ended = d_.exit_description();
    problem("nnd died: " + d_.exit_description() + "; log tail:\n" + tail_lines(d_.log_path(), 20));
    sh_->daemon_seq.fetch_add(1);
    const bool ok = start_daemon();
    sh_->daemon_seq.fetch_add(1);
    if (!ok) aborted_ = true;
  }

  uint64_t done_now() const {
    uint64_t n = totals_.done;
    for (const Live& l : live_) n += sh_->clients[l.slot].done.load();
    return n;
  }

  void sample(int64_t now) {
    const auto s = sample_process(d_.pid());
    if (!s) return;
    Incarnation& in = inc_.back();
    if (!in.first) in.first = s;
    in.last = s;
    in.max_memfds = std::max(in.max_memfds, s->memfds);
    // The RSS baseline and end are taken under the same config (A), away from reloads, so
    // that the drift compares like with like.
    const bool settled = sh_->cfg_live.load() == kConfigA && !(sh_->cfg_seq.load() & 1) &&
                         now - last_reload_end_us_ >= 1'000'000;
    if (settled && now - in.start_us >= static_cast<int64_t>(o_.warmup_s * 1e6)) {
      in.settled.emplace_back(now, *s);
    }
    // More segments than clients that could hold one: live ones plus one killed in the last
    // second (its session is dropped within 100 ms of its death).
    const int allowed = static_cast<int>(live_.size()) + (now - last_client_kill_us_ < 1'000'000);
    if (s->memfds > allowed && now - last_client_kill_us_ >= 2'000'000) {
      if (++memfd_excess_samples_ == 1) {
        problem(format("nnd holds %d memfd segments with %zu clients alive", s->memfds, live_.size()));
      }
    }
    last_sample_ = *s;
  }

  void print_line(int64_t now) {
    const uint64_t done = done_now();
    const double dt = std::max(1e-3, static_cast<double>(now - last_print_us_) / 1e6);
    std::printf("[%7.1f s] %7.0f answers/s | RSS %6.1f MiB (private %6.1f, shmem %5.1f) | fds %3d "
                "memfds %2d | reloads %llu, client kills %llu, daemon kills %llu\n",
                t(now), static_cast<double>(done - last_print_done_) / dt, mib(last_sample_.vm_rss_kib),
                mib(last_sample_.private_kib()), mib(last_sample_.rss_shmem_kib), last_sample_.fds,
                last_sample_.memfds, static_cast<unsigned long long>(ev_.reloads),
                static_cast<unsigned long long>(ev_.client_kills),
                static_cast<unsigned long long>(ev_.daemon_kills));
    std::fflush(stdout);
    last_print_us_ = now;
    last_print_done_ = done;
  }

  void check_progress(int64_t now) {
    const uint64_t done = done_now();
    if (done != progress_done_ || (sh_->daemon_seq.load() & 1)) {
      progress_done_ = done;
      progress_us_ = now;
    } else if (now - progress_us_ > 10'000'000) {
      ++ev_.stalls;
      problem("no answer at all for 10 s");
      progress_us_ = now;
    }
  }

  // Stops every client (letting it collect its in-flight requests) and adds its counters.
  void stop_clients() {
    sh_->stop.store(true);
    const int64_t end = now_us() + static_cast<int64_t>(o_.request_timeout_ms) * 1000 + 20'000'000;
    for (const Live& l : live_) {
      int st = 0;
      pid_t w = 0;
      while ((w = ::waitpid(l.pid, &st, WNOHANG)) == 0 && now_us() < end) ::usleep(5000);
      if (w == 0) {
        ::kill(l.pid, SIGKILL);
        ::waitpid(l.pid, &st, 0);
        problem(format("client pid %d did not stop in time (killed)", l.pid));
      } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        ++ev_.unexpected_client_exits;
        problem(format("client pid %d ended badly at stop (status %d)", l.pid, st));
      }
      totals_.add(sh_->clients[l.slot], false);
    }
    live_.clear();
  }

  int report(int64_t run_end);

  const SoakOptions& o_;
  const Workload& w_;
  SharedState* sh_;
  DaemonProcess& d_;
  std::string dir_;
  std::mt19937_64 rng_;
  std::vector<Live> live_;
  std::vector<Incarnation> inc_;
  Totals totals_;
  Events ev_;
  ProcSample last_sample_{};
  int64_t t0_ = 0, last_reload_end_us_ = 0, last_client_kill_us_ = 0;
  int64_t last_print_us_ = 0, progress_us_ = 0;
  uint64_t last_print_done_ = 0, progress_done_ = 0;
  uint64_t memfd_excess_samples_ = 0;
  bool aborted_ = false;
  int idle_fds_start_ = -1, idle_fds_end_ = -1, memfds_end_ = -1;
  std::set<std::string> shm_before_;
  std::string runtime_leftovers_;
  int stop_code_ = -1;
};

int Soak::run() {
  shm_before_ = list_dir("/dev/shm");
  write_config(kConfigA);
  if (!start_daemon()) return 1;
  // The idle descriptor count: the smallest over the first 0.5 s, as a start-up thread may
  // still be closing a file when READY=1 arrives.
  for (int i = 0; i < 10; ++i) {
    if (const auto s = sample_process(d_.pid())) {
      idle_fds_start_ = idle_fds_start_ < 0 ? s->fds : std::min(idle_fds_start_, s->fds);
    }
    ::usleep(50000);
  }
  t0_ = now_us();
  for (int i = 0; i < o_.clients; ++i) spawn(i);
  auto every = [](double s) { return s > 0 ? static_cast<int64_t>(s * 1e6) : INT64_MAX / 4; };
  const int64_t end = t0_ + static_cast<int64_t>(o_.duration_s * 1e6);
  int64_t next_reload = t0_ + every(o_.reload_every_s);
  int64_t next_ckill = t0_ + every(o_.kill_client_every_s);
  int64_t next_dkill = t0_ + every(o_.kill_daemon_every_s);
  int64_t next_sample = t0_, next_print = t0_ + every(o_.print_every_s);
  last_print_us_ = progress_us_ = t0_;
  while (!aborted_) {
    const int64_t now = now_us();
    if (now >= end) break;
    if (!d_.alive()) {
      daemon_died();
    } else if (now >= next_dkill) {
      kill_daemon();
      next_dkill += every(o_.kill_daemon_every_s);
    } else if (now >= next_reload) {
      reload();
      next_reload += every(o_.reload_every_s);
    } else if (now >= next_ckill) {
      kill_random_client();
      next_ckill += every(o_.kill_client_every_s);
    } else if (now >= next_sample) {
      sample(now);
      check_progress(now);
      next_sample += every(o_.sample_every_s);
    } else if (now >= next_print) {
      print_line(now);
      next_print += every(o_.print_every_s);
    } else {
      reap_unexpected();
      ::usleep(5000);
    }
  }
  const int64_t run_end = now_us();
  stop_clients();
  // The idle state is compared with the idle state at start, under the same config.
  if (d_.alive() && sh_->cfg_live.load() == kConfigB) reload();
  if (d_.alive()) {
    // Sessions of the departed clients are dropped within ~100 ms; allow 5 s.
    for (int i = 0; i < 500; ++i) {
      const auto s = sample_process(d_.pid());
      if (!s) break;
      idle_fds_end_ = s->fds;
      memfds_end_ = s->memfds;
      if (s->memfds == 0 && s->fds <= idle_fds_start_) break;
      ::usleep(10000);
    }
    if (!inc_.empty()) inc_.back().ended = "stopped";
    stop_code_ = d_.stop(30000);
  }
  for (const auto& f : list_dir(d_.runtime_dir())) runtime_leftovers_ += " " + f;
  return report(run_end);
}

int Soak::report(int64_t run_end) {
  std::vector<std::string> fail = ev_.problems;
  auto failed_if = [&](bool bad, const std::string& why) {
    if (bad) fail.push_back(why);
  };
  const Totals& T = totals_;
  std::printf("\n== nnd_soak report ==\n");
  std::printf("run: %.1f s, %d clients (%llu client processes in all), %d daemon workers\n",
              t(run_end), o_.clients, static_cast<unsigned long long>(ev_.client_generations),
              o_.workers);
  std::printf("chaos: %llu reloads (every %g s, A<->B; %llu failed), %llu client kill -9 (every %g s), "
              "%llu daemon kill -9 + restart (every %g s)\n",
              static_cast<unsigned long long>(ev_.reloads), o_.reload_every_s,
              static_cast<unsigned long long>(ev_.reload_failures),
              static_cast<unsigned long long>(ev_.client_kills), o_.kill_client_every_s,
              static_cast<unsigned long long>(ev_.daemon_kills), o_.kill_daemon_every_s);
  std::printf("requests: %llu submitted = %llu done + %llu wrong + %llu lost + %llu errors + %llu "
              "interrupted by client kill\n",
              static_cast<unsigned long long>(T.submitted), static_cast<unsigned long long>(T.done),
              static_cast<unsigned long long>(T.wrong), static_cast<unsigned long long>(T.lost),
              static_cast<unsigned long long>(T.submitted - T.done - T.wrong - T.lost - T.interrupted),
              static_cast<unsigned long long>(T.interrupted));
  std::printf("ball answers: %llu from config A's engine (JIT), %llu from B's (reference); "
              "%llu by the other config's engine after a reload had finished\n",
              static_cast<unsigned long long>(T.served_a), static_cast<unsigned long long>(T.served_b),
              static_cast<unsigned long long>(T.stale_version));
  std::printf("errors expected (daemon kill, reload): %s\n", status_table(T.err_expected).c_str());
  std::printf("errors unexpected: %s\n", status_table(T.err_unexpected).c_str());
  std::printf("open/model_info failures: %llu expected, %llu unexpected\n",
              static_cast<unsigned long long>(T.info_expected),
              static_cast<unsigned long long>(T.info_unexpected));
  failed_if(T.wrong > 0, format("%llu wrong answers", static_cast<unsigned long long>(T.wrong)));
  failed_if(T.lost > 0, format("%llu lost requests", static_cast<unsigned long long>(T.lost)));
  failed_if(T.unexpected_errors() > 0,
            format("%llu unexpected errors", static_cast<unsigned long long>(T.unexpected_errors())));
  failed_if(T.stale_version > 0,
            format("%llu ball answers from the previous config's engine after its reload had "
                   "finished (a reload switches atomically)",
                   static_cast<unsigned long long>(T.stale_version)));
  failed_if(T.done == 0, "no request was answered");
  failed_if(T.submitted < T.done + T.wrong + T.lost + T.interrupted, "request accounting broken");
  failed_if(o_.reload_every_s > 0 && ev_.reloads > 1 && (T.served_a == 0 || T.served_b == 0),
            "reloads happened but answers did not come from both configs' engines");
  for (const auto& n : T.notes) std::printf("  first problem seen by a client: %s\n", n.c_str());

  std::printf("daemon (private = RssAnon + RssFile, i.e. RSS without the clients' shared "
              "segments):\n");
  for (size_t i = 0; i < inc_.size(); ++i) {
    const Incarnation& in = inc_[i];
    std::printf("  incarnation %zu (from %.1f s, %s): max memfds %d", i + 1,
                std::max(0.0, t(in.start_us)),
                in.ended.empty() ? "running" : in.ended.c_str(), in.max_memfds);
    if (in.first && in.last) {
      std::printf("; VmRSS %.1f -> %.1f MiB, fds %d -> %d", mib(in.first->vm_rss_kib),
                  mib(in.last->vm_rss_kib), in.first->fds, in.last->fds);
    }
    if (const auto d = rss_drift(in)) {
      std::printf("\n    after warm-up (config A, %d samples %.1f s .. %.1f s): private KiB "
                  "median %lld -> %lld, range %lld .. %lld; trend %+.1f KiB/min = drift %+lld KiB",
                  d->samples, t(d->from_us), t(d->to_us), static_cast<long long>(d->base_kib),
                  static_cast<long long>(d->end_kib), static_cast<long long>(d->min_kib),
                  static_cast<long long>(d->max_kib), d->slope_kib_per_min,
                  static_cast<long long>(d->drift_kib()));
      failed_if(o_.rss_check && d->drift_kib() > o_.max_rss_drift_kib,
                format("incarnation %zu: RSS drift %lld KiB > %lld KiB", i + 1,
                       static_cast<long long>(d->drift_kib()),
                       static_cast<long long>(o_.max_rss_drift_kib)));
    } else {
      std::printf(" (too short for a drift figure after %.0f s warm-up)", o_.warmup_s);
    }
    std::printf("\n");
  }
  std::printf("idle daemon (no client): fds %d at start, %d at end; memfd segments at end %d\n",
              idle_fds_start_, idle_fds_end_, memfds_end_);
  failed_if(idle_fds_end_ > idle_fds_start_,
            format("descriptor leak: idle fds %d at start, %d at end", idle_fds_start_, idle_fds_end_));
  failed_if(memfds_end_ != 0, format("%d memfd segments still held with no client", memfds_end_));
  failed_if(memfd_excess_samples_ > 0,
            format("%llu samples with more memfd segments than clients",
                   static_cast<unsigned long long>(memfd_excess_samples_)));
  std::printf("nnd SIGTERM at end: exit code %d\n", stop_code_);
  failed_if(stop_code_ != 0, "nnd did not exit 0 on SIGTERM");
  std::printf("runtime dir after stop: %s\n", runtime_leftovers_.empty() ? "empty" : runtime_leftovers_.c_str());
  failed_if(!runtime_leftovers_.empty(), "files left in the runtime dir:" + runtime_leftovers_);
  std::string shm_new;
  for (const auto& f : list_dir("/dev/shm")) {
    if (!shm_before_.count(f)) shm_new += " " + f;
  }
  std::printf("/dev/shm entries created during the run: %s\n", shm_new.empty() ? "none" : shm_new.c_str());
  failed_if(!shm_new.empty(), "new /dev/shm entries:" + shm_new);
  failed_if(ev_.unexpected_client_exits > 0, "a client process ended by itself");

  if (fail.empty()) {
    std::printf("RESULT: PASS\n");
    return 0;
  }
  std::printf("RESULT: FAIL\n");
  for (const auto& f : fail) std::printf("  - %s\n", f.c_str());
  std::printf("nnd log: %s\n", d_.log_path().c_str());
  return 1;
}

}  // namespace

int run_soak(const SoakOptions& o) {
  if (o.clients < 1 || o.clients > kMaxClients) {
    std::fprintf(stderr, "nnd_soak: --clients must be 1..%d\n", kMaxClients);
    return 2;
  }
  std::string dir = o.work_dir;
  bool made_dir = false;
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "nnd_soak_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      std::fprintf(stderr, "nnd_soak: mkdtemp failed\n");
      return 2;
    }
    dir = tmpl;
    made_dir = true;
  } else {
    fs::create_directories(dir);
  }
  std::printf("nnd_soak: computing expected outputs in-process...\n");
  std::fflush(stdout);
  const std::string isa_cache = fs::absolute(fs::path(dir) / "isa-calibration").string();
  const Workload w = [&] {
    try {
      return Workload::build(o.models_dir, isa_cache);
    } catch (...) {
      if (made_dir) fs::remove_all(dir);
      throw;
    }
  }();
  void* mem = ::mmap(nullptr, sizeof(SharedState), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "nnd_soak: mmap failed\n");
    return 2;
  }
  auto* shared = new (mem) SharedState();
  int rc = 1;
  {
    DaemonProcess d(o.nnd_exe, dir, "soak");
    std::printf("nnd_soak: %s, work dir %s, %.0f s, %d clients\n", o.nnd_exe.c_str(), dir.c_str(),
                o.duration_s, o.clients);
    std::fflush(stdout);
    Soak s(o, w, shared, d, dir);
    rc = s.run();
  }
  shared->~SharedState();
  ::munmap(mem, sizeof(SharedState));
  if (made_dir && !o.keep && rc == 0) fs::remove_all(dir);
  return rc;
}

}  // namespace nnd::soak
