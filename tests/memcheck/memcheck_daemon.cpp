// A short nnd session under valgrind memcheck: nnd is started through a wrapper that execs
// valgrind (the command comes from argv, so ctest decides the valgrind options), serves the three
// example models (JIT auto ISA, reference engine, JIT SSE4.1 with uint8 camera bytes), answers
// client processes, reloads once on SIGHUP with a changed config (one model recompiled, so old
// engines are destroyed while the daemon runs), loses a client that dies with a request in
// flight, and stops on SIGTERM. Valgrind runs with --error-exitcode=1, so nnd's exit status after
// SIGTERM is 0 only when memcheck found no error and (with --errors-for-leak-kinds) no leak.
// This program itself is not run under valgrind; it checks every answer against the reference
// engine run in-process, within the fixture tolerance.
//
// Usage: nnd_memcheck_daemon VALGRIND [VALGRIND_OPTION...] NND
// Exit status 0 when the session succeeded and nnd (valgrind) exited 0; 1 otherwise, with the
// reason and nnd's log (which holds valgrind's report) on stdout.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "client/nnclient.h"
#include "core/engine/engine_options.h"
#include "core/engine_factory/engine_factory.h"
#include "core/io/keras_hdf5.h"
#include "tests/integration/daemon_harness.h"

namespace {

using namespace nnd::integ;

// Under valgrind nnd runs 20-200x slower than natively: starting (compiling three models) takes
// ~30 s on an idle machine, a detector request several seconds. Generous bounds keep the test
// from failing on a loaded machine; they only matter when something hangs.
constexpr int kStartMs = 400'000;
constexpr int kReloadMs = 300'000;
constexpr int kStopMs = 300'000;
constexpr uint64_t kInferUs = 240'000'000;
constexpr int kChildMs = 600'000;
constexpr double kTol = 1e-5;  // max |got - want| / max(1, |want|), the fixture rule

// One model's test data: random inputs for `n` samples and the in-process reference engine's
// outputs for them.
struct Model {
  std::string name, file;
  bool uint8_input = false;
  size_t n = 0;
  size_t in_bytes = 0;                   // per sample
  std::vector<size_t> out_floats;        // per sample, per output
  std::vector<uint8_t> inputs;           // n * in_bytes
  std::vector<std::vector<float>> want;  // [output][n * out_floats]
};

Model make_model(const std::string& name, const std::string& file, bool uint8_input, size_t n,
                 uint32_t seed) {
  Model m{name, file, uint8_input, n, 0, {}, {}, {}};
  const nnd::Graph g = nnd::load_keras_h5(model_path(file.c_str()));
  auto engine = nnd::make_engine(g, nnd::EngineOptions{});  // the reference engine
  const size_t in_elems =
      static_cast<size_t>(nnd::element_count(g.values[g.inputs[0]].shape, "input"));
  m.in_bytes = in_elems * (uint8_input ? 1 : sizeof(float));
  m.inputs.resize(n * m.in_bytes);
  std::mt19937 rng(seed);
  if (uint8_input) {
    std::uniform_int_distribution<int> d(0, 255);
    for (uint8_t& b : m.inputs) b = static_cast<uint8_t>(d(rng));
  } else {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (size_t i = 0; i < n * in_elems; ++i) {
      const float x = d(rng);
      std::memcpy(m.inputs.data() + i * sizeof(float), &x, sizeof x);
    }
  }
  for (auto id : g.outputs) {
    m.out_floats.push_back(static_cast<size_t>(nnd::element_count(g.values[id].shape, "output")));
    m.want.emplace_back(n * m.out_floats.back());
  }
  std::vector<float*> outs;
  for (auto& w : m.want) outs.push_back(w.data());
  const nnd::InputView v{uint8_input ? nnd::DType::kUInt8 : nnd::DType::kFloat32,
                         m.inputs.data()};
  engine->run(static_cast<int64_t>(n), std::span<const nnd::InputView>(&v, 1), outs);
  return m;
}

// Runs samples [first, first + batch) of `m` through the daemon; "" or what went wrong.
std::string infer_and_check(nnclient_t* c, const Model& m, size_t first, uint32_t batch) {
  nnclient_model_info_t info{};
  if (nnclient_model_info(c, m.name.c_str(), &info) != NNCLIENT_OK) {
    return m.name + ": model_info failed: " + nnclient_last_error(c);
  }
  const void* in[1] = {m.inputs.data() + first * m.in_bytes};
  std::vector<std::vector<float>> out(m.out_floats.size());
  std::vector<void*> outp;
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].assign(batch * m.out_floats[k], std::nanf(""));
    outp.push_back(out[k].data());
  }
  const nnclient_status st = nnclient_infer(c, &info, in, batch, outp.data(), kInferUs);
  if (st != NNCLIENT_OK) {
    return m.name + ": infer " + nnclient_status_name(st) + " " + nnclient_last_error(c);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const float* want = m.want[k].data() + first * m.out_floats[k];
    for (size_t i = 0; i < out[k].size(); ++i) {
      const double e = std::fabs(double(out[k][i]) - want[i]) / std::max(1.0, std::fabs(double(want[i])));
      if (!(e <= kTol)) {
        return m.name + " (" + info.engine + "): output " + std::to_string(k) + " value " +
               std::to_string(i) + " is " + std::to_string(out[k][i]) + ", reference " +
               std::to_string(want[i]);
      }
    }
  }
  return "";
}

// A client process running `rounds` requests of `m` with growing batch sizes.
Child start_client(const std::string& socket, const Model& m, int rounds, uint32_t max_batch) {
  return fork_child([&socket, &m, rounds, max_batch](const ChildIo& io) {
    nnclient_status st = NNCLIENT_OK;
    nnclient_t* c = nnclient_open(socket.c_str(), &st);
    if (!c) return io.report(std::string("open: ") + nnclient_status_name(st)), 1;
    int rc = 0;
    for (int r = 0; r < rounds && rc == 0; ++r) {
      const uint32_t batch = 1 + static_cast<uint32_t>(r) % max_batch;
      const size_t first = static_cast<size_t>(r) % (m.n - batch + 1);
      const std::string why = infer_and_check(c, m, first, batch);
      if (!why.empty()) io.report(why), rc = 1;
    }
    nnclient_close(c);
    return rc;
  });
}

// A client that submits a request and dies before collecting it: the daemon must reclaim the
// session (and its shared memory) with the request still queued or running.
Child start_dying_client(const std::string& socket, const Model& m) {
  return fork_child([&socket, &m](const ChildIo& io) {
    nnclient_t* c = nnclient_open(socket.c_str(), nullptr);
    if (!c) return io.report("open failed"), 1;
    nnclient_model_info_t info{};
    nnclient_request_t* rq = nullptr;
    if (nnclient_model_info(c, m.name.c_str(), &info) != NNCLIENT_OK ||
        nnclient_request_begin(c, &info, 1, &rq) != NNCLIENT_OK) {
      return io.report(std::string("request_begin: ") + nnclient_last_error(c)), 1;
    }
    std::memcpy(nnclient_request_input(rq, 0), m.inputs.data(), m.in_bytes);
    if (nnclient_submit(c, rq, nullptr) != NNCLIENT_OK) return io.report("submit failed"), 1;
    ::_exit(0);  // no close, no wait: the connection drops with the process
  });
}

bool collect_all(std::vector<Child>& kids, const char* phase) {
  bool ok = true;
  for (Child& k : kids) {
    const ChildResult r = collect(k, kChildMs);
    if (!r.exited || r.code != 0) {
      std::printf("FAIL %s: client exited %d (signal %d): %s\n", phase, r.code, r.signal,
                  r.text.c_str());
      ok = false;
    }
  }
  kids.clear();
  return ok;
}

std::string models_yaml(const std::string& fb_engine) {
  return "  - name: ball\n    path: " + model_path("ball_patch.h5") +
         "\n    engine: jit\n    max_batch: 8\n    batch_delay_us: 2000\n"
         "  - name: field_boundary\n    path: " + model_path("field_boundary.h5") + "\n" +
         fb_engine + "    max_batch: 4\n"
         "  - name: detector\n    path: " + model_path("detector.h5") +
         "\n    engine: jit\n    isa: sse4.1\n    inputs:\n      input: uint8\n    max_batch: 2\n";
}

// Writes DIR/nnd-under-valgrind: a script that execs the given command line plus nnd's args.
std::string write_wrapper(const fs::path& dir, int argc, char** argv) {
  const fs::path p = dir / "nnd-under-valgrind";
  std::ofstream f(p);
  f << "#!/bin/sh\nexec";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], q;
    for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    f << " '" << q << "'";
  }
  f << " \"$@\"\n";
  f.close();
  ::chmod(p.c_str(), 0755);
  return p.string();
}

int session(int argc, char** argv) {
  const Model ball = make_model("ball", "ball_patch.h5", false, 16, 1);
  const Model fb = make_model("field_boundary", "field_boundary.h5", false, 4, 2);
  const Model det = make_model("detector", "detector.h5", true, 2, 3);

  Daemon d("memcheck");
  d.set_exe(write_wrapper(d.dir(), argc, argv));
  const auto fail = [&d](const std::string& why) {
    std::printf("FAIL %s\n--- nnd log (valgrind report included) ---\n%s\n", why.c_str(),
                d.log().c_str());
    return 1;
  };
  const std::string daemon_extra = "  workers: 2\n  log_level: info\n";
  const auto cfg = d.write_config("nnd.yaml", models_yaml("    engine: reference\n"), daemon_extra);
  const int64_t t0 = now_us();
  if (!d.start(cfg, kStartMs)) return fail("nnd did not become ready");
  std::printf("nnd ready under valgrind after %.1f s\n", double(now_us() - t0) / 1e6);

  // Phase 1: three clients at once, one per model, plus one that dies mid-request.
  std::vector<Child> kids;
  kids.push_back(start_client(d.socket_path(), ball, 6, 4));
  kids.push_back(start_client(d.socket_path(), fb, 3, 2));
  kids.push_back(start_client(d.socket_path(), det, 1, 1));
  kids.push_back(start_dying_client(d.socket_path(), det));
  if (!collect_all(kids, "before reload")) return fail("clients before the reload");
  std::printf("phase 1 (4 clients) done after %.1f s\n", double(now_us() - t0) / 1e6);

  // Reload: field_boundary moves from the reference engine to the JIT, so it is recompiled and
  // the old engines are freed while the daemon keeps running.
  d.write_config("nnd.yaml", models_yaml("    engine: jit\n"), daemon_extra);
  if (!d.reload(kReloadMs)) return fail("no READY after SIGHUP");
  {  // A failed reload also ends with READY=1 (old models kept): check the new engine is served.
    nnclient_t* c = nnclient_open(d.socket_path().c_str(), nullptr);
    nnclient_model_info_t info{};
    const bool got = c && nnclient_model_info(c, "field_boundary", &info) == NNCLIENT_OK;
    nnclient_close(c);
    if (!got || std::string(info.engine).rfind("jit", 0) != 0) {
      return fail("after reload field_boundary is served by '" + std::string(info.engine) +
                  "', want the JIT (" + d.last_reload() + ")");
    }
  }
  std::printf("reload done after %.1f s\n", double(now_us() - t0) / 1e6);

  // Phase 2: the recompiled model and an unchanged one, two clients.
  kids.push_back(start_client(d.socket_path(), fb, 3, 4));
  kids.push_back(start_client(d.socket_path(), ball, 4, 8));
  if (!collect_all(kids, "after reload")) return fail("clients after the reload");

  {  // Every request that was answered is in the statistics: 6 + 3 + 1 + 3 + 4 answered, the
     // dying client's request may or may not have run. A worker counts a request just after it
     // pushed the answer, so under valgrind's slow, serialised threads the last count may lag.
    nnclient_t* c = nnclient_open(d.socket_path().c_str(), nullptr);
    if (!c) return fail("stats: open failed");
    uint64_t requests = 0, errors = 0;
    eventually([&] {
      requests = errors = 0;
      nnclient_model_stats_t s{};
      for (uint32_t i = 0; nnclient_stats(c, i, &s) == NNCLIENT_OK; ++i) {
        requests += s.requests;
        errors += s.errors;
      }
      return requests >= 17;
    }, 60'000);
    nnclient_close(c);
    if (requests < 17 || errors != 0) {
      return fail("stats: " + std::to_string(requests) + " requests, " + std::to_string(errors) +
                  " errors (want >= 17 and 0)");
    }
  }

  const int rc = d.stop(kStopMs);
  std::printf("nnd stopped after %.1f s, exit status %d\n", double(now_us() - t0) / 1e6, rc);
  const std::string log = d.log();
  for (const char* key : {"ERROR SUMMARY", "definitely lost", "indirectly lost", "possibly lost"}) {
    const size_t at = log.find(key);
    if (at != std::string::npos) std::printf("  %s\n", log.substr(at, log.find('\n', at) - at).c_str());
  }
  if (log.find("HEAP SUMMARY") == std::string::npos) return fail("no valgrind report in the log");
  if (rc != 0) return fail("nnd under valgrind exited " + std::to_string(rc));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s VALGRIND [VALGRIND_OPTION...] NND\n", argv[0]);
    return 2;
  }
  try {
    return session(argc, argv);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
