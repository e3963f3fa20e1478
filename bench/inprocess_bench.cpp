// nnd_inprocess_bench: one network's time per inference through libnnd (in-process, nnd.h), nnrun
// (the model tool, which calls nnd_core's engine directly) and the daemon (nnd, through
// libnnclient), side by side in one run. Every path runs the same model file with the same ISA:
// libnnd opens it with `isa` (auto by default) first, and the ISA it serves is then named
// explicitly to nnrun and in the daemon's config, so all three run the same machine code.
//
// Rounds interleave the three paths (libnnd, nnrun, daemon, libnnd, ...), each timing `--runs`
// batch-1 inferences; the table gives min and median over all runs and the ratios to libnnd. The
// daemon's answers are compared byte for byte with libnnd's ("outputs"; exit status 1 if they
// differ).
// Pin it (taskset -c 1): its children (nnrun, nnd) inherit the CPU, so the daemon's worker and
// the client share it, as a process with one core to spare would.
//
// Usage: nnd_inprocess_bench [--rounds R] [--runs N] [--isa ISA] [--nnrun PATH] MODEL...
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/nnclient.h"
#include "core/libnnd/nnd.h"
#include "tests/integration/daemon_harness.h"

namespace {

using namespace nnd::integ;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Times {
  std::vector<double> us;
  double min() const { return us.empty() ? 0 : *std::min_element(us.begin(), us.end()); }
  double median() const {
    if (us.empty()) return 0;
    std::vector<double> v = us;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "nnd_inprocess_bench: %s\n", what.c_str());
  std::exit(1);
}

// Runs nnrun MODEL --isa ISA --repeat N and returns its min and median (ms in its output).
bool run_nnrun(const std::string& nnrun, const std::string& model, const std::string& isa, int runs,
               double* min_us, double* median_us) {
  int fd[2];
  if (::pipe(fd) != 0) return false;
  const std::string repeat = std::to_string(runs);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd[1], 1);
    ::close(fd[0]);
    ::execl(nnrun.c_str(), nnrun.c_str(), model.c_str(), "--isa", isa.c_str(), "--repeat", repeat.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fd[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  const size_t at = out.find("min ");
  double mn = 0, md = 0;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || at == std::string::npos ||
      std::sscanf(out.c_str() + at, "min %lf ms, median %lf ms", &mn, &md) != 2) {
    std::fprintf(stderr, "nnrun failed:\n%s", out.c_str());
    return false;
  }
  *min_us = mn * 1000;
  *median_us = md * 1000;
  return true;
}

struct Net {
  std::string path, name, isa;
  nnd_model_t* model = nullptr;
  nnd_tensor_info_t in{}, out{};
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<std::vector<unsigned char>> outputs, daemon_outputs;
  bool same_outputs = true;  // the daemon's answers, byte for byte libnnd's
  Times lib, nnrun_min, nnrun_median, daemon;
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, runs = 200;
  std::string isa = "auto", nnrun = NNRUN_EXE;
  std::vector<Net> nets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--isa" && i + 1 < argc) {
      isa = argv[++i];
    } else if (a == "--nnrun" && i + 1 < argc) {
      nnrun = argv[++i];
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: nnd_inprocess_bench [--rounds R] [--runs N] [--isa ISA] [--nnrun PATH] MODEL...\n");
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option " + a);
    } else {
      Net n;
      n.path = fs::absolute(a).string();
      n.name = "m" + std::to_string(nets.size());
      nets.push_back(std::move(n));
    }
  }
  if (nets.empty()) die("no model given (try ../shared/models/*.h5)");
  if (rounds < 1 || runs < 1) die("--rounds and --runs need positive counts");

  // libnnd first: it resolves `isa` (auto: measured), which the other two then get explicitly.
  std::string models_yaml;
  for (Net& n : nets) {
    nnd_options_t* o = nullptr;
    nnd_options_new(&o);
    if (nnd_options_set(o, "isa", isa.c_str()) != NND_OK) die(nnd_last_error());
    if (nnd_model_open(n.path.c_str(), o, &n.model) != NND_OK) die(nnd_last_error());
    nnd_options_free(o);
    const std::string engine = nnd_model_engine(n.model);
    if (engine.rfind("jit-", 0) != 0) die(n.path + ": not served by the JIT (" + engine + ")");
    n.isa = engine.substr(4);
    for (uint32_t k = 0; k < nnd_model_num_inputs(n.model); ++k) {
      nnd_tensor_info_t t{};
      t.struct_size = sizeof t;
      nnd_model_input(n.model, k, &t);
      n.inputs.emplace_back(t.sample_bytes, 0);
      // The pattern nnrun feeds (core/io/model_inputs.h), so all paths see the same numbers.
      for (size_t j = 0; j < t.sample_elements; ++j) {
        const float v = static_cast<float>((j * 37 + k * 101) % 256) / 255.f;
        std::memcpy(&n.inputs.back()[j * 4], &v, 4);
      }
    }
    for (uint32_t k = 0; k < nnd_model_num_outputs(n.model); ++k) {
      nnd_tensor_info_t t{};
      t.struct_size = sizeof t;
      nnd_model_output(n.model, k, &t);
      n.outputs.emplace_back(t.sample_bytes, 0);
      n.daemon_outputs.emplace_back(t.sample_bytes, 1);
    }
    models_yaml += "  - name: " + n.name + "\n    path: " + n.path + "\n    isa: " + n.isa + "\n    max_batch: 1\n";
  }

  Daemon d("inprocess_bench");
  cpu_set_t cpus;
  std::string affinity;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &cpus)) affinity = "  cpu_affinity: [" + std::to_string(c) + "]\n";
    }
  }
  const fs::path cfg = d.write_config("nnd.yaml", models_yaml, "  workers: 1\n  log_level: warning\n" + affinity);
  if (!d.start(cfg)) die("nnd did not start:\n" + d.log());
  nnclient_open_options_t oo{};
  oo.struct_size = sizeof oo;
  oo.endpoint = d.socket_path().c_str();
  nnclient_status cst;
  nnclient_t* client = nnclient_open_with(&oo, &cst);
  if (!client) die(std::string("nnclient_open: ") + nnclient_last_error(nullptr));
  std::vector<nnclient_model_info_t> infos(nets.size());
  for (size_t i = 0; i < nets.size(); ++i) {
    if (nnclient_model_info(client, nets[i].name.c_str(), &infos[i]) != NNCLIENT_OK) die(nnclient_last_error(client));
  }

  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < nets.size(); ++i) {
      Net& n = nets[i];
      std::vector<const void*> in;
      std::vector<void*> out;
      for (auto& b : n.inputs) in.push_back(b.data());
      for (auto& b : n.outputs) out.push_back(b.data());
      for (int k = 0; k < runs; ++k) {
        const int64_t t0 = now_ns();
        if (nnd_model_run(n.model, 1, in.data(), out.data()) != NND_OK) die(nnd_last_error());
        n.lib.us.push_back((now_ns() - t0) / 1000.0);
      }
      double mn, md;
      if (!run_nnrun(nnrun, n.path, n.isa, runs, &mn, &md)) die("nnrun failed on " + n.path);
      n.nnrun_min.us.push_back(mn);
      n.nnrun_median.us.push_back(md);
      std::vector<void*> daemon_out;
      for (auto& b : n.daemon_outputs) daemon_out.push_back(b.data());
      for (int k = 0; k < runs; ++k) {
        const int64_t t0 = now_ns();
        if (nnclient_infer(client, &infos[i], in.data(), 1, daemon_out.data(), 2000000) != NNCLIENT_OK) {
          die(nnclient_last_error(client));
        }
        n.daemon.us.push_back((now_ns() - t0) / 1000.0);
      }
      n.same_outputs = n.same_outputs && n.outputs == n.daemon_outputs;
    }
  }
  nnclient_close(client);
  d.stop();
  int status = 0;

  std::printf("time per inference, batch 1, us (%d rounds x %d runs, interleaved; nnrun: min and median of\n"
              "its per-round min/median; daemon: client round trip through nnd)\n", rounds, runs);
  std::printf("%-30s %-7s %17s %17s %17s %9s %9s %s\n", "model", "isa", "libnnd min/med", "nnrun min/med",
              "daemon min/med", "nnrun/lib", "nnd/lib", "outputs");
  for (Net& n : nets) {
    const std::string base = fs::path(n.path).filename().string();
    std::printf("%-30s %-7s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.3f %9.3f %s\n", base.c_str(), n.isa.c_str(),
                n.lib.min(), n.lib.median(), n.nnrun_min.min(), n.nnrun_median.median(), n.daemon.min(),
                n.daemon.median(), n.nnrun_median.median() / n.lib.median(), n.daemon.median() / n.lib.median(),
                n.same_outputs ? "daemon = libnnd" : "DIFFER");
    if (!n.same_outputs) status = 1;
    nnd_model_close(n.model);
  }
  return status;
}
