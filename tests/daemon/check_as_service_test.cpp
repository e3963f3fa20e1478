// `nnd --check` checks the files as the service will read them: as its user (daemon.run_as or
// nnd.service's User=), and through the unit's sandbox (ProtectHome=, PrivateTmp=, minus
// Bind*Paths=). The unit is read from $SYSTEMD_UNIT_PATH here, as systemd honours it.
#include <gtest/gtest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/base/service_unit.h"
#include "tests/support/exec_prefix.h"

namespace fs = std::filesystem;

namespace {

using nnd::daemon::apply_unit_text;
using nnd::daemon::hidden_by_unit;
using nnd::daemon::read_service_unit;
using nnd::daemon::ServiceUnit;

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ServiceUnit, ReadsUserAndSandboxFromTheServiceSection) {
  ServiceUnit u;
  u.protect_home = "no";
  apply_unit_text("[Unit]\nUser=wrong\n[Service]\nUser=nnd\nProtectHome=yes\nPrivateTmp=true\n"
                  "BindReadOnlyPaths=/home/nao/models -/home/nao/extra:/srv/extra:rbind\n"
                  "# BindPaths=/nope\n[Install]\nUser=wrong\n",
                  u);
  EXPECT_EQ(u.user, "nnd");
  EXPECT_EQ(u.protect_home, "yes");
  EXPECT_TRUE(u.private_tmp);
  EXPECT_EQ(u.bind_paths, (std::vector<std::string>{"/home/nao/models", "/srv/extra"}));

  EXPECT_EQ(hidden_by_unit(u, "/home/nao/models/ball.h5"), std::nullopt);  // bound back in
  EXPECT_EQ(hidden_by_unit(u, "/home/nao/models"), std::nullopt);
  EXPECT_EQ(hidden_by_unit(u, "/usr/share/nnd/models/ball.h5"), std::nullopt);
  EXPECT_EQ(hidden_by_unit(u, "/homework/ball.h5"), std::nullopt);  // not below /home
  const auto home = hidden_by_unit(u, "/home/nao/other/ball.h5");
  ASSERT_TRUE(home.has_value());
  EXPECT_NE(home->find("hides /home from the daemon (ProtectHome=yes)"), std::string::npos) << *home;
  EXPECT_TRUE(hidden_by_unit(u, "/root/ball.h5").has_value());
  const auto tmp = hidden_by_unit(u, "/tmp/../tmp/models/ball.h5");
  ASSERT_TRUE(tmp.has_value());
  EXPECT_NE(tmp->find("private, empty /tmp (PrivateTmp=yes)"), std::string::npos) << *tmp;

  // read-only keeps /home visible; an empty BindReadOnlyPaths= resets the list.
  apply_unit_text("[Service]\nProtectHome=read-only\nPrivateTmp=no\nBindReadOnlyPaths=\n", u);
  EXPECT_TRUE(u.bind_paths.empty());
  EXPECT_EQ(hidden_by_unit(u, "/home/nao/other/ball.h5"), std::nullopt);
  EXPECT_EQ(hidden_by_unit(u, "/tmp/ball.h5"), std::nullopt);
}

struct UnitDir {
  fs::path dir = fs::temp_directory_path() / ("nnd_units_" + std::to_string(::getpid()));
  UnitDir() {
    fs::remove_all(dir);
    fs::create_directories(dir / "etc" / "nnd.service.d");
    fs::create_directories(dir / "lib");
    ::setenv("SYSTEMD_UNIT_PATH", ((dir / "etc").string() + ":" + (dir / "lib").string()).c_str(), 1);
  }
  ~UnitDir() {
    ::unsetenv("SYSTEMD_UNIT_PATH");
    fs::remove_all(dir);
  }
};

TEST(ServiceUnit, DropInsOverrideTheUnitFile) {
  UnitDir units;
  EXPECT_EQ(read_service_unit(), std::nullopt);  // nothing installed
  std::ofstream(units.dir / "lib" / "nnd.service") << "[Service]\nUser=nnd\nProtectHome=yes\n";
  std::ofstream(units.dir / "etc" / "nnd.service.d" / "models.conf")
      << "[Service]\nBindReadOnlyPaths=/home/nao/models\n";
  const auto u = read_service_unit();
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->user, "nnd");
  EXPECT_EQ(u->bind_paths, std::vector<std::string>{"/home/nao/models"});
  EXPECT_NE(u->source.find("lib/nnd.service + "), std::string::npos) << u->source;
  EXPECT_NE(u->source.find("models.conf"), std::string::npos) << u->source;
}

// nnd --check FILE with `env` added; returns the exit status, stdout and stderr.
struct CheckRun {
  int status = -1;
  std::string out, err;
};

CheckRun run_check(const fs::path& dir, const fs::path& config, const std::map<std::string, std::string>& env) {
  const fs::path out = dir / "check.out", err = dir / "check.err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(err.c_str(), "w", stderr);
    std::vector<std::string> argv = nnd::test::prefixed_command(NND_EXE, {"--check", config.string()});
    std::vector<char*> ptrs;
    for (std::string& a : argv) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    ::execv(ptrs[0], ptrs.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, read_text(out), read_text(err)};
}

class CheckAsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the check becomes another user";
    dir_ = fs::temp_directory_path() / ("nnd_check_as_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "private");
    fs::create_directories(dir_ / "open");
    ::chmod(dir_.c_str(), 0755);
    ::chmod((dir_ / "private").c_str(), 0700);  // root's alone
    ::chmod((dir_ / "open").c_str(), 0755);
    const fs::path model = fs::path(NND_SOURCE_DIR) / "examples" / "models" / "ball_patch.h5";
    fs::copy_file(model, dir_ / "private" / "ball.h5");
    fs::copy_file(model, dir_ / "open" / "ball.h5");
    ::chmod((dir_ / "open" / "ball.h5").c_str(), 0644);
    ::setenv("SYSTEMD_UNIT_PATH", (dir_ / "units").c_str(), 1);  // no nnd.service unless a test writes one
    fs::create_directories(dir_ / "units");
  }
  void TearDown() override {
    ::unsetenv("SYSTEMD_UNIT_PATH");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path config(const std::string& daemon_lines, const std::string& model_dir) {
    const fs::path p = dir_ / "nnd.yaml";
    std::ofstream(p) << "daemon:\n  validate_models: in_process\n" << daemon_lines << "models:\n  - name: ball\n    path: "
                     << (dir_ / model_dir / "ball.h5").string() << "\n";
    ::chmod(p.c_str(), 0644);
    return p;
  }
  std::map<std::string, std::string> env() const { return {{"SYSTEMD_UNIT_PATH", (dir_ / "units").string()}}; }
  fs::path dir_;
};

// The target of issue 37: as root, a model the service user cannot read is refused, naming the user.
TEST_F(CheckAsServiceTest, AModelTheRunAsUserCannotReadIsRefusedNamingTheUser) {
  const CheckRun r = run_check(dir_, config("  run_as: nobody\n", "private"), env());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("files checked as user 'nobody' (daemon.run_as)"), std::string::npos) << r.out;
  const std::string want = "model 'ball': " + (dir_ / "private" / "ball.h5").string() +
                           ": user 'nobody' (daemon.run_as) cannot read it: " + (dir_ / "private").string() +
                           " is drwx------ root:root";
  EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the service's user cannot read every file it needs"), std::string::npos) << r.err;

  // The same model where the user can read it passes.
  const CheckRun ok = run_check(dir_, config("  run_as: nobody\n", "open"), env());
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
}

TEST_F(CheckAsServiceTest, TheUnitsUserAndSandboxApplyWithoutRunAs) {
  std::ofstream(dir_ / "units" / "nnd.service") << "[Service]\nUser=nobody\nPrivateTmp=yes\n";
  const CheckRun r = run_check(dir_, config("", "private"), env());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("user 'nobody' (User= of " + (dir_ / "units" / "nnd.service").string() + ") cannot read it"),
            std::string::npos)
      << r.err;

  // Readable, but in /tmp, which the unit makes private: a warning with the way out.
  const CheckRun w = run_check(dir_, config("", "open"), env());
  EXPECT_EQ(w.status, 0) << w.out << w.err;
  EXPECT_NE(w.err.find("warning: model 'ball': " + (dir_ / "open" / "ball.h5").string() +
                       ": nnd.service gives the daemon a private, empty /tmp (PrivateTmp=yes), so the service "
                       "will not find it; move it"),
            std::string::npos)
      << w.err;
  EXPECT_NE(w.err.find("BindReadOnlyPaths=" + (dir_ / "open").string()), std::string::npos) << w.err;

  // The config (in /tmp too) is named as well; a drop-in that binds the folders back in silences
  // both.
  EXPECT_NE(w.err.find("warning: config: " + (dir_ / "nnd.yaml").string()), std::string::npos) << w.err;
  fs::create_directories(dir_ / "units" / "nnd.service.d");
  std::ofstream(dir_ / "units" / "nnd.service.d" / "models.conf")
      << "[Service]\nBindReadOnlyPaths=" << (dir_ / "open").string() << "\nBindReadOnlyPaths="
      << (dir_ / "nnd.yaml").string() << "\n";
  const CheckRun b = run_check(dir_, config("", "open"), env());
  EXPECT_EQ(b.status, 0) << b.out << b.err;
  EXPECT_EQ(b.err.find("warning"), std::string::npos) << b.err;
}

TEST_F(CheckAsServiceTest, WithoutAServiceUserTheCallerIsChecked) {
  const CheckRun r = run_check(dir_, config("", "private"), env());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("files checked as the calling user"), std::string::npos) << r.out;
}

}  // namespace
