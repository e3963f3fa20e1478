// Errors of the daemon's own units, with a code that says what kind of failure it is, as
// nnd::Error (core/util/error.h) does for the core: callers decide by the code (which status a
// control client gets, whether a reload may be retried, the exit status) and never by the text.
// Model failures keep the core's nnd::Error and its code; the registry wraps them in a
// DaemonError of code kModel only where it reports several at once (BuildError).
#pragma once

#include <stdexcept>
#include <string>

namespace nnd::daemon {

enum class DaemonErrorCode {
  kConfig,    // the config file: unreadable, not YAML, not the schema, over a bound
  kModel,     // a model failed to load or compile (the core's nnd::Error says why)
  kResource,  // a resource ran out on a control path: threads, memory, descriptors, a queue
  kSystem,    // a system call the daemon needs failed: the socket, signals, privileges
  kAccess,    // a peer or the daemon itself lacks the permission asked for
  kInternal,  // an invariant of the daemon's own code broke: a bug
};

// Lower-case name for logs and tests ("config", "model", ...).
constexpr const char* daemon_error_code_name(DaemonErrorCode code) {
  switch (code) {
    case DaemonErrorCode::kConfig: return "config";
    case DaemonErrorCode::kModel: return "model";
    case DaemonErrorCode::kResource: return "resource";
    case DaemonErrorCode::kSystem: return "system";
    case DaemonErrorCode::kAccess: return "access";
    case DaemonErrorCode::kInternal: return "internal";
  }
  return "?";
}

class DaemonError : public std::runtime_error {
 public:
  DaemonError(DaemonErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  DaemonErrorCode code() const noexcept { return code_; }

 private:
  DaemonErrorCode code_;
};

}  // namespace nnd::daemon
