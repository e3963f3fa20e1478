#include "soak_report.h"

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
