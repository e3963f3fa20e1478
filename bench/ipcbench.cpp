// nnd_ipcbench: what the IPC costs. Starts its own nnd (private endpoint, temp NND_RUNTIME_DIR,
// its own NOTIFY_SOCKET) and prints, in one run:
//   * round-trip latency min/p50/p99 of a tiny model: through the daemon (nnclient_infer, one
//     client and two clients), the same engine called in-process (nnd_core make_engine), and a
//     Unix-domain-socket request/response baseline (an echo process sending the same bytes);
//   * page faults per request on both sides in steady state;
//   * throughput with 1, 2 and 4 client processes;
//   * 64 ball patches as one batched request versus 64 single requests;
//   * idle daemon CPU with clients connected (/proc/<pid>/stat utime+stime);
//   * time from process start to READY=1 for the default config (config/nnd.yaml).
// Usage: nnd_ipcbench [--seconds S] [--idle-seconds S] [--model PATH] [--workers N] [--nnd PATH]
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <span>

#include "client/nnclient.h"
#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/model_file.h"
#include "tests/integration/daemon_harness.h"

namespace {

using namespace nnd::integ;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Lat {
  double min_us = 0, p50_us = 0, p99_us = 0;
  size_t n = 0;
};

Lat summarize(std::vector<int64_t> v) {
  Lat l;
  if (v.empty()) return l;
  std::sort(v.begin(), v.end());
  l.n = v.size();
  l.min_us = v.front() / 1000.0;
  l.p50_us = v[v.size() / 2] / 1000.0;
  l.p99_us = v[std::min(v.size() - 1, v.size() * 99 / 100)] / 1000.0;
  return l;
}

void print_lat(const char* what, const Lat& l) {
  std::printf("  %-44s min %8.2f  p50 %8.2f  p99 %8.2f us  (%zu round trips)\n", what, l.min_us,
              l.p50_us, l.p99_us, l.n);
}

// Buffers for one request of `batch` samples of `info`.
struct Io {
  std::vector<std::vector<float>> in, out;
  std::vector<const void*> inp;
  std::vector<void*> outp;
  Io(const nnclient_model_info_t& info, uint32_t batch) {
    for (uint32_t k = 0; k < info.num_inputs; ++k) {
      in.emplace_back(batch * info.inputs[k].sample_bytes / 4 + 1);
      for (size_t i = 0; i < in.back().size(); ++i) in.back()[i] = std::sin(0.1f * float(i));
      inp.push_back(in.back().data());
    }
    for (uint32_t k = 0; k < info.num_outputs; ++k) {
      out.emplace_back(batch * info.outputs[k].sample_bytes / 4 + 1);
      outp.push_back(out.back().data());
    }
  }
  size_t in_bytes(const nnclient_model_info_t& info) const {
    size_t b = 0;
    for (uint32_t k = 0; k < info.num_inputs; ++k) b += info.inputs[k].sample_bytes;
    return b;
  }
  size_t out_bytes(const nnclient_model_info_t& info) const {
    size_t b = 0;
    for (uint32_t k = 0; k < info.num_outputs; ++k) b += info.outputs[k].sample_bytes;
    return b;
  }
};

nnclient_t* open_client(const std::string& path, const char* model, nnclient_model_info_t* info) {
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(path.c_str(), &st);
  if (!c) {
    std::fprintf(stderr, "nnd_ipcbench: nnclient_open: %s %s\n", nnclient_status_name(st),
                 nnclient_last_error(nullptr));
    std::exit(1);
  }
  if ((st = nnclient_model_info(c, model, info)) != NNCLIENT_OK) {
    std::fprintf(stderr, "nnd_ipcbench: model info %s: %s\n", model, nnclient_status_name(st));
    std::exit(1);
  }
  return c;
}

// Round trips through the daemon for `seconds`; also page faults per request in this process.
Lat daemon_latency(nnclient_t* c, const nnclient_model_info_t& info, double seconds,
                   double* minflt_per_req) {
  Io io(info, 1);
  for (int i = 0; i < 200; ++i) nnclient_infer(c, &info, io.inp.data(), 1, io.outp.data(), 0);
  std::vector<int64_t> v;
  v.reserve(1 << 20);
  rusage r0{}, r1{};
  getrusage(RUSAGE_SELF, &r0);
  const int64_t end = now_ns() + int64_t(seconds * 1e9);
  int64_t t = now_ns();
  while (t < end && v.size() < v.capacity()) {
    const nnclient_status st = nnclient_infer(c, &info, io.inp.data(), 1, io.outp.data(), 0);
    const int64_t t2 = now_ns();
    if (st != NNCLIENT_OK) {
      std::fprintf(stderr, "nnd_ipcbench: infer: %s\n", nnclient_status_name(st));
      std::exit(1);
    }
    v.push_back(t2 - t);
    t = t2;
  }
  getrusage(RUSAGE_SELF, &r1);
  if (minflt_per_req) *minflt_per_req = double(r1.ru_minflt - r0.ru_minflt) / double(v.size());
  return summarize(std::move(v));
}

// Field `index` (1-based, as in proc(5)) of /proc/<pid>/stat.
uint64_t proc_stat_field(pid_t pid, int index) {
  const std::string s = read_text("/proc/" + std::to_string(pid) + "/stat");
  const size_t rp = s.rfind(')');
  if (rp == std::string::npos) return 0;
  std::istringstream in(s.substr(rp + 2));
  std::string tok;
  for (int i = 3; in >> tok; ++i) {
    if (i == index) return std::strtoull(tok.c_str(), nullptr, 10);
  }
  return 0;
}

// Unix-domain-socket request/response baseline: an echo process reads `in_bytes` and answers
// `out_bytes` over a SOCK_STREAM socketpair.
Lat uds_latency(size_t in_bytes, size_t out_bytes, double seconds) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sv[0]);
    std::vector<char> buf(std::max(in_bytes, out_bytes));
    for (;;) {
      size_t got = 0;
      while (got < in_bytes) {
        const ssize_t n = ::read(sv[1], buf.data() + got, in_bytes - got);
        if (n <= 0) ::_exit(0);
        got += size_t(n);
      }
      size_t put = 0;
      while (put < out_bytes) {
        const ssize_t n = ::write(sv[1], buf.data() + put, out_bytes - put);
        if (n <= 0) ::_exit(0);
        put += size_t(n);
      }
    }
  }
  ::close(sv[1]);
  std::vector<char> req(in_bytes, 1), rep(out_bytes);
  auto once = [&] {
    size_t put = 0;
    while (put < in_bytes) put += size_t(std::max<ssize_t>(0, ::write(sv[0], req.data() + put, in_bytes - put)));
    size_t got = 0;
    while (got < out_bytes) {
      const ssize_t n = ::read(sv[0], rep.data() + got, out_bytes - got);
      if (n <= 0) return false;
      got += size_t(n);
    }
    return true;
  };
  for (int i = 0; i < 200; ++i) once();
  std::vector<int64_t> v;
  const int64_t end = now_ns() + int64_t(seconds * 1e9);
  int64_t t = now_ns();
  while (t < end) {
    if (!once()) break;
    const int64_t t2 = now_ns();
    v.push_back(t2 - t);
    t = t2;
  }
  ::close(sv[0]);
  ::waitpid(pid, nullptr, 0);
  return summarize(std::move(v));
}

struct SharedCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int64_t> p50_ns{0}, p99_ns{0};  // latency seen by client 0 of a throughput run
};

// `n` client processes each looping nnclient_infer for `seconds`; returns requests per second.
double throughput(const std::string& path, const char* model, int n, double seconds,
                  double* p50_us, double* p99_us) {
  void* mem = ::mmap(nullptr, sizeof(SharedCounters), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  auto* sh = new (mem) SharedCounters();
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      nnclient_model_info_t info{};
      nnclient_t* c = open_client(path, model, &info);
      Io io(info, 1);
      nnclient_infer(c, &info, io.inp.data(), 1, io.outp.data(), 0);
      sh->ready.fetch_add(1);
      while (!sh->go.load()) ::usleep(100);
      uint64_t k = 0;
      std::vector<int64_t> lat;
      lat.reserve(1 << 20);
      while (!sh->stop.load()) {
        const int64_t t0 = now_ns();
        if (nnclient_infer(c, &info, io.inp.data(), 1, io.outp.data(), 5'000'000) != NNCLIENT_OK) break;
        if (lat.size() < lat.capacity()) lat.push_back(now_ns() - t0);
        ++k;
      }
      if (i == 0) {
        const Lat l = summarize(std::move(lat));
        sh->p50_ns.store(int64_t(l.p50_us * 1000));
        sh->p99_ns.store(int64_t(l.p99_us * 1000));
      }
      sh->requests.fetch_add(k);
      nnclient_close(c);
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  eventually([&] { return sh->ready.load() == n; }, 30000);
  const int64_t t0 = now_ns();
  sh->go.store(true);
  ::usleep(static_cast<useconds_t>(seconds * 1e6));
  sh->stop.store(true);
  for (pid_t p : kids) ::waitpid(p, nullptr, 0);
  const double dt = (now_ns() - t0) / 1e9;
  const double rps = double(sh->requests.load()) / dt;
  *p50_us = sh->p50_ns.load() / 1000.0;
  *p99_us = sh->p99_ns.load() / 1000.0;
  ::munmap(mem, sizeof(SharedCounters));
  return rps;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2.0, idle_seconds = 10.0;
  int workers = 2;
  std::string model = (kSource / "tests" / "data" / "fixtures" / "softmax_axis.k3.h5").string();
  std::string nnd_exe = kNnd;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nnd_ipcbench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds") seconds = std::atof(next().c_str());
    else if (a == "--idle-seconds") idle_seconds = std::atof(next().c_str());
    else if (a == "--model") model = fs::absolute(next()).string();
    else if (a == "--nnd") nnd_exe = next();
    else if (a == "--workers") workers = std::atoi(next().c_str());
    else {
      std::fprintf(stderr,
                   "usage: nnd_ipcbench [--seconds S] [--idle-seconds S] [--model PATH] [--workers N] [--nnd PATH]\n"
                   "  --seconds S       measuring time of each latency/throughput figure (default 2)\n"
                   "  --idle-seconds S  idle CPU window (default 10)\n"
                   "  --model PATH      tiny .h5 model for the latency figures (default the\n"
                   "                    softmax_axis fixture)\n"
                   "  --workers N       daemon worker threads of the measured daemon (default 2)\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);

  // Time to READY=1 for the default config (on a private endpoint).
  double ready_ms = 0;
  {
    Daemon d("bench_default");
    d.set_exe(nnd_exe);
    d.set_extra_args({"--endpoint", d.endpoint()});
    if (!d.start(kSource / "config" / "nnd.yaml")) {
      std::fprintf(stderr, "nnd_ipcbench: default config did not get READY:\n%s", d.log().c_str());
      return 1;
    }
    ready_ms = (now_us() - d.start_us()) / 1000.0;
    d.stop();
  }

  Daemon d("bench");
  d.set_exe(nnd_exe);
  const auto cfg = d.write_config(
      "nnd.yaml",
      "  - name: tiny\n    path: " + model + "\n    engine: jit\n    max_batch: 64\n" +
          "  - name: ball\n    path: " + model_path("ball_patch.h5") +
          "\n    engine: jit\n    max_batch: 64\n",
      "  workers: " + std::to_string(workers) + "\n  log_level: info\n");
  if (!d.start(cfg)) {
    std::fprintf(stderr, "nnd_ipcbench: nnd did not get READY:\n%s", d.log().c_str());
    return 1;
  }
  nnclient_model_info_t info{};
  nnclient_t* c = open_client(d.socket_path(), "tiny", &info);
  Io io(info, 1);
  std::printf("nnd_ipcbench: model %s (engine %s, %zu input bytes, %zu output bytes per sample), "
              "%d daemon workers, %ld CPUs online\n",
              model.c_str(), info.engine, io.in_bytes(info), io.out_bytes(info), workers,
              ::sysconf(_SC_NPROCESSORS_ONLN));

  // (b) the same engine in-process.
  Lat inproc;
  {
    nnd::Graph g = nnd::load_model(model);
    nnd::EngineOptions o;
    o.engine = nnd::EngineKind::kJit;
    auto engine = nnd::make_engine(g, o);
    std::vector<nnd::InputView> views;
    for (auto& in : io.in) views.push_back({nnd::DType::kFloat32, in.data()});
    std::vector<float*> outs;
    for (auto& out : io.out) outs.push_back(out.data());
    for (int i = 0; i < 200; ++i) engine->run(1, views, outs);
    std::vector<int64_t> v;
    const int64_t end = now_ns() + int64_t(seconds * 1e9);
    int64_t t = now_ns();
    while (t < end) {
      engine->run(1, views, outs);
      const int64_t t2 = now_ns();
      v.push_back(t2 - t);
      t = t2;
    }
    inproc = summarize(std::move(v));
  }

  // (a) through the daemon: one client, then two (a second process loops beside this one).
  const uint64_t d_flt0 = proc_stat_field(d.pid(), 10);
  double flt_per_req = 0;
  const Lat one = daemon_latency(c, info, seconds, &flt_per_req);
  const uint64_t d_flt1 = proc_stat_field(d.pid(), 10);
  Lat two;
  {
    void* mem = ::mmap(nullptr, sizeof(SharedCounters), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    auto* sh = new (mem) SharedCounters();
    const pid_t other = ::fork();
    if (other == 0) {
      nnclient_model_info_t i2{};
      nnclient_t* c2 = open_client(d.socket_path(), "tiny", &i2);
      Io io2(i2, 1);
      sh->ready.store(1);
      while (!sh->stop.load()) nnclient_infer(c2, &i2, io2.inp.data(), 1, io2.outp.data(), 5'000'000);
      ::_exit(0);
    }
    eventually([&] { return sh->ready.load() == 1; }, 30000);
    two = daemon_latency(c, info, seconds, nullptr);
    sh->stop.store(true);
    ::waitpid(other, nullptr, 0);
    ::munmap(mem, sizeof(SharedCounters));
  }

  // (c) Unix-domain-socket baseline with the same bytes.
  const Lat uds = uds_latency(io.in_bytes(info), io.out_bytes(info), seconds);

  std::printf("\nround-trip latency, batch 1:\n");
  print_lat("in-process engine (make_engine, jit)", inproc);
  print_lat("through nnd, 1 client (nnclient_infer)", one);
  print_lat("through nnd, 2 clients (this one measured)", two);
  print_lat("Unix socket echo process, same bytes", uds);
  std::printf("  added by the daemon path over in-process: p50 %+.2f us, p99 %+.2f us (1 client); "
              "p50 %+.2f us, p99 %+.2f us (2 clients)\n",
              one.p50_us - inproc.p50_us, one.p99_us - inproc.p99_us, two.p50_us - inproc.p50_us,
              two.p99_us - inproc.p99_us);
  std::printf("  Unix socket / daemon p50: %.1fx\n", uds.p50_us / std::max(one.p50_us, 1e-9));
  std::printf("  minor page faults per request: client %.4f, daemon %.4f\n", flt_per_req,
              double(d_flt1 - d_flt0) / double(std::max<size_t>(one.n, 1)));

  std::printf("\nthroughput (batch 1, tiny model, closed loop):\n");
  for (int n : {1, 2, 4}) {
    double p50 = 0, p99 = 0;
    const double rps = throughput(d.socket_path(), "tiny", n, seconds, &p50, &p99);
    std::printf("  %d client process%s %12.0f requests/s  (latency seen by one of them: p50 %.2f "
                "us, p99 %.2f us)\n",
                n, n == 1 ? ": " : "es:", rps, p50, p99);
  }

  // 64 ball patches: one batched request versus 64 single requests.
  {
    nnclient_model_info_t bi{};
    nnclient_t* bc = open_client(d.socket_path(), "ball", &bi);
    Io b64(bi, 64), b1(bi, 1);
    std::vector<int64_t> batched, singles;
    const int64_t end = now_ns() + int64_t(seconds * 1e9);
    for (int r = 0; r < 3 || (now_ns() < end && r < 2000); ++r) {
      int64_t t0 = now_ns();
      nnclient_infer(bc, &bi, b64.inp.data(), 64, b64.outp.data(), 0);
      batched.push_back(now_ns() - t0);
      t0 = now_ns();
      for (int k = 0; k < 64; ++k) nnclient_infer(bc, &bi, b1.inp.data(), 1, b1.outp.data(), 0);
      singles.push_back(now_ns() - t0);
    }
    const Lat lb = summarize(batched), ls = summarize(singles);
    std::printf("\n64 ball patches (32x32x1, engine %s):\n", bi.engine);
    std::printf("  one request of batch 64: p50 %9.1f us  (%.2f us per patch)\n", lb.p50_us,
                lb.p50_us / 64);
    std::printf("  64 requests of batch 1:  p50 %9.1f us  (%.2f us per patch)  -> batched %.2fx "
                "faster\n",
                ls.p50_us, ls.p50_us / 64, ls.p50_us / std::max(lb.p50_us, 1e-9));
    nnclient_close(bc);
  }

  // Idle daemon CPU with clients connected (this one plus three more in this process).
  {
    std::vector<nnclient_t*> extra;
    for (int i = 0; i < 3; ++i) {
      nnclient_model_info_t ii{};
      extra.push_back(open_client(d.socket_path(), "tiny", &ii));
      nnclient_infer(extra.back(), &ii, io.inp.data(), 1, io.outp.data(), 0);
    }
    ::usleep(200000);  // let the daemon's bounded spin end before the window opens
    const uint64_t t0 = proc_stat_field(d.pid(), 14) + proc_stat_field(d.pid(), 15);
    const int64_t w0 = now_us();
    ::usleep(static_cast<useconds_t>(idle_seconds * 1e6));
    const uint64_t t1 = proc_stat_field(d.pid(), 14) + proc_stat_field(d.pid(), 15);
    const double wall = (now_us() - w0) / 1e6;
    const double cpu = double(t1 - t0) / double(::sysconf(_SC_CLK_TCK));
    std::printf("\nidle daemon, 4 clients connected: %.3f s CPU over %.1f s = %.3f%% of a core "
                "(tick %.0f ms)\n",
                cpu, wall, 100.0 * cpu / wall, 1000.0 / double(::sysconf(_SC_CLK_TCK)));
    for (auto* e : extra) nnclient_close(e);
  }
  std::printf("\nstart to READY=1, default config (config/nnd.yaml, 3 models): %.1f ms\n",
              ready_ms);
  nnclient_close(c);
  if (d.stop() != 0) {
    std::fprintf(stderr, "nnd_ipcbench: nnd did not stop cleanly:\n%s", d.log().c_str());
    return 1;
  }
  return 0;
}
