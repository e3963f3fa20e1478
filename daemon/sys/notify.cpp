#include "daemon/sys/notify.h"

#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include "daemon/sys/log.h"

namespace nnd::daemon {

namespace {

std::string clean(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (c == '\n') c = ' ';  // STATUS= is one line
  }
  return out;
}

void send(const std::string& msg) {
  if (!notify_enabled()) return;
  const int r = sd_notify(0, msg.c_str());
  if (r < 0) logf(LogLevel::kWarning, "sd_notify failed: %s", std::strerror(-r));
}

}  // namespace

bool notify_enabled() {
  const char* s = std::getenv("NOTIFY_SOCKET");
  return s != nullptr && *s != '\0';
}

uint64_t monotonic_usec() {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000ull + static_cast<uint64_t>(ts.tv_nsec) / 1000;
}

void notify_ready(const std::string& status) { send("READY=1\nSTATUS=" + clean(status)); }

void notify_reloading(const std::string& status) {
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()) +
       "\nSTATUS=" + clean(status));
}

void notify_stopping(const std::string& status) { send("STOPPING=1\nSTATUS=" + clean(status)); }

void notify_status(const std::string& status) { send("STATUS=" + clean(status)); }

void notify_watchdog() { send("WATCHDOG=1"); }

uint64_t watchdog_ping_interval_us() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) return usec / 2;
  return 0;
}

}  // namespace nnd::daemon
