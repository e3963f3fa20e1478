#include "soak_report.h"

#include <algorithm>

#include "client/nnclient.h"

namespace nnd::soak {

void Totals::add(const ClientCounters& c, bool killed) {
  const uint64_t sub = c.submitted.load(), res = c.resolved();
  submitted += sub;
  done += c.done.load();
  wrong += c.wrong.load();
  lost += c.lost.load();
  // A request is counted in `submitted` before it starts and resolved after, so res <= sub.
  const uint64_t open = sub > res ? sub - res : 0;
  (killed ? interrupted : lost) += open;
  for (int i = 0; i < kNumStatus; ++i) {
    err_expected[i] += c.err_expected[i].load();
    err_unexpected[i] += c.err_unexpected[i].load();
  }
  served_a += c.served_a.load();
  served_b += c.served_b.load();
  stale_version += c.stale_version.load();
  info_expected += c.info_errors_expected.load();
  info_unexpected += c.info_errors_unexpected.load();
  const uint32_t n = c.note_len.load();
  if (n > 0 && n < kNoteBytes) notes.emplace_back(c.note, n);
  if (!killed && open > 0) notes.push_back(std::to_string(open) + " request(s) unanswered at client exit");
}

uint64_t Totals::unexpected_errors() const {
  uint64_t n = info_unexpected;
  for (uint64_t v : err_unexpected) n += v;
  return n;
}

std::optional<Drift> rss_drift(const Incarnation& in) {
  const auto& v = in.settled;
  if (v.size() < 2 || v.back().first <= v.front().first) return std::nullopt;
  Drift d;
  d.from_us = v.front().first;
  d.to_us = v.back().first;
  d.samples = static_cast<int>(v.size());
  const int64_t window = std::min<int64_t>(60'000'000, (d.to_us - d.from_us) / 4);
  auto median = [](std::vector<int64_t> x) {
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  std::vector<int64_t> first, last;
  d.min_kib = d.max_kib = v.front().second.private_kib();
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (const auto& [at, s] : v) {
    const int64_t kib = s.private_kib();
    if (at <= d.from_us + window) first.push_back(kib);
    if (at >= d.to_us - window) last.push_back(kib);
    d.min_kib = std::min(d.min_kib, kib);
    d.max_kib = std::max(d.max_kib, kib);
    const double x = static_cast<double>(at - d.from_us) / 60e6, y = static_cast<double>(kib);
    st += x, sy += y, stt += x * x, sty += x * y;
  }
  d.base_kib = median(first);
  d.end_kib = median(last);
  const double n = static_cast<double>(v.size()), den = n * stt - st * st;
  d.slope_kib_per_min = den > 0 ? (n * sty - st * sy) / den : 0;
  return d;
}

std::string status_table(const uint64_t (&counts)[kNumStatus]) {
  std::string s;
  for (int i = 0; i < kNumStatus; ++i) {
    if (counts[i] == 0) continue;
    if (!s.empty()) s += ", ";
    s += std::string(nnclient_status_name(static_cast<nnclient_status>(i))) + " " +
         std::to_string(counts[i]);
  }
  return s.empty() ? "none" : s;
}

}  // namespace nnd::soak
