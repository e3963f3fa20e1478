// Config parsing and validation: every error kind is reported with its key and line number.
#include <gtest/gtest.h>

#include <pwd.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "core/engine/engine_options.h"
#include "core/jit/isa.h"
#include "core/engine/model_options.h"
#include "core/util/closest_match.h"
#include "daemon/config/config.h"

namespace fs = std::filesystem;
using namespace nnd::daemon;

namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnd_config_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "models");
    for (const char* f : {"a.h5", "b.h5"}) std::ofstream(dir_ / "models" / f) << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }

  Config parse(const std::string& yaml) { return parse_config(yaml, "test.yaml", dir_.string()); }

  // Parses text expected to fail and returns its issues.
  std::vector<ConfigIssue> issues(const std::string& yaml) {
    try {
      parse(yaml);
    } catch (const ConfigError& e) {
      return e.issues();
    }
    ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
    return {};
  }

  // The one issue of `yaml`, which must be at `line` for `key` and contain `text`.
  void expect_one(const std::string& yaml, int line, const std::string& key,
                  const std::string& text) {
    const auto is = issues(yaml);
    ASSERT_EQ(is.size(), 1u) << (is.empty() ? "" : ConfigError("t", is).what());
    EXPECT_EQ(is[0].line, line) << is[0].to_string("test.yaml");
    EXPECT_EQ(is[0].key, key) << is[0].to_string("test.yaml");
    EXPECT_NE(is[0].message.find(text), std::string::npos) << is[0].to_string("test.yaml");
    // The formatted message names the file, line and key.
    const std::string s = is[0].to_string("test.yaml");
    EXPECT_EQ(s.rfind("test.yaml:" + std::to_string(line) + ":", 0), 0u) << s;
    EXPECT_NE(s.find(key), std::string::npos) << s;
  }

  fs::path dir_;
};

const char* kValid = R"(daemon:
  endpoint: robot
  socket_mode: 0640
  workers: 3
  cpu_affinity: [1, 2]
  realtime_priority: 20
  log_level: debug
  watchdog: off
  max_clients: 8
  max_inflight_per_client: 4
  slots_per_client: 8
  spin_us: 0
models:
  - name: ball
    path: models/a.h5
    inputs: {patch: uint8, other: float32}
    max_batch: 64
    batch_delay_us: 150
    priority: 5
    engine: reference
    isa: sse4.1
    math: fast
  - name: second
    path: models/b.h5
)";

// kValid names the SSE4.1 ISA: a build without x86 ISAs (AArch64 today) rejects it, and gets
// `auto` on the same line instead.
std::string valid_config() {
  std::string yaml = kValid;
  if (!nnd::jit::isa_from_id("sse4.1")) yaml.replace(yaml.find("isa: sse4.1"), 11, "isa: auto");
  return yaml;
}

}  // namespace

TEST_F(ConfigTest, ValidConfigAndDefaults) {
  const Config c = parse(valid_config());
  EXPECT_EQ(c.daemon.endpoint, "robot");
  EXPECT_EQ(c.daemon.socket_mode, 0640u);
  EXPECT_EQ(c.daemon.workers, 3u);
  EXPECT_EQ(c.daemon.cpu_affinity, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.daemon.realtime_priority, 20);
  EXPECT_EQ(c.daemon.log_level, LogLevel::kDebug);
  EXPECT_FALSE(c.daemon.watchdog);
  EXPECT_EQ(c.daemon.max_clients, 8u);
  EXPECT_EQ(c.daemon.max_inflight_per_client, 4u);
  EXPECT_EQ(c.daemon.slots_per_client, 8u);
  EXPECT_EQ(c.daemon.spin_us, 0u);
  ASSERT_EQ(c.models.size(), 2u);
  const ModelSettings& a = c.models[0];
  EXPECT_EQ(a.name, "ball");
  EXPECT_EQ(a.path, (dir_ / "models" / "a.h5").string());  // relative to the config's folder
  ASSERT_EQ(a.options.input_dtypes.size(), 2u);
  EXPECT_EQ(a.options.input_dtypes[0].first, "patch");
  EXPECT_EQ(a.options.input_dtypes[0].second, nnd::DType::kUInt8);
  EXPECT_EQ(a.options.input_dtypes[1].second, nnd::DType::kFloat32);
  EXPECT_EQ(a.max_batch, 64u);
  EXPECT_EQ(a.batch_delay_us, 150u);
  EXPECT_EQ(a.priority, 5);
  EXPECT_FALSE(a.options.engine_auto);
  EXPECT_EQ(a.options.engine.engine, nnd::EngineKind::kReference);
  EXPECT_EQ(a.options.engine.isa, nnd::jit::isa_from_id("sse4.1") ? nnd::IsaChoice(nnd::jit::Isa::kSse41) : nnd::IsaChoice::kAuto);
  EXPECT_EQ(a.options.engine.math, nnd::MathMode::kFast);
  EXPECT_EQ(c.model_lines[0], 14);

  // Defaults, as config/SCHEMA.md documents them.
  const Config d = parse("models:\n  - name: m\n    path: models/b.h5\n");
  EXPECT_EQ(d.daemon.endpoint, "nnd");
  EXPECT_EQ(d.daemon.socket_mode, 0660u);
  EXPECT_EQ(d.daemon.workers, 2u);
  EXPECT_TRUE(d.daemon.cpu_affinity.empty());
  EXPECT_EQ(d.daemon.realtime_priority, 0);
  EXPECT_EQ(d.daemon.log_level, LogLevel::kInfo);
  EXPECT_TRUE(d.daemon.watchdog);
  EXPECT_EQ(d.daemon.max_clients, 32u);
  EXPECT_EQ(d.daemon.max_inflight_per_client, 16u);
  EXPECT_EQ(d.daemon.slots_per_client, 16u);
  EXPECT_EQ(d.daemon.spin_us, 50u);
  const ModelSettings& m = d.models[0];
  EXPECT_TRUE(m.options.engine_auto);
  EXPECT_EQ(m.options.engine.isa, nnd::IsaChoice::kAuto);
  EXPECT_EQ(m.options.engine.math, nnd::MathMode::kExact);
  EXPECT_EQ(m.max_batch, 16u);
  EXPECT_EQ(m.batch_delay_us, 0u);
  EXPECT_EQ(m.priority, 0);
  EXPECT_TRUE(m.options.input_dtypes.empty());

  // An empty model list is allowed (the daemon then serves nothing).
  EXPECT_TRUE(parse("models: []\n").models.empty());
}

// threads: auto or 1..kMaxThreads per model (EngineOptions::threads); default 1.
TEST_F(ConfigTest, ModelThreads) {
  EXPECT_EQ(parse("models:\n  - name: m\n    path: models/b.h5\n").models[0].options.engine.threads, 1);
  EXPECT_EQ(parse("models:\n  - name: m\n    path: models/b.h5\n    threads: 3\n").models[0].options.engine.threads, 3);
  EXPECT_EQ(parse("models:\n  - name: m\n    path: models/b.h5\n    threads: auto\n").models[0].options.engine.threads,
            nnd::kAutoThreads);
  expect_one("models:\n  - name: m\n    path: models/b.h5\n    threads: 0\n", 4, "models[0].threads",
             "expected auto or a count 1..64, got '0'");
  expect_one("models:\n  - name: m\n    path: models/b.h5\n    threads: many\n", 4, "models[0].threads",
             "expected auto or a count 1..64, got 'many'");
}

// The engine keys are read by core/engine/model_options.h, as libnnd's nnd_options_set reads
// them: the same spellings, defaults and messages, at the key's line.
TEST_F(ConfigTest, ModelOptionsAsLibnndReadsThem) {
  const Config c = parse("models:\n  - name: m\n    path: models/b.h5\n    precision: int8\n");
  EXPECT_EQ(c.models[0].options.precision, nnd::Precision::kInt8);
  EXPECT_TRUE(c.models[0].options.engine_auto);
  EXPECT_EQ(parse("models:\n  - name: m\n    path: models/b.h5\n").models[0].options.precision,
            nnd::Precision::kFloat32);
  for (const char* key : {"engine", "isa", "math", "threads", "precision"}) {
    nnd::ModelOptions o;
    const std::string problem = nnd::apply_model_option(o, key, "bogus");
    ASSERT_FALSE(problem.empty()) << key;
    expect_one(std::string("models:\n  - name: m\n    path: models/b.h5\n    ") + key + ": bogus\n", 4, std::string("models[0].") + key,
               problem);
  }
  // A value that is no short printable token is named by its size, not repeated.
  const std::string long_value(500, 'x');
  expect_one("models:\n  - name: m\n    path: models/b.h5\n    engine: " + long_value + "\n", 4, "models[0].engine",
             "expected reference, jit or auto, got a value of 500 bytes");
}

TEST_F(ConfigTest, UnknownKeySuggestsClosest) {
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    max_btach: 4\n", 4,
             "models[0].max_btach", "did you mean 'max_batch'?");
  expect_one("daemon:\n  wrokers: 2\nmodels: []\n", 2, "daemon.wrokers",
             "did you mean 'workers'?");
  expect_one("modles: []\n", 1, "modles", "did you mean 'models'?");
  // Far from everything: the known keys are listed instead.
  const auto is = issues("daemon:\n  colour: blue\nmodels: []\n");
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].line, 2);
  EXPECT_NE(is[0].message.find("known keys here"), std::string::npos);
}

TEST_F(ConfigTest, WrongType) {
  expect_one("daemon:\n  workers: many\nmodels: []\n", 2, "daemon.workers",
             "expected an integer, got 'many'");
  expect_one("daemon:\n  watchdog: maybe\nmodels: []\n", 2, "daemon.watchdog",
             "expected true or false");
  expect_one("daemon:\n  cpu_affinity: 3\nmodels: []\n", 2, "daemon.cpu_affinity",
             "expected a list");
  expect_one("models:\n  name: m\n", 2, "models", "expected a list of models");
  expect_one("models:\n  - name: [a, b]\n    path: models/a.h5\n", 2, "models[0].name",
             "expected a string, got a list");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    inputs: [x]\n", 4,
             "models[0].inputs", "expected a mapping");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    inputs: {x: int16}\n", 4,
             "models[0].inputs.x", "expected uint8 or float32");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    max_batch: 1.5\n", 4,
             "models[0].max_batch", "expected an integer");
  expect_one("daemon:\n  log_level: loud\nmodels: []\n", 2, "daemon.log_level",
             "expected error, warning, notice, info or debug");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    engine: gpu\n", 4,
             "models[0].engine", "expected reference, jit or auto");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    math: sloppy\n", 4,
             "models[0].math", "expected exact or fast");
  expect_one("- 1\n- 2\n", 1, "", "must be a mapping");
}

TEST_F(ConfigTest, DuplicateModelName) {
  expect_one(
      "models:\n"
      "  - name: ball\n"
      "    path: models/a.h5\n"
      "  - name: other\n"
      "    path: models/a.h5\n"
      "  - name: ball\n"
      "    path: models/b.h5\n",
      6, "models[2].name", "duplicate model name 'ball' (first defined on line 2)");
  // A key given twice in one mapping.
  expect_one("models:\n  - name: a\n    path: models/a.h5\n    name: b\n", 4, "models[0].name",
             "key given twice");
}

TEST_F(ConfigTest, MissingModelFile) {
  expect_one("models:\n  - name: m\n    path: models/nope.h5\n", 3, "models[0].path",
             "model file not found: " + (dir_ / "models" / "nope.h5").string());
  expect_one("models:\n  - name: m\n    path: models\n", 3, "models[0].path",
             "not a regular file");
  expect_one("models:\n  - name: m\n", 2, "models[0].path", "missing");
  expect_one("models:\n  - path: models/a.h5\n", 2, "models[0].name", "missing");
  expect_one("daemon: {}\n", 1, "models", "missing");
}

TEST_F(ConfigTest, BadIsaName) {
  // The spellings of the build's architecture (x86-64: auto, sse4.1, avx2 or avx512; AArch64:
  // auto, neon); another architecture's ISA is as unknown as a misspelt one.
  std::string expected = "unknown ISA 'avx3'; expected ";
  expected += nnd::isa_choice_list();
  if (nnd::jit::isa_from_id("avx2")) expected += " (did you mean 'avx2'?)";
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    isa: avx3\n", 4, "models[0].isa", expected);
  const std::string foreign = nnd::jit::isa_from_id("neon") ? "avx512" : "neon";
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    isa: " + foreign + "\n", 4, "models[0].isa",
             "unknown ISA '" + foreign + "'");
}

TEST_F(ConfigTest, OutOfRangeNumbers) {
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    max_batch: 0\n", 4,
             "models[0].max_batch", "must be 1..4096, got 0");
  expect_one("daemon:\n  realtime_priority: 100\nmodels: []\n", 2, "daemon.realtime_priority",
             "must be 0..99, got 100");
  expect_one("daemon:\n  workers: -1\nmodels: []\n", 2, "daemon.workers", "must be 1..64");
  expect_one("daemon:\n  socket_mode: 01777\nmodels: []\n", 2, "daemon.socket_mode",
             "must be 00..0777");
  expect_one("daemon:\n  socket_mode: 0689\nmodels: []\n", 2, "daemon.socket_mode",
             "expected an integer (octal)");
  expect_one("daemon:\n  cpu_affinity: [0, 5000]\nmodels: []\n", 2, "daemon.cpu_affinity[1]",
             "must be 0..1023");
  expect_one("daemon:\n  slots_per_client: 65\nmodels: []\n", 2, "daemon.slots_per_client",
             "must be 1..64");
  expect_one("daemon:\n  max_clients: 99999999999999999999999\nmodels: []\n", 2,
             "daemon.max_clients", "must be 1..4096");
  expect_one("models:\n  - name: m\n    path: models/a.h5\n    batch_delay_us: 2000000\n", 4,
             "models[0].batch_delay_us", "must be 0..1000000");
}

TEST_F(ConfigTest, UnknownUserAndGroup) {
  expect_one("daemon:\n  user: no_such_user_nnd\nmodels: []\n", 2, "daemon.user",
             "unknown user 'no_such_user_nnd'");
  expect_one("daemon:\n  group: no_such_group_nnd\nmodels: []\n", 2, "daemon.group",
             "unknown group 'no_such_group_nnd'");
  const Config c = parse("daemon:\n  user: root\n  group: \"0\"\nmodels: []\n");
  ASSERT_TRUE(c.daemon.allowed_uid.has_value());
  EXPECT_EQ(*c.daemon.allowed_uid, 0u);
  ASSERT_TRUE(c.daemon.allowed_gid.has_value());
  EXPECT_EQ(*c.daemon.allowed_gid, 0u);
}

TEST_F(ConfigTest, NamesAndEndpoints) {
  expect_one("models:\n  - name: \"a b\"\n    path: models/a.h5\n", 2, "models[0].name",
             "a model name is");
  expect_one("daemon:\n  endpoint: \"bad name\"\nmodels: []\n", 2, "daemon.endpoint",
             "a name may hold only");
  EXPECT_EQ(parse("daemon:\n  endpoint: /run/x/y.sock\nmodels: []\n").daemon.endpoint,
            "/run/x/y.sock");
}

TEST_F(ConfigTest, YamlSyntaxErrorHasLine) {
  const auto is = issues("daemon:\n  workers: 2\nmodels: [\n  - name: x\n   bad: [\n");
  ASSERT_EQ(is.size(), 1u);
  EXPECT_GT(is[0].line, 0);
  EXPECT_NE(is[0].message.find("YAML syntax error"), std::string::npos);
}

TEST_F(ConfigTest, EveryProblemIsReported) {
  const auto is = issues(
      "daemon:\n"
      "  workers: 0\n"
      "  log_levl: info\n"
      "models:\n"
      "  - name: m\n"
      "    path: models/missing.h5\n"
      "    isa: avx9\n");
  ASSERT_EQ(is.size(), 4u);
  EXPECT_EQ(is[0].line, 2);
  EXPECT_EQ(is[1].line, 3);
  EXPECT_EQ(is[2].line, 6);
  EXPECT_EQ(is[3].line, 7);
}

TEST_F(ConfigTest, LoadConfigFileResolvesRelativeToItsFolder) {
  fs::create_directories(dir_ / "etc");
  std::ofstream(dir_ / "etc" / "nnd.yaml") << "models:\n  - name: m\n    path: ../models/a.h5\n";
  const Config c = load_config((dir_ / "etc" / "nnd.yaml").string());
  ASSERT_EQ(c.models.size(), 1u);
  EXPECT_EQ(c.models[0].path, (dir_ / "models" / "a.h5").string());
  // Unreadable file.
  try {
    load_config((dir_ / "nope.yaml").string());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the config file"), std::string::npos);
  }
}

// Runs load_config(path) in a child process under alarm(seconds) and returns the first line of
// its ConfigError, or why there was none ("killed by signal 14" when it blocked or kept reading).
// A child, because the failures this guards against hang or exhaust memory.
std::string config_error_in_child(const std::string& path, unsigned seconds) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(seconds);
    std::string msg;
    try {
      load_config(path);
      msg = "no error";
    } catch (const ConfigError& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      msg = std::string("other exception: ") + e.what();
    }
    msg = msg.substr(0, msg.find('\n'));
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return out;
}

// Defects 8-10 of the robot review: a FIFO blocked `nnd --check` (and a reload) forever,
// /dev/zero was read until std::bad_alloc, a directory was reported as "got nothing (null)".
TEST_F(ConfigTest, ConfigPathThatIsNoRegularFileIsRefusedAtOnce) {
  const std::string fifo = (dir_ / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string f = config_error_in_child(fifo, 5);
  EXPECT_NE(f.find("is a FIFO; the config must be a regular file"), std::string::npos) << f;

  const std::string z = config_error_in_child("/dev/zero", 5);
  EXPECT_NE(z.find("is a character device"), std::string::npos) << z;

  const std::string d = config_error_in_child(dir_.string(), 5);
  EXPECT_NE(d.find("is a directory"), std::string::npos) << d;

  // Larger than kMaxConfigBytes (a sparse file: no disk space used).
  const fs::path big = dir_ / "big.yaml";
  std::ofstream(big) << "models: []\n";
  fs::resize_file(big, kMaxConfigBytes + 1);
  const std::string b = config_error_in_child(big.string(), 5);
  EXPECT_NE(b.find("a config may be at most"), std::string::npos) << b;
}

TEST_F(ConfigTest, OnModelErrorAndRequired) {
  const Config d = parse("models:\n  - name: m\n    path: models/a.h5\n");
  EXPECT_TRUE(d.daemon.skip_failed_models);  // the default: serve the others
  EXPECT_FALSE(d.models[0].required);
  const Config c = parse("daemon:\n  on_model_error: fail\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n    required: yes\n");
  EXPECT_FALSE(c.daemon.skip_failed_models);
  EXPECT_TRUE(c.models[0].required);
  const auto is = issues("daemon:\n  on_model_error: ignore\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n    required: maybe\n");
  ASSERT_EQ(is.size(), 2u);
  EXPECT_EQ(is[0].line, 2);
  EXPECT_NE(is[0].message.find("expected skip or fail, got 'ignore'"), std::string::npos);
  EXPECT_EQ(is[1].line, 6);
  EXPECT_NE(is[1].message.find("expected true or false"), std::string::npos);
}

TEST_F(ConfigTest, ValidateModels) {
  const Config d = parse("models:\n  - name: m\n    path: models/a.h5\n");
  EXPECT_TRUE(d.daemon.isolated_model_validation);  // the default: a child parses new files first
  const Config c = parse("daemon:\n  validate_models: in_process\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n");
  EXPECT_FALSE(c.daemon.isolated_model_validation);
  EXPECT_TRUE(parse("daemon:\n  validate_models: isolated\nmodels:\n  - name: m\n"
                    "    path: models/a.h5\n")
                  .daemon.isolated_model_validation);
  const auto is = issues("daemon:\n  validate_models: off\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n");
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].line, 2);
  EXPECT_NE(is[0].message.find("expected isolated or in_process, got 'off'"), std::string::npos);
}

TEST_F(ConfigTest, IsaCalibrationCache) {
  const Config d = parse("models:\n  - name: m\n    path: models/a.h5\n");
  EXPECT_EQ(d.daemon.isa_calibration_cache, "auto");
  for (const char* v : {"off", "auto", "/var/lib/nnd/isa"}) {
    const Config c = parse(std::string("daemon:\n  isa_calibration_cache: ") + v +
                           "\nmodels:\n  - name: m\n    path: models/a.h5\n");
    EXPECT_EQ(c.daemon.isa_calibration_cache, v);
  }
  for (const char* bad : {"cache.txt", "/var/cache/nnd/", "yes"}) {
    const auto is = issues(std::string("daemon:\n  isa_calibration_cache: ") + bad +
                           "\nmodels:\n  - name: m\n    path: models/a.h5\n");
    ASSERT_EQ(is.size(), 1u) << bad;
    EXPECT_EQ(is[0].line, 2);
    EXPECT_NE(is[0].message.find("expected auto, off or the absolute path of a file"), std::string::npos)
        << is[0].message;
  }
  EXPECT_EQ(isa_calibration_cache_path("off"), "");
  EXPECT_EQ(isa_calibration_cache_path("/x/y"), "/x/y");
  // auto: the file nnrun and nnbench share (default_isa_cache_path(), core/engine).
  const std::vector<const char*> vars = {"NND_ISA_CACHE", "CACHE_DIRECTORY", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::optional<std::string>> saved;
  for (const char* v : vars) {
    const char* old = std::getenv(v);
    saved.push_back(old ? std::optional<std::string>(old) : std::nullopt);
    ::unsetenv(v);
  }
  EXPECT_EQ(isa_calibration_cache_path("auto"), "");  // nowhere to keep it
  ::setenv("HOME", "/home/robot", 1);
  EXPECT_EQ(isa_calibration_cache_path("auto"), "/home/robot/.cache/nnd/isa-calibration");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(isa_calibration_cache_path("auto"), "/xdg/nnd/isa-calibration");
  ::setenv("CACHE_DIRECTORY", "/var/cache/nnd", 1);
  EXPECT_EQ(isa_calibration_cache_path("auto"), "/var/cache/nnd/isa-calibration");
  ::setenv("NND_ISA_CACHE", "/tmp/mine", 1);
  EXPECT_EQ(isa_calibration_cache_path("auto"), "/tmp/mine");
  ::setenv("NND_ISA_CACHE", "off", 1);
  EXPECT_EQ(isa_calibration_cache_path("auto"), "");
  for (size_t i = 0; i < vars.size(); ++i) {
    if (saved[i]) ::setenv(vars[i], saved[i]->c_str(), 1);
    else ::unsetenv(vars[i]);
  }
}

TEST_F(ConfigTest, ControlGroup) {
  const Config c = parse("daemon:\n  control_group: root\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n");
  ASSERT_TRUE(c.daemon.control_gid.has_value());
  EXPECT_EQ(*c.daemon.control_gid, 0u);
  const auto is = issues("daemon:\n  control_group: no-such-group-xyz\nmodels:\n  - name: m\n"
                         "    path: models/a.h5\n");
  ASSERT_EQ(is.size(), 1u);
  EXPECT_EQ(is[0].line, 2);
  EXPECT_NE(is[0].message.find("unknown group 'no-such-group-xyz'"), std::string::npos);
}

TEST_F(ConfigTest, DefaultConfigIsValid) {
  const Config c = load_config(NND_SOURCE_DIR "/config/nnd.yaml");
  ASSERT_EQ(c.models.size(), 3u);
  EXPECT_EQ(c.models[0].name, "ball");
  EXPECT_EQ(c.models[0].max_batch, 64u);
  EXPECT_EQ(c.models[1].name, "field_boundary");
  EXPECT_EQ(c.models[2].name, "detector");
  ASSERT_EQ(c.models[2].options.input_dtypes.size(), 1u);
  EXPECT_EQ(c.models[2].options.input_dtypes[0].second, nnd::DType::kUInt8);
}

TEST(ConfigEndpoint, SocketPathRule) {
  const char* old = std::getenv("NND_RUNTIME_DIR");
  const std::string saved = old ? old : "";
  ::setenv("NND_RUNTIME_DIR", "/some/dir", 1);
  EXPECT_EQ(endpoint_socket_path("nnd"), "/some/dir/nnd.sock");
  EXPECT_EQ(endpoint_socket_path("/abs/x.sock"), "/abs/x.sock");
  EXPECT_EQ(endpoint_socket_path("rel/x.sock"), "rel/x.sock");
  ::unsetenv("NND_RUNTIME_DIR");
  const std::string def = fs::is_directory("/run/nnd") ? "/run/nnd" : "/tmp";
  EXPECT_EQ(endpoint_socket_path("nnd"), def + "/nnd.sock");
  if (old) ::setenv("NND_RUNTIME_DIR", saved.c_str(), 1);
}

TEST(ConfigSuggest, ClosestMatch) {
  EXPECT_EQ(nnd::closest_match("max_btach", {"max_batch", "name"}), "max_batch");
  EXPECT_EQ(nnd::closest_match("xyz", {"max_batch", "name"}), "");
}

// daemon.run_as (drop root after binding the socket): a user of the user database, with its
// primary group unless run_as_group names another.
TEST_F(ConfigTest, RunAs) {
  expect_one("daemon:\n  run_as: no_such_user_nnd\nmodels: []\n", 2, "daemon.run_as",
             "unknown user 'no_such_user_nnd'");
  expect_one("daemon:\n  run_as: root\n  run_as_group: no_such_group_nnd\nmodels: []\n", 3,
             "daemon.run_as_group", "unknown group 'no_such_group_nnd'");
  expect_one("daemon:\n  run_as_group: root\nmodels: []\n", 2, "daemon.run_as_group",
             "needs daemon.run_as");

  const Config none = parse("models: []\n");
  EXPECT_TRUE(none.daemon.run_as.empty());
  EXPECT_FALSE(none.daemon.run_as_uid);

  const Config root = parse("daemon:\n  run_as: \"0\"\nmodels: []\n");  // by number
  EXPECT_EQ(root.daemon.run_as, "root");
  EXPECT_EQ(root.daemon.run_as_uid, 0u);
  EXPECT_EQ(root.daemon.run_as_gid, 0u);

  if (const passwd* pw = ::getpwnam("nobody")) {
    const Config c = parse("daemon:\n  run_as_group: \"0\"\n  run_as: nobody\nmodels: []\n");
    EXPECT_EQ(c.daemon.run_as_uid, pw->pw_uid);
    EXPECT_EQ(c.daemon.run_as_gid, 0u);  // the group given, not nobody's primary one
    const Config d = parse("daemon:\n  run_as: nobody\nmodels: []\n");
    EXPECT_EQ(d.daemon.run_as_gid, pw->pw_gid);
  }
}
