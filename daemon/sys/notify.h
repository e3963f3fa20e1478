// systemd service notifications (sd_notify(3) through libsystemd). Every call is a no-op when
// NOTIFY_SOCKET is not set, so the daemon behaves the same outside systemd.
#pragma once

#include <cstdint>
#include <string>

namespace nnd::daemon {

bool notify_enabled();                  // NOTIFY_SOCKET is set
void notify_ready(const std::string& status);       // READY=1 + STATUS=
void notify_reloading(const std::string& status);   // RELOADING=1 + MONOTONIC_USEC= + STATUS=
void notify_stopping(const std::string& status);    // STOPPING=1 + STATUS=
void notify_status(const std::string& status);      // STATUS=
void notify_watchdog();                              // WATCHDOG=1

// How often to send WATCHDOG=1: half of WATCHDOG_USEC when systemd set it for this process,
// else 0 (no watchdog).
uint64_t watchdog_ping_interval_us();

uint64_t monotonic_usec();  // CLOCK_MONOTONIC in microseconds, as MONOTONIC_USEC wants it

}  // namespace nnd::daemon
