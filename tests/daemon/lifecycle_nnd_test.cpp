// The `nnd` executable as systemd sees it: --check, READY=1 at startup, RELOADING=1 + READY=1 on
// SIGHUP (and on a client's reload request), a failed reload that keeps serving, STOPPING=1 and
// exit 0 with the socket removed on SIGTERM, WATCHDOG=1 pings. Every daemon runs on a private
// endpoint under a temporary NND_RUNTIME_DIR, and notifications arrive on a NOTIFY_SOCKET the test
// binds itself.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nnd_version.h"
#include "tests/support/exec_prefix.h"

#ifdef NND_HAVE_NNCLIENT
#include "client/nnclient.h"
#endif

extern char** environ;

namespace fs = std::filesystem;

namespace {

const std::string kExe = NND_EXE;
const fs::path kSource = NND_SOURCE_DIR;
std::atomic<int> g_counter{0};

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

uint64_t monotonic_us() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000ull + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

// A temp folder holding the runtime dir, the notify socket, configs and logs.
class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnd_lc_" + std::to_string(::getpid()) + "_" + std::to_string(g_counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    fs::create_directories(dir_ / "models");
    for (const char* f : {"ball_patch.h5", "field_boundary.h5", "detector.h5"}) {
      fs::copy_file(kSource / "examples" / "models" / f, dir_ / "models" / f);
    }
    endpoint_ = "lc" + std::to_string(::getpid()) + "_" + std::to_string(g_counter++);
    socket_path_ = (dir_ / "run" / (endpoint_ + ".sock")).string();
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (notify_fd_ >= 0) ::close(notify_fd_);
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "---- nnd stderr ----\n%s--------------------\n",
                   read_file(dir_ / "nnd.err").c_str());
    }
    fs::remove_all(dir_);
  }

  // A config serving the example models (copies in dir_/models), written to dir_/name.
  fs::path write_config(const std::string& name, const std::string& extra_models = "") {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "daemon:\n"
                        "  endpoint: " << endpoint_ << "\n"
                        "  workers: 1\n"
                        "  log_level: debug\n"
                        "models:\n"
                        "  - name: ball\n"
                        "    path: models/ball_patch.h5\n"
                        "    max_batch: 64\n"
                        "  - name: detector\n"
                        "    path: models/detector.h5\n"
                        "    inputs: {input: uint8}\n"
                     << extra_models;
    return p;
  }

  void bind_notify_socket() {
    notify_path_ = (dir_ / "notify.sock").string();
    notify_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(notify_fd_, 0);
    struct sockaddr_un a {};
    a.sun_family = AF_UNIX;
    ASSERT_LT(notify_path_.size(), sizeof a.sun_path);
    std::strcpy(a.sun_path, notify_path_.c_str());
    ASSERT_EQ(::bind(notify_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << strerror(errno);
  }

  std::vector<std::string> child_env(const std::map<std::string, std::string>& extra) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string s = *e;
      const size_t eq = s.find('=');
      if (eq != std::string::npos) env[s.substr(0, eq)] = s.substr(eq + 1);
    }
    env.erase("JOURNAL_STREAM");
    env.erase("NOTIFY_SOCKET");
    env.erase("WATCHDOG_USEC");
    env.erase("WATCHDOG_PID");
    env["NND_RUNTIME_DIR"] = (dir_ / "run").string();
    for (const auto& [k, v] : extra) env[k] = v;
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
  }

  // Starts nnd with `args`; stdout/stderr go to dir_/nnd.out and dir_/nnd.err.
  pid_t spawn(const std::vector<std::string>& args,
              const std::map<std::string, std::string>& extra_env = {}) {
    std::vector<std::string> env = child_env(extra_env);
    const std::string out = (dir_ / "nnd.out").string(), err = (dir_ / "nnd.err").string();
    std::vector<std::string> cmd = nnd::test::prefixed_command(kExe, args);  // the emulator first, in a cross build
    std::vector<char*> argv;
    for (auto& a : cmd) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      if (spawn_as_ && (::setgroups(0, nullptr) != 0 || ::setgid(spawn_as_->second) != 0 ||
                        ::setuid(spawn_as_->first) != 0)) {
        _exit(126);
      }
      ::execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    return pid;
  }

  // Runs nnd to completion and returns its exit status (-1 on a signal).
  int run(const std::vector<std::string>& args) {
    const pid_t pid = spawn(args);
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  // Starts the daemon with a notify socket; returns after READY=1 (fails the test otherwise).
  void start_daemon(const fs::path& config, const std::map<std::string, std::string>& env = {}) {
    bind_notify_socket();
    auto e = env;
    e["NOTIFY_SOCKET"] = notify_path_;
    pid_ = spawn({"--config", config.string()}, e);
    const std::string m = wait_for("READY=1", 60000);
    ASSERT_NE(m.find("READY=1"), std::string::npos) << "no READY=1; got: " << m;
  }

  // The next notification datagram, or "" after timeout_ms.
  std::string next_notification(int timeout_ms) {
    struct pollfd p {notify_fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return "";
    char buf[4096];
    const ssize_t n = ::recv(notify_fd_, buf, sizeof buf - 1, 0);
    if (n <= 0) return "";
    return std::string(buf, static_cast<size_t>(n));
  }

  // Reads notifications until one contains `what`; WATCHDOG=1 pings are skipped unless asked
  // for. Every message read goes to `seen_`.
  std::string wait_for(const std::string& what, int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            end - std::chrono::steady_clock::now())
                                            .count());
      if (left <= 0) return "";
      std::string m = next_notification(left);
      if (m.empty()) return "";
      if (m == "WATCHDOG=1" && what != "WATCHDOG=1") {
        ++watchdog_pings_;
        continue;
      }
      seen_.push_back(m);
      if (m.find(what) != std::string::npos) return m;
    }
  }

  // Waits for the daemon to exit; returns its exit status (-1 on a signal or timeout).
  int wait_exit(int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      int st = 0;
      const pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      ::usleep(10000);
    }
    return -1;
  }

  bool alive() { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  bool socket_exists() {
    struct stat st {};
    return ::stat(socket_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  }

  fs::path dir_;
  std::string endpoint_, socket_path_, notify_path_;
  int notify_fd_ = -1;
  pid_t pid_ = -1;
  std::optional<std::pair<uid_t, gid_t>> spawn_as_;  // spawn() runs nnd as this user (test is root)
  std::vector<std::string> seen_;
  int watchdog_pings_ = 0;
};

}  // namespace

TEST_F(LifecycleTest, CheckDefaultConfigPrintsTheTable) {
  ASSERT_EQ(run({"--check", (kSource / "config" / "nnd.yaml").string()}), 0)
      << read_file(dir_ / "nnd.err");
  const std::string out = read_file(dir_ / "nnd.out");
  for (const char* s : {"MODEL", "INPUTS", "OUTPUTS", "PARAMS", "FLOPS", "COMPILE_MS",
                        "CODE_BYTES", "ENGINE", "ball", "field_boundary", "detector", "total (3)"}) {
    EXPECT_NE(out.find(s), std::string::npos) << s << " missing from:\n" << out;
  }
}

// A bare --check (no value) checks the --config file: CLI11 hands the option an empty string,
// which must not be taken for a file name.
TEST_F(LifecycleTest, BareCheckUsesTheConfigOption) {
  ASSERT_EQ(run({"--check", "--config", (kSource / "config" / "nnd.yaml").string()}), 0)
      << read_file(dir_ / "nnd.err");
  const std::string out = read_file(dir_ / "nnd.out");
  EXPECT_NE(out.find("nnd.yaml: OK"), std::string::npos) << out;
  EXPECT_NE(out.find("total (3)"), std::string::npos) << out;

  // The same with the flag last, and with a broken --config: exit 1 naming that file.
  const fs::path cfg = dir_ / "broken.yaml";
  std::ofstream(cfg) << "daemon:\n  workers: 0\n";
  EXPECT_EQ(run({"--config", cfg.string(), "--check"}), 1);
  EXPECT_NE(read_file(dir_ / "nnd.err").find("broken.yaml"), std::string::npos)
      << read_file(dir_ / "nnd.err");
}

TEST_F(LifecycleTest, CheckBrokenConfigFails) {
  const fs::path cfg = dir_ / "broken.yaml";
  std::ofstream(cfg) << "daemon:\n  workers: 0\nmodels:\n  - name: m\n    path: models/nope.h5\n";
  EXPECT_EQ(run({"--check", cfg.string()}), 1);
  const std::string err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("broken.yaml:2:"), std::string::npos) << err;
  EXPECT_NE(err.find("daemon.workers"), std::string::npos) << err;
  EXPECT_NE(err.find("broken.yaml:5:"), std::string::npos) << err;
  EXPECT_NE(err.find("model file not found"), std::string::npos) << err;

  // A valid config whose model is not a Keras file fails too, naming the model.
  std::ofstream(dir_ / "models" / "junk.h5") << "junk";
  const fs::path cfg2 = dir_ / "junk.yaml";
  std::ofstream(cfg2) << "models:\n  - name: junk\n    path: models/junk.h5\n";
  EXPECT_EQ(run({"--check", cfg2.string()}), 1);
  EXPECT_NE(read_file(dir_ / "nnd.err").find("model 'junk'"), std::string::npos);

  // Usage errors exit 2; --help exits 0 and explains the signals.
  EXPECT_EQ(run({"--no-such-flag"}), 2);
  EXPECT_EQ(run({"--help"}), 0);
  const std::string help = read_file(dir_ / "nnd.out");
  EXPECT_NE(help.find("--check"), std::string::npos);
  EXPECT_NE(help.find("SIGHUP"), std::string::npos);
}

TEST_F(LifecycleTest, ReadyReloadStop) {
  start_daemon(write_config("nnd.yaml"));
  EXPECT_TRUE(socket_exists()) << socket_path_;
  const std::string err = read_file(dir_ / "nnd.err");
  // The start-up line says which build is running.
  EXPECT_NE(err.find("starting: nnd " NND_VERSION_STRING " (git " NND_GIT_REVISION "), config"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("model 'ball' v1: compiled in"), std::string::npos) << err;
  EXPECT_NE(err.find("model 'detector' v1: compiled in"), std::string::npos) << err;
  EXPECT_NE(err.find("code "), std::string::npos) << err;

  // SIGHUP: RELOADING=1 with a current MONOTONIC_USEC, then READY=1.
  const uint64_t before = monotonic_us();
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  const std::string reloading = wait_for("RELOADING=1", 20000);
  ASSERT_NE(reloading.find("RELOADING=1"), std::string::npos) << reloading;
  const size_t mu = reloading.find("MONOTONIC_USEC=");
  ASSERT_NE(mu, std::string::npos) << reloading;
  const uint64_t stamp = std::stoull(reloading.substr(mu + 15));
  EXPECT_GE(stamp, before);
  EXPECT_LE(stamp, monotonic_us());
  const std::string ready = wait_for("READY=1", 60000);
  ASSERT_NE(ready.find("READY=1"), std::string::npos);
  EXPECT_NE(ready.find("generation 2"), std::string::npos) << ready;
  EXPECT_TRUE(alive());

  // SIGTERM: STOPPING=1, exit 0, socket gone.
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  const std::string stopping = wait_for("STOPPING=1", 20000);
  EXPECT_NE(stopping.find("STOPPING=1"), std::string::npos);
  EXPECT_EQ(wait_exit(30000), 0);
  EXPECT_FALSE(socket_exists());
}

TEST_F(LifecycleTest, SigintStopsToo) {
  start_daemon(write_config("nnd.yaml"));
  ASSERT_EQ(::kill(pid_, SIGINT), 0);
  EXPECT_NE(wait_for("STOPPING=1", 20000).find("STOPPING=1"), std::string::npos);
  EXPECT_EQ(wait_exit(30000), 0);
  EXPECT_FALSE(socket_exists());
}

TEST_F(LifecycleTest, FailedReloadKeepsServing) {
  const fs::path cfg = write_config("nnd.yaml");
  start_daemon(cfg);

  // 1. A config error.
  std::ofstream(cfg) << "models:\n  - name: ball\n    max_btach: 3\n";
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_for("RELOADING=1", 20000), "");
  std::string ready = wait_for("READY=1", 60000);
  EXPECT_NE(ready.find("STATUS=reload failed"), std::string::npos) << ready;
  EXPECT_NE(ready.find("generation 1"), std::string::npos) << ready;  // still the old set
  EXPECT_TRUE(alive());
  EXPECT_TRUE(socket_exists());

  // 2. A broken model file.
  write_config("nnd.yaml", "  - name: junk\n    path: models/junk.h5\n");
  std::ofstream(dir_ / "models" / "junk.h5") << "junk";
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_for("RELOADING=1", 20000), "");
  ready = wait_for("READY=1", 60000);
  EXPECT_NE(ready.find("reload failed"), std::string::npos) << ready;
  EXPECT_NE(ready.find("generation 1"), std::string::npos) << ready;
  EXPECT_NE(read_file(dir_ / "nnd.err").find("model 'junk'"), std::string::npos);

  // 3. Fixed: the reload goes through.
  write_config("nnd.yaml", "  - name: field_boundary\n    path: models/field_boundary.h5\n");
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_for("RELOADING=1", 20000), "");
  ready = wait_for("READY=1", 60000);
  EXPECT_EQ(ready.find("reload failed"), std::string::npos) << ready;
  EXPECT_NE(ready.find("serving 3 model(s), generation 2"), std::string::npos) << ready;
  const std::string err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("1 compiled, 2 unchanged"), std::string::npos) << err;

  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(wait_exit(30000), 0);
}

// From the robot review (issue 18): one bad model at start-up stopped the whole daemon (a restart
// loop under systemd with no network served). By default the others are served and STATUS= and
// the log say which one is missing; `on_model_error: fail` and `required: true` keep the old way.
TEST_F(LifecycleTest, DamagedModelAtStartupIsSkipped) {
  std::ofstream(dir_ / "models" / "junk.h5") << "junk";
  start_daemon(write_config("nnd.yaml", "  - name: junk\n    path: models/junk.h5\n"));
  // READY=1 came; its STATUS= (logged right after the notification) says a model was left out.
  const std::string ready_line = "serving 2 model(s), generation 1 on " + socket_path_ +
                                 "; 1 model(s) failed to load";
  std::string err;
  for (int i = 0; i < 500; ++i) {
    err = read_file(dir_ / "nnd.err");
    if (err.find(ready_line) != std::string::npos) break;
    ::usleep(10000);
  }
  EXPECT_NE(err.find("not serving model 'junk'"), std::string::npos) << err;
  EXPECT_NE(err.find(ready_line), std::string::npos) << err;
  EXPECT_TRUE(alive());
  EXPECT_TRUE(socket_exists());
#ifdef NND_HAVE_NNCLIENT
  nnclient_status st = NNCLIENT_E_SYSTEM;
  nnclient_t* c = nnclient_open(socket_path_.c_str(), &st);
  ASSERT_EQ(st, NNCLIENT_OK) << nnclient_last_error(nullptr);
  nnclient_model_info_t info{};
  EXPECT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_EQ(nnclient_model_info(c, "junk", &info), NNCLIENT_E_UNKNOWN_MODEL);
  nnclient_close(c);
#endif
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(wait_exit(30000), 0);

  for (const char* variant : {"fail", "required"}) {
    const fs::path cfg = dir_ / (std::string(variant) + ".yaml");
    std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_ << "\n"
                       << (std::string(variant) == "fail" ? "  on_model_error: fail\n" : "")
                       << "models:\n  - name: ball\n    path: models/ball_patch.h5\n"
                       << "  - name: junk\n    path: models/junk.h5\n"
                       << (std::string(variant) == "required" ? "    required: true\n" : "");
    pid_ = spawn({"--config", cfg.string()});
    EXPECT_EQ(wait_exit(60000), 1) << variant;
    EXPECT_NE(read_file(dir_ / "nnd.err").find("startup failed"), std::string::npos) << variant;
  }
}

TEST_F(LifecycleTest, StartupFailureExitsNonZeroWithoutReady) {
  const fs::path cfg = dir_ / "bad.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_
                     << "\nmodels:\n  - name: m\n    path: models/missing.h5\n";
  bind_notify_socket();
  pid_ = spawn({"--config", cfg.string()}, {{"NOTIFY_SOCKET", notify_path_}});
  EXPECT_EQ(wait_exit(30000), 1);
  std::string m;
  while (!(m = next_notification(100)).empty()) EXPECT_EQ(m.find("READY=1"), std::string::npos);
  EXPECT_FALSE(socket_exists());
  EXPECT_NE(read_file(dir_ / "nnd.err").find("bad.yaml:5:"), std::string::npos);
}

TEST_F(LifecycleTest, WatchdogPings) {
  start_daemon(write_config("nnd.yaml"), {{"WATCHDOG_USEC", "200000"}});
  // Pings every 100 ms: several within a second.
  int pings = watchdog_pings_;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < end) {
    if (next_notification(200) == "WATCHDOG=1") ++pings;
  }
  EXPECT_GE(pings, 4);
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);

  // `watchdog: off` in the config: no pings even when systemd asks.
  const fs::path cfg = dir_ / "nowd.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_
                     << "\n  watchdog: false\nmodels:\n  - name: ball\n"
                        "    path: models/ball_patch.h5\n";
  ::close(notify_fd_);
  fs::remove(notify_path_);
  start_daemon(cfg, {{"WATCHDOG_USEC", "200000"}});
  EXPECT_EQ(wait_for("WATCHDOG=1", 800), "");
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);
}

#ifdef NND_HAVE_NNCLIENT
TEST_F(LifecycleTest, ClientReloadTakesTheSamePath) {
  start_daemon(write_config("nnd.yaml"));
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(socket_path_.c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_strerror(st);
  EXPECT_EQ(nnclient_reload(c), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_NE(wait_for("RELOADING=1", 20000), "");
  EXPECT_NE(wait_for("READY=1", 60000).find("generation 2"), std::string::npos);

  // A failing reload is reported to the client as what it is (the config's or a model's fault,
  // not the daemon's), and the daemon keeps serving.
  write_config("nnd.yaml", "  - name: junk\n    path: models/junk.h5\n");
  std::ofstream(dir_ / "models" / "junk.h5") << "junk";
  EXPECT_EQ(nnclient_reload(c), NNCLIENT_E_RELOAD_FAILED) << nnclient_last_error(c);
  EXPECT_NE(std::string(nnclient_last_error(c)).find("junk"), std::string::npos)
      << nnclient_last_error(c);
  EXPECT_NE(wait_for("READY=1", 60000).find("reload failed"), std::string::npos);
  nnclient_close(c);

  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);
  EXPECT_FALSE(socket_exists());
}
#endif

// ---- daemon.run_as ---------------------------------------------------------------------------

namespace {

std::optional<std::pair<uid_t, gid_t>> nobody_ids() {
  if (::geteuid() != 0) return std::nullopt;
  const passwd* pw = ::getpwnam("nobody");
  if (!pw || pw->pw_uid == 0) return std::nullopt;
  return std::make_pair(pw->pw_uid, pw->pw_gid);
}

// The "Uid:" or "Gid:" line of /proc/<pid>/status, e.g. "65534\t65534\t65534\t65534".
std::string proc_ids(pid_t pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(field + ":\t", 0) == 0) return line.substr(field.size() + 2);
  }
  return "";
}

// Whether this process may put a thread under SCHED_FIFO at all (a container may forbid it).
bool realtime_allowed() {
  bool ok = false;
  std::thread([&ok] {
    sched_param sp{};
    sp.sched_priority = 1;
    ok = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
  }).join();
  return ok;
}

}  // namespace

// Started as root with run_as: nobody, nnd binds its socket, drops to nobody for good before it
// loads a model, and then serves, reloads and stops as nobody; a root client still trusts it (the
// socket's credentials are those of the listen() call, made as root).
TEST_F(LifecycleTest, RunAsDropsRootBeforeLoadingModels) {
  const auto nobody = nobody_ids();
  if (!nobody) GTEST_SKIP() << "needs root and a 'nobody' user";
  // nobody must reach the config (reload), the models and the notify socket.
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const bool rt = realtime_allowed();
  const fs::path cfg = dir_ / "run_as.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_ << "\n  run_as: nobody\n"
                     << "  workers: 1\n  log_level: debug\n"
                     << (rt ? "  realtime_priority: 1\n" : "")
                     << "models:\n  - name: ball\n    path: models/ball_patch.h5\n";
  bind_notify_socket();
  ASSERT_EQ(::chmod(notify_path_.c_str(), 0777), 0);
  pid_ = spawn({"--config", cfg.string()}, {{"NOTIFY_SOCKET", notify_path_}});
  ASSERT_NE(wait_for("READY=1", 60000), "") << read_file(dir_ / "nnd.err");

  const std::string id = std::to_string(nobody->first), gid = std::to_string(nobody->second);
  EXPECT_EQ(proc_ids(pid_, "Uid"), id + "\t" + id + "\t" + id + "\t" + id);
  EXPECT_EQ(proc_ids(pid_, "Gid"), gid + "\t" + gid + "\t" + gid + "\t" + gid);
  const std::string groups = proc_ids(pid_, "Groups");
  EXPECT_EQ((" " + groups + " ").find(" 0 "), std::string::npos) << groups;

  // Dropped before the first model was loaded.
  const std::string err = read_file(dir_ / "nnd.err");
  const size_t dropped = err.find("dropped root: running as nobody");
  ASSERT_NE(dropped, std::string::npos) << err;
  EXPECT_LT(dropped, err.find("compiled 1 model(s)")) << err;
  if (rt) {
    EXPECT_EQ(err.find("cannot use SCHED_FIFO"), std::string::npos) << err;
    EXPECT_NE(proc_ids(pid_, "CapEff"), "0000000000000000");  // CAP_SYS_NICE, nothing more
    EXPECT_EQ(proc_ids(pid_, "CapEff"), "0000000000800000");
  }

#ifdef NND_HAVE_NNCLIENT
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(socket_path_.c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_last_error(nullptr);
  auto infer = [&] {
    nnclient_model_info_t info{};
    ASSERT_EQ(nnclient_model_info(c, "ball", &info), NNCLIENT_OK) << nnclient_last_error(c);
    std::vector<std::vector<unsigned char>> in(info.num_inputs), out(info.num_outputs);
    std::vector<const void*> ins;
    std::vector<void*> outs;
    for (uint32_t k = 0; k < info.num_inputs; ++k) {
      in[k].assign(info.inputs[k].sample_bytes, 0);
      ins.push_back(in[k].data());
    }
    for (uint32_t k = 0; k < info.num_outputs; ++k) {
      out[k].assign(info.outputs[k].sample_bytes, 0);
      outs.push_back(out[k].data());
    }
    EXPECT_EQ(nnclient_infer(c, &info, ins.data(), 1, outs.data(), 10'000'000), NNCLIENT_OK)
        << nnclient_last_error(c);
  };
  infer();
  // A reload re-reads the config and the model as nobody.
  EXPECT_EQ(nnclient_reload(c), NNCLIENT_OK) << nnclient_last_error(c);
  infer();
  nnclient_close(c);
#endif

  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(wait_exit(30000), 0);
  // dir_/run is root's: nobody could not remove the socket. The daemon said so, and the next
  // start replaces the file nobody answers on.
  EXPECT_NE(read_file(dir_ / "nnd.err").find("cannot remove " + socket_path_ + " at exit"),
            std::string::npos);
  while (!next_notification(0).empty()) {
  }  // the first daemon's last messages
  pid_ = spawn({"--config", cfg.string()}, {{"NOTIFY_SOCKET", notify_path_}});
  ASSERT_NE(wait_for("READY=1", 60000), "") << read_file(dir_ / "nnd.err");
  ASSERT_EQ(::kill(pid_, SIGTERM), 0);
  EXPECT_EQ(wait_exit(30000), 0);
}

// run_as needs root: any other user gets a clear error, and no socket.
TEST_F(LifecycleTest, RunAsWithoutRootIsAnError) {
  const auto nobody = nobody_ids();
  if (!nobody) GTEST_SKIP() << "needs root and a 'nobody' user";
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const fs::path cfg = dir_ / "run_as_root.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_ << "\n  run_as: root\n"
                     << "models:\n  - name: ball\n    path: models/ball_patch.h5\n";
  spawn_as_ = nobody;
  pid_ = spawn({"--config", cfg.string()});
  EXPECT_EQ(wait_exit(30000), 1);
  const std::string err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("daemon.run_as: nnd runs as uid " + std::to_string(nobody->first) +
                     ", not as root, so it cannot switch to 'root'"),
            std::string::npos)
      << err;
  EXPECT_FALSE(socket_exists());
}

// Issue 18, defect 2: a model file that crashes a parser (here libhdf5, in H5HG_read) killed the
// daemon when a reload loaded it, taking every serving model down. Every new or changed file is
// now parsed by a child process first (daemon/registry/model_validator.h); the crash ends the
// child, the reload fails naming the file and the signal, and the old models keep answering.
#ifdef NND_HAVE_NNCLIENT
namespace {

const fs::path kCrasher = fs::path(NND_TEST_DATA_DIR) / "crashers" / "model_config_heap_index.h5";

// One sample of zeros through `model`; the first output's bytes go to *out.
nnclient_status infer_zeros(nnclient_t* c, const char* model, std::vector<unsigned char>* out) {
  nnclient_model_info_t info{};
  const nnclient_status st = nnclient_model_info(c, model, &info);
  if (st != NNCLIENT_OK) return st;
  std::vector<std::vector<unsigned char>> in(info.num_inputs), res(info.num_outputs);
  std::vector<const void*> inp;
  std::vector<void*> outp;
  for (uint32_t k = 0; k < info.num_inputs; ++k) {
    in[k].assign(info.inputs[k].sample_bytes, 0);
    inp.push_back(in[k].data());
  }
  for (uint32_t k = 0; k < info.num_outputs; ++k) {
    res[k].assign(info.outputs[k].sample_bytes, 0xff);
    outp.push_back(res[k].data());
  }
  const nnclient_status r = nnclient_infer(c, &info, inp.data(), 1, outp.data(), 20'000'000);
  if (r == NNCLIENT_OK) *out = res[0];
  return r;
}

}  // namespace

TEST_F(LifecycleTest, ReloadOntoAFileThatCrashesLibhdf5KeepsServing) {
  start_daemon(write_config("nnd.yaml"));
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(socket_path_.c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_strerror(st);
  std::vector<unsigned char> before, after;
  ASSERT_EQ(infer_zeros(c, "ball", &before), NNCLIENT_OK) << nnclient_last_error(c);

  // The damaged file takes the place of ball's (a new mtime: the reload must load it).
  const fs::path ball = dir_ / "models" / "ball_patch.h5";
  fs::copy_file(kCrasher, ball, fs::copy_options::overwrite_existing);
  const std::string crashed = ball.string() + ": crashed the model validator (SIGSEGV)";

  // 1. SIGHUP.
  ASSERT_EQ(::kill(pid_, SIGHUP), 0);
  ASSERT_NE(wait_for("RELOADING=1", 20000), "");
  const std::string ready = wait_for("READY=1", 60000);
  EXPECT_NE(ready.find("reload failed"), std::string::npos) << ready;
  EXPECT_NE(ready.find("generation 1"), std::string::npos) << ready;
  ASSERT_TRUE(alive());
  const std::string err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("reload failed, still serving the previous models"), std::string::npos) << err;
  EXPECT_NE(err.find("model 'ball': " + crashed), std::string::npos) << err;
  ASSERT_EQ(infer_zeros(c, "ball", &after), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_EQ(after, before);  // the old model answers

  // 2. A client's reload request (what `nnctl reload` and `systemctl reload` send).
  EXPECT_NE(nnclient_reload(c), NNCLIENT_OK);
  EXPECT_NE(std::string(nnclient_last_error(c)).find(crashed), std::string::npos)
      << nnclient_last_error(c);
  EXPECT_NE(wait_for("READY=1", 60000).find("reload failed"), std::string::npos);
  ASSERT_TRUE(alive());
  after.clear();
  ASSERT_EQ(infer_zeros(c, "ball", &after), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_EQ(after, before);

  // 3. The file repaired: the reload goes through.
  fs::copy_file(kSource / "examples" / "models" / "ball_patch.h5", ball,
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(nnclient_reload(c), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_NE(wait_for("READY=1", 60000).find("generation 2"), std::string::npos);
  nnclient_close(c);
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);
}

// At start-up the crash is one more way for a model to fail: skipped with on_model_error: skip
// (the others serve), fatal (exit 1, not a crash) when the model is required.
TEST_F(LifecycleTest, AFileThatCrashesLibhdf5AtStartupIsSkipped) {
  fs::copy_file(kCrasher, dir_ / "models" / "crash.h5");
  const std::string crashed =
      (dir_ / "models" / "crash.h5").string() + ": crashed the model validator (SIGSEGV)";
  start_daemon(write_config("nnd.yaml", "  - name: crash\n    path: models/crash.h5\n"));
  const std::string ready_line = "serving 2 model(s), generation 1 on " + socket_path_ +
                                 "; 1 model(s) failed to load";
  std::string err;
  for (int i = 0; i < 500 && err.find(ready_line) == std::string::npos; ++i) {
    ::usleep(10000);
    err = read_file(dir_ / "nnd.err");
  }
  EXPECT_NE(err.find(ready_line), std::string::npos) << err;
  EXPECT_NE(err.find("not serving model 'crash': " + crashed), std::string::npos) << err;
  EXPECT_NE(err.find("model 'ball': 78632 bytes validated in a child process in "),
            std::string::npos)
      << err;
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(socket_path_.c_str(), &st);
  ASSERT_NE(c, nullptr) << nnclient_strerror(st);
  std::vector<unsigned char> out;
  EXPECT_EQ(infer_zeros(c, "ball", &out), NNCLIENT_OK) << nnclient_last_error(c);
  EXPECT_EQ(infer_zeros(c, "crash", &out), NNCLIENT_E_UNKNOWN_MODEL);
  nnclient_close(c);
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);

  const fs::path cfg = dir_ / "required.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_ << "\n"
                     << "models:\n  - name: ball\n    path: models/ball_patch.h5\n"
                     << "  - name: crash\n    path: models/crash.h5\n    required: true\n";
  pid_ = spawn({"--config", cfg.string()});
  EXPECT_EQ(wait_exit(60000), 1);
  err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("startup failed"), std::string::npos) << err;
  EXPECT_NE(err.find(crashed), std::string::npos) << err;

  // `nnd --check` reports it too instead of dying with it.
  EXPECT_EQ(run({"--check", cfg.string()}), 1);
  EXPECT_NE(read_file(dir_ / "nnd.err").find("model 'crash': " + crashed), std::string::npos);
}
#endif

// daemon.validate_models: in_process loads files without the child (no "validated" line).
TEST_F(LifecycleTest, ValidateModelsInProcessSkipsTheChild) {
  const fs::path cfg = dir_ / "inproc.yaml";
  std::ofstream(cfg) << "daemon:\n  endpoint: " << endpoint_ << "\n  log_level: info\n"
                     << "  validate_models: in_process\n"
                     << "models:\n  - name: ball\n    path: models/ball_patch.h5\n";
  start_daemon(cfg);
  std::string err = read_file(dir_ / "nnd.err");
  EXPECT_NE(err.find("model 'ball' v1: compiled in"), std::string::npos) << err;
  EXPECT_EQ(err.find("validated in a child process"), std::string::npos) << err;
  ::kill(pid_, SIGTERM);
  EXPECT_EQ(wait_exit(30000), 0);
}
