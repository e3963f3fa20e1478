#include "core/jit/isa_calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/util/error.h"

namespace nnd::jit {

std::vector<IsaTiming> measure_isas(std::span<const Isa> candidates, const TimeRuns& time_runs,
                                    const IsaCalibrationPolicy& policy) {
  const size_t n = candidates.size();
  std::vector<int> runs_per_sample(n, 1);
  double spent_us = 0;  // in the rounds: the warm-up's cost is the same for any budget
  // Warm-up: the first run of an engine pays for its arena's first-touch page faults (bop: 5-10
  // times a warm run), which says nothing about the code.
  std::vector<double> warmup(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const double t = std::max(time_runs(k, 1), 1e-3);
    warmup[k] = t;
    const double want = std::ceil(policy.min_sample_us / t);
    runs_per_sample[k] = static_cast<int>(std::clamp(want, 1.0, static_cast<double>(std::max(1, policy.max_runs_per_sample))));
  }
  std::vector<std::vector<double>> per_run(n);
  std::vector<double> best(n, 0);
  std::vector<bool> contender(n, true);
  if (n > 0) {
    const double fastest = *std::min_element(warmup.begin(), warmup.end());
    if (fastest >= policy.warmup_min_us) {
      for (size_t k = 0; k < n; ++k) contender[k] = warmup[k] <= fastest * policy.warmup_ratio;
    }
  }
  for (int round = 0; round < policy.max_rounds; ++round) {
    if (round > 0 && spent_us >= policy.max_spent_us) break;
    if (round >= policy.min_rounds) {
      if (spent_us >= policy.budget_us) break;
      double fastest = 0;
      bool any = false;
      for (size_t k = 0; k < n; ++k) {
        if (per_run[k].empty()) continue;
        fastest = any ? std::min(fastest, best[k]) : best[k];
        any = true;
      }
      for (size_t k = 0; k < n; ++k) contender[k] = !per_run[k].empty() && best[k] <= fastest * policy.contender_ratio;
      if (std::count(contender.begin(), contender.end(), true) <= 1) break;
    }
    for (size_t i = 0; i < n; ++i) {
      const size_t k = (i + static_cast<size_t>(round)) % n;
      if (!contender[k]) continue;
      const double t = time_runs(k, runs_per_sample[k]);
      spent_us += t;
      const double run = t / runs_per_sample[k];
      best[k] = per_run[k].empty() ? run : std::min(best[k], run);
      per_run[k].push_back(run);
    }
  }
  std::vector<IsaTiming> out;
  for (size_t k = 0; k < n; ++k) {
    std::vector<double>& v = per_run[k];
    IsaTiming t;
    t.isa = candidates[k];
    t.samples = static_cast<int>(v.size());
    if (!v.empty()) {
      std::sort(v.begin(), v.end());
      t.min_us = v.front();
      t.median_us = v[v.size() / 2];
    } else {  // out after its warm-up
      t.min_us = t.median_us = warmup[k];
    }
    out.push_back(t);
  }
  return out;
}

Isa choose_isa(std::span<const IsaTiming> timings, double tie_margin) {
  if (timings.empty()) throw Error(ErrorCode::kInternal, "JIT internal error: ISA choice among no candidates");
  double fastest = timings.front().min_us;
  for (const IsaTiming& t : timings) fastest = std::min(fastest, t.min_us);
  for (const IsaTiming& t : timings) {  // narrowest first
    if (t.min_us <= fastest * (1 + tie_margin)) return t.isa;
  }
  return timings.front().isa;  // unreachable: the fastest is within the margin of itself
}

std::string IsaSelection::summary() const {
  std::string s = isa_id(isa);
  switch (source) {
    case Source::kRequested: return s + " (requested)";
    case Source::kOnlyCandidate: return s + " (auto, the only ISA this CPU has)";
    case Source::kMeasured: s += " (auto, measured"; break;
    case Source::kCache: s += " (auto, from the calibration cache " + cache_path + ", measured then"; break;
    case Source::kRemembered: s += " (auto, as chosen earlier in this process, measured then"; break;
  }
  s += standin ? " on the large-network stand-in:" : ":";
  char buf[96];
  for (size_t i = 0; i < timings.size(); ++i) {
    const IsaTiming& t = timings[i];
    if (source == Source::kMeasured && t.samples == 0) {
      std::snprintf(buf, sizeof buf, "%s %s %.1f us (warm-up only)", i ? "," : "", isa_id(t.isa), t.min_us);
    } else if (source == Source::kMeasured) {
      std::snprintf(buf, sizeof buf, "%s %s %.1f us (%d)", i ? "," : "", isa_id(t.isa), t.min_us, t.samples);
    } else {
      std::snprintf(buf, sizeof buf, "%s %s %.1f us", i ? "," : "", isa_id(t.isa), t.min_us);
    }
    s += buf;
  }
  if (source == Source::kMeasured) {
    std::snprintf(buf, sizeof buf, "; per run, min CPU time of (samples), margin %.0f%%; calibration %.1f ms", tie_margin * 100,
                  calibration_ms);
    s += buf;
  }
  return s + ")";
}

}  // namespace nnd::jit
