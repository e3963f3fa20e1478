// Logging to stderr in a journald-friendly form.
//
// When stderr is connected to the journal (systemd sets JOURNAL_STREAM to the device and inode of
// that stream), every line starts with an sd-daemon level prefix, "<6>message", which journald
// turns into the entry's priority; no program name, since journald shows "nnd[pid]: " already.
// Otherwise lines read "nnd[info]: message".
// Thread-safe; one write(2) per line so lines from several threads never interleave.
#pragma once

#include <string>

#include "daemon/base/logger.h"

namespace nnd::daemon {

void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);

// Re-checks JOURNAL_STREAM against stderr (done once automatically on first use).
void detect_journal();

void log(LogLevel level, const std::string& message);
// printf-style convenience.
void logf(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// This sink as a Logger, for the units that take one (daemon/base/logger.h).
Logger default_logger();

}  // namespace nnd::daemon
