// LogLimiter: kBurst lines per client uid and kind per window, then one summary line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "daemon/ipc/log_limiter.h"

using namespace nnd::daemon;
using namespace nnd::daemon::ipc;

namespace {

struct Lines {
  std::vector<std::string> v;
  Log log{[this](LogLevel, const std::string& m) { v.push_back(m); }};
};

TEST(LogLimiter, BurstThenOneSummaryPerWindow) {
  Lines out;
  LogLimiter l(out.log);
  int made = 0;
  for (int i = 0; i < 1000; ++i) {
    l.log(1000, "reload refused", LogLevel::kWarning, 100 + i, [&] { return "refused " + std::to_string(++made); });
  }
  EXPECT_EQ(made, static_cast<int>(LogLimiter::kBurst));  // no message built for suppressed lines
  EXPECT_EQ(out.v.size(), LogLimiter::kBurst);
  // Another uid, another kind: their own budgets.
  l.log(1001, "reload refused", LogLevel::kWarning, 2000, [] { return std::string("other uid"); });
  l.log(1000, "connected", LogLevel::kInfo, 2000, [] { return std::string("other kind"); });
  EXPECT_EQ(out.v.size(), LogLimiter::kBurst + 2);
  // Before the window ends: no summary yet, and flush says when.
  EXPECT_EQ(l.flush(LogLimiter::kWindowNs), 100);
  EXPECT_EQ(out.v.size(), LogLimiter::kBurst + 2);
  EXPECT_EQ(l.flush(100 + LogLimiter::kWindowNs), -1);
  ASSERT_EQ(out.v.size(), LogLimiter::kBurst + 3);
  EXPECT_EQ(out.v.back(), "uid 1000: 990 more like this suppressed in the last 5 s (reload refused)");
  EXPECT_EQ(l.suppressed_total(), 990u);
  // A new window logs again.
  l.log(1000, "reload refused", LogLevel::kWarning, 200 + LogLimiter::kWindowNs, [] { return std::string("again"); });
  EXPECT_EQ(out.v.back(), "again");
}

TEST(LogLimiter, ASummaryAlsoComesWithTheNextLineAfterTheWindow) {
  Lines out;
  LogLimiter l(out.log);
  for (int i = 0; i < 15; ++i) l.log(7, "hello refused", LogLevel::kWarning, 0, [] { return std::string("x"); });
  l.log(7, "hello refused", LogLevel::kWarning, LogLimiter::kWindowNs, [] { return std::string("y"); });
  ASSERT_EQ(out.v.size(), LogLimiter::kBurst + 2);
  EXPECT_EQ(out.v[LogLimiter::kBurst], "uid 7: 5 more like this suppressed in the last 5 s (hello refused)");
  EXPECT_EQ(out.v.back(), "y");
}

}  // namespace
