#include "soak_client.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "client/nnclient.h"
#include "tests/support/monotonic_clock.h"

namespace nnd::soak {
namespace {

using test::now_us;

bool is_daemon_gone(nnclient_status st) {
  return st == NNCLIENT_E_DAEMON_RESTARTED || st == NNCLIENT_E_DAEMON_NOT_RUNNING;
}

// The chaos phases seen at one moment.
struct Phase {
  uint64_t cfg, dmn;
  uint32_t live;
};

// A served model as this client knows it.
struct ModelState {
  const char* name;
  uint32_t max_batch;           // what the client sends at most (valid under both configs)
  nnclient_model_info_t info{};
  bool valid = false;
  Phase at_info{};              // the chaos phases when `info` was read
  int64_t retry_at_us = 0;      // after an expected UNKNOWN_MODEL: when to ask again
};

// One request from start to resolution.
struct Request {
  ModelState* ms = nullptr;
  const ModelData* data = nullptr;
  bool is_ball = false;
  size_t first = 0;
  uint32_t batch = 0;
  Phase at_start{};
  nnclient_request_t* rq = nullptr;
};

class Client {
 public:
  Client(const ClientProfile& p, const Workload& w, SharedState* sh)
      : p_(p), w_(w), sh_(sh), cnt_(sh->clients[p.slot]), rng_(p.seed) {}

  int run() {
    // Restarts before this client existed explain none of its errors.
    daemon_seen_ = sh_->daemon_seq.load() & ~uint64_t{1};
    if (!open()) return 0;  // stopped before the daemon could be reached
    const int64_t step_us = static_cast<int64_t>(1e6 / std::max(1.0, p_.rate));
    int64_t next = now_us();
    while (!sh_->stop.load()) {
      const int n = p_.depth == 0 ? 1 : 1 + static_cast<int>(rng_() % p_.depth);
      const bool ok = p_.depth == 0 ? one_sync() : burst(n);
      if (!ok) ::usleep(20000);  // the daemon is away: do not spin on it
      next += step_us * n;
      const int64_t now = now_us();
      if (next < now - 200000) next = now;  // behind by more than 200 ms: do not burst to catch up
      if (next > now) ::usleep(static_cast<useconds_t>(next - now));
    }
    nnclient_close(c_);
    return 0;
  }

 private:
  Phase phase() const { return {sh_->cfg_seq.load(), sh_->daemon_seq.load(), sh_->cfg_live.load()}; }

  void note(const std::string& s) {
    if (cnt_.note_len.load() != 0) return;  // keep the first problem only
    const size_t n = std::min(s.size(), kNoteBytes - 1);
    std::memcpy(cnt_.note, s.data(), n);
    cnt_.note_len.store(static_cast<uint32_t>(n));
  }
  std::string who() const { return "client #" + std::to_string(p_.generation) + ": "; }

  // Daemon errors are expected while it is down, when it went down or came back during the call,
  // or when this client has not completed a call since it came back.
  bool daemon_error_expected(const Phase& a, const Phase& b) const {
    return (a.dmn & 1) || a.dmn != b.dmn || a.dmn != daemon_seen_;
  }
  // Config B may have been live at some moment between a and b.
  static bool b_possible(const Phase& a, const Phase& b) {
    return a.live == kConfigB || b.live == kConfigB || a.cfg != b.cfg || (a.cfg & 1);
  }

  bool open() {
    for (;;) {
      if (sh_->stop.load()) return false;
      const Phase a = phase();
      nnclient_status st = NNCLIENT_OK;
      c_ = nnclient_open(p_.socket_path.c_str(), &st);
      if (c_) {
        daemon_seen_ = a.dmn;
        return true;
      }
      if (is_daemon_gone(st) && daemon_error_expected(a, phase())) {
        cnt_.info_errors_expected.fetch_add(1);
      } else {
        cnt_.info_errors_unexpected.fetch_add(1);
        note(who() + "open: " + nnclient_status_name(st) + " " + nnclient_last_error(nullptr));
      }
      ::usleep(20000);
    }
  }

  // Makes ms.info valid if it can; false (and the failure counted) if not.
  bool refresh(ModelState& ms) {
    if (ms.valid) return true;
    if (now_us() < ms.retry_at_us) return false;
    const Phase a = phase();
    const nnclient_status st = nnclient_model_info(c_, ms.name, &ms.info);
    if (st == NNCLIENT_OK) {
      ms.valid = true;
      ms.at_info = a;
      return true;
    }
    const Phase b = phase();
    const bool expected = (is_daemon_gone(st) && daemon_error_expected(a, b)) ||
                          (st == NNCLIENT_E_UNKNOWN_MODEL && &ms == &fb_ && b_possible(a, b));
    (expected ? cnt_.info_errors_expected : cnt_.info_errors_unexpected).fetch_add(1);
    if (!expected) {
      note(who() + "model_info " + ms.name + ": " + nnclient_status_name(st) + " " +
           nnclient_last_error(c_));
    }
    ms.retry_at_us = now_us() + 50000;
    return false;
  }

  // Picks a model (ball 50%, flip 20%, fb 20%, det 10%), a batch and pool samples. False when
  // not even ball's info is available (the daemon is away).
  bool make(Request& r) {
    const uint32_t pick = rng_() % 10;
    ModelState* ms = pick < 5 ? &ball_ : pick < 7 ? &flip_ : pick < 9 ? &fb_ : &det_;
    if (!refresh(*ms)) {
      ms = &ball_;
      if (!refresh(*ms)) return false;
    }
    r.ms = ms;
    r.is_ball = ms == &ball_;
    if (ms == &flip_) {
      // flip serves ball_patch.h5 under A and field_boundary.h5 under B: the layout the client
      // holds says which one this request is for.
      r.data = std::strcmp(ms->info.inputs[0].name, w_.ball.input_name.c_str()) == 0 ? &w_.ball
                                                                                     : &w_.fb;
    } else {
      r.data = ms == &ball_ ? &w_.ball : ms == &fb_ ? &w_.fb : &w_.det;
    }
    r.batch = 1 + static_cast<uint32_t>(rng_() % ms->max_batch);
    r.first = rng_() % r.data->n;
    return true;
  }

  // Counts a finished request exactly once. `out` is set when st is NNCLIENT_OK.
  void resolve(const Request& r, nnclient_status st, const std::vector<const float*>& out) {
    const Phase b = phase();
    if (st == NNCLIENT_OK) {
      const Match m = match_output(*r.data, r.first, r.batch, out);
      // Only ball may legitimately come from the reference engine (config B's).
      const bool right = r.is_ball ? m != Match::kNeither : (m == Match::kExact || m == Match::kBoth);
      if (!right) {
        cnt_.wrong.fetch_add(1);
        note(who() + "wrong answer from " + r.ms->name + " (batch " + std::to_string(r.batch) +
             ", first sample " + std::to_string(r.first) + ", engine " + r.ms->info.engine +
             (r.ms->info.engine == r.data->engine ? "" : ", but expected outputs are " + r.data->engine + "'s") + ")");
        return;
      }
      cnt_.done.fetch_add(1);
      if (!(r.at_start.dmn & 1) && r.at_start.dmn == b.dmn) daemon_seen_ = r.at_start.dmn;
      if (r.is_ball && m != Match::kBoth) {
        (m == Match::kExact ? cnt_.served_a : cnt_.served_b).fetch_add(1);
        const bool settled = !(r.at_start.cfg & 1) && r.at_start.cfg == b.cfg;
        if (settled && (m == Match::kExact) != (b.live == kConfigA)) cnt_.stale_version.fetch_add(1);
      }
      return;
    }
    if (st == NNCLIENT_E_TIMEOUT) {
      cnt_.lost.fetch_add(1);
      note(who() + "request to " + r.ms->name + " lost: no answer within " +
           std::to_string(p_.timeout_us / 1000) + " ms");
      return;
    }
    bool expected = false;
    if (is_daemon_gone(st)) expected = daemon_error_expected(r.at_start, b);
    // flip changes its layout between the configs, ball its max_batch (32 / 16): both are a
    // "model changed" for a client whose info predates a reload.
    if (st == NNCLIENT_E_MODEL_CHANGED) {
      expected = r.ms == &flip_ || (r.ms == &ball_ && (r.ms->at_info.cfg != b.cfg || (r.ms->at_info.cfg & 1)));
    }
    if (st == NNCLIENT_E_UNKNOWN_MODEL) expected = r.ms == &fb_ && b_possible(r.at_start, b);
    const int code = std::clamp(static_cast<int>(st), 0, kNumStatus - 1);
    (expected ? cnt_.err_expected : cnt_.err_unexpected)[code].fetch_add(1);
    if (!expected) {
      note(who() + r.ms->name + ": " + nnclient_status_name(st) + " " + nnclient_last_error(c_));
    }
    // The layout (or the model) changed: ask for the model info again before the next use.
    if (st == NNCLIENT_E_MODEL_CHANGED || st == NNCLIENT_E_UNKNOWN_MODEL) r.ms->valid = false;
  }

  bool one_sync() {
    Request r;
    if (!make(r)) return false;
    const nnclient_model_info_t& info = r.ms->info;
    in_.resize(r.batch * r.data->in_bytes);
    fill_input(*r.data, r.first, r.batch, in_.data());
    outs_.resize(info.num_outputs);
    std::vector<void*> outp;
    std::vector<const float*> outc;
    for (uint32_t k = 0; k < info.num_outputs; ++k) {
      outs_[k].assign(r.batch * info.outputs[k].sample_bytes / sizeof(float), 0.0f);
      outp.push_back(outs_[k].data());
      outc.push_back(outs_[k].data());
    }
    const void* inp[1] = {in_.data()};
    r.at_start = phase();
    cnt_.submitted.fetch_add(1);
    const nnclient_status st = nnclient_infer(c_, &info, inp, r.batch, outp.data(), p_.timeout_us);
    resolve(r, st, outc);
    return !is_daemon_gone(st);
  }

  bool burst(int n) {
    std::vector<Request> pending;
    bool daemon_ok = true;
    for (int i = 0; i < n; ++i) {
      Request r;
      if (!make(r)) {
        daemon_ok = false;
        break;
      }
      r.at_start = phase();
      cnt_.submitted.fetch_add(1);
      nnclient_status st = nnclient_request_begin(c_, &r.ms->info, r.batch, &r.rq);
      if (st == NNCLIENT_OK) {
        fill_input(*r.data, r.first, r.batch, nnclient_request_input(r.rq, 0));
        st = nnclient_submit(c_, r.rq, nullptr);
        if (st == NNCLIENT_OK) {
          pending.push_back(r);
          continue;
        }
        nnclient_request_release(c_, r.rq);
      }
      resolve(r, st, {});
      daemon_ok = daemon_ok && !is_daemon_gone(st);
    }
    for (Request& r : pending) {
      const nnclient_status st = nnclient_wait(c_, r.rq, p_.timeout_us);
      std::vector<const float*> out;
      if (st == NNCLIENT_OK) {
        for (uint32_t k = 0; k < r.ms->info.num_outputs; ++k) {
          out.push_back(static_cast<const float*>(nnclient_request_output(r.rq, k)));
        }
      }
      resolve(r, st, out);  // reads the outputs in shared memory before the slot is released
      nnclient_request_release(c_, r.rq);
      daemon_ok = daemon_ok && !is_daemon_gone(st);
    }
    return daemon_ok;
  }

  const ClientProfile& p_;
  const Workload& w_;
  SharedState* sh_;
  ClientCounters& cnt_;
  std::mt19937_64 rng_;
  nnclient_t* c_ = nullptr;
  uint64_t daemon_seen_ = 0;
  ModelState ball_{"ball", Workload::kBallBatch}, fb_{"fb", Workload::kFbBatch},
      flip_{"flip", Workload::kFlipBatch}, det_{"det", Workload::kDetBatch};
  std::vector<uint8_t> in_;
  std::vector<std::vector<float>> outs_;
};

}  // namespace

ClientProfile make_profile(int generation, int slot, const std::string& socket_path,
                           uint64_t timeout_us) {
  static constexpr double kRates[] = {2000, 50, 500, 200, 1000, 100};
  static constexpr int kDepths[] = {0, 4, 0, 2, 3, 0, 1};
  ClientProfile p;
  p.slot = slot;
  p.generation = generation;
  p.seed = 0x50a6 + static_cast<uint64_t>(generation) * 7919;
  p.rate = kRates[generation % 6];
  p.depth = kDepths[generation % 7];
  p.timeout_us = timeout_us;
  p.socket_path = socket_path;
  return p;
}

int run_client(const ClientProfile& p, const Workload& w, SharedState* shared) {
  Client c(p, w, shared);
  return c.run();
}

}  // namespace nnd::soak
