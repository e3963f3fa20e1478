#include "daemon/base/logger.h"

namespace nnd::daemon {

std::optional<LogLevel> parse_log_level(const std::string& s) {
  if (s == "error") return LogLevel::kError;
  if (s == "warning" || s == "warn") return LogLevel::kWarning;
  if (s == "notice") return LogLevel::kNotice;
  if (s == "info") return LogLevel::kInfo;
  if (s == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

const char* log_level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kNotice: return "notice";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "?";
}

}  // namespace nnd::daemon
