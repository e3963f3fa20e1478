// The daemon's one logger type and its levels. Every unit that logs (the config loader's callers,
// the registry builder, the IPC server, the Daemon) takes a Logger; the Daemon hands each the
// stderr/journal sink of daemon/sys/log.h. Tests pass one that collects lines.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace nnd::daemon {

// syslog's numbers, so that they map 1:1 onto sd-daemon prefixes ("<4>message").
enum class LogLevel : int { kError = 3, kWarning = 4, kNotice = 5, kInfo = 6, kDebug = 7 };

std::optional<LogLevel> parse_log_level(const std::string& s);  // "error" ... "debug" ("warn" too)
const char* log_level_name(LogLevel l);                         // "error" ... "debug"

// Thread-safe by contract: units log from any of their threads. May be empty (a unit then logs
// nothing, except where its header says otherwise).
using Logger = std::function<void(LogLevel, const std::string&)>;

}  // namespace nnd::daemon
