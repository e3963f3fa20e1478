#include "bench/load_time.h"

#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "core/util/error.h"

extern char** environ;

namespace nnbench {
namespace {

double now_ms(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Sample {
  double load_wall = 0, compile_wall = 0;  // CLOCK_MONOTONIC
  double load_cpu = 0, compile_cpu = 0;    // CLOCK_THREAD_CPUTIME_ID: unaffected by other processes
};

// What the daemon does per model: load the file, build the engine it would serve (JIT, ISA and
// math chosen automatically unless `isa` names one).
Sample measure(const std::string& model, const std::string& isa) {
  Sample s;
  const double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  const nnd::Graph g = nnd::load_model(model);
  const double w1 = now_ms(CLOCK_MONOTONIC), c1 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  nnd::EngineOptions o;
  o.engine = nnd::EngineKind::kJit;
  o.isa = nnd::parse_isa(isa).value_or(nnd::IsaChoice::kAuto);
  const auto engine = nnd::make_engine(g, o);
  const double w2 = now_ms(CLOCK_MONOTONIC), c2 = now_ms(CLOCK_THREAD_CPUTIME_ID);
  s.load_wall = w1 - w0;
  s.compile_wall = w2 - w1;
  s.load_cpu = c1 - c0;
  s.compile_cpu = c2 - c1;
  return s;
}

// Runs this executable with --load-child and parses its line; throws nnd::Error on failure.
Sample measure_cold(const std::string& model, const std::string& isa) {
  int fds[2];
  if (pipe(fds) != 0) throw nnd::Error(nnd::ErrorCode::kIo, std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::string arg0 = "nnbench", flag = "--load-child", path = model, isa_arg = isa;
  char* argv[] = {arg0.data(), flag.data(), path.data(), isa_arg.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw nnd::Error(nnd::ErrorCode::kIo, std::string("cannot start a child nnbench: ") + std::strerror(rc));
  }
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Sample s;
  std::istringstream in(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      !(in >> s.load_wall >> s.compile_wall >> s.load_cpu >> s.compile_cpu)) {
    throw nnd::Error(nnd::ErrorCode::kInternal, "cold run of " + model + " failed: " + out.substr(0, 300));
  }
  return s;
}

struct MinMed {
  double min = 0, med = 0;
};

MinMed min_med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2]};
}

void print_row(const char* label, const char* phase, const std::vector<Sample>& runs) {
  std::vector<double> lw, cw, tw, tc;
  for (const Sample& s : runs) {
    lw.push_back(s.load_wall);
    cw.push_back(s.compile_wall);
    tw.push_back(s.load_wall + s.compile_wall);
    tc.push_back(s.load_cpu + s.compile_cpu);
  }
  const MinMed l = min_med(lw), c = min_med(cw), t = min_med(tw), u = min_med(tc);
  std::printf("%-28s %-5s %7.2f %7.2f  %7.2f %7.2f  %7.2f %7.2f  %7.2f %7.2f\n", label, phase, l.min, l.med,
              c.min, c.med, t.min, t.med, u.min, u.med);
}

}  // namespace

int load_time_child(const std::string& model, const std::string& isa) {
  try {
    const Sample s = measure(model, isa);
    std::printf("%.4f %.4f %.4f %.4f\n", s.load_wall, s.compile_wall, s.load_cpu, s.compile_cpu);
    return 0;
  } catch (const nnd::Error& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}

int report_load_time(const std::vector<std::string>& models, int runs, const std::string& isa) {
  std::printf("load + compile (JIT, ISA %s%s), ms, min and median of %d runs; cold = first model of a fresh "
              "process, warm = later models;\ncpu = this thread's CPU time (what other processes on the "
              "machine cannot inflate)\n",
              isa.c_str(), isa == "auto" ? ": compile includes measuring the candidate ISAs, no cache" : "", runs);
  std::printf("%-28s %-5s %15s  %15s  %15s  %15s\n", "model", "", "load min  med", "compile min med",
              "total min  med", "total cpu min med");
  int failures = 0;
  for (const std::string& model : models) {
    const std::string label = std::filesystem::path(model).filename().string();
    try {
      std::vector<Sample> cold, warm;
      for (int i = 0; i < runs; ++i) cold.push_back(measure_cold(model, isa));
      measure(model, isa);  // untimed: HDF5 start-up and first-touch costs go to the cold figures
      for (int i = 0; i < runs; ++i) warm.push_back(measure(model, isa));
      print_row(label.c_str(), "cold", cold);
      print_row("", "warm", warm);
    } catch (const nnd::Error& e) {
      std::printf("%-28s error: %s\n", label.c_str(), e.what());
      ++failures;
    }
  }
  return failures;
}

}  // namespace nnbench
