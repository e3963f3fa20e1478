#include "daemon/sys/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace nnd::daemon {

namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_journal{-1};  // -1 unknown, 0 plain, 1 journal

bool stderr_is_journal() {
  const char* js = std::getenv("JOURNAL_STREAM");
  if (js == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }
bool log_enabled(LogLevel level) { return static_cast<int>(level) <= g_level.load(); }

void detect_journal() { g_journal.store(stderr_is_journal() ? 1 : 0); }

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  if (g_journal.load() < 0) detect_journal();
  std::string line;
  line.reserve(message.size() + 24);
  if (g_journal.load() == 1) {
    // No program name: journald already shows "nnd[pid]:" for the unit's stream.
    line += '<';
    line += static_cast<char>('0' + static_cast<int>(level));
    line += '>';
  } else {
    line += "nnd[";
    line += log_level_name(level);
    line += "]: ";
  }
  // One entry per line: continuation lines of a multi-line message get the prefix too.
  const std::string prefix = line;
  for (char c : message) {
    line += c;
    if (c == '\n') line += prefix;
  }
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void logf(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  log(level, buf);
}

Logger default_logger() {
  return [](LogLevel level, const std::string& m) { log(level, m); };
}

}  // namespace nnd::daemon
