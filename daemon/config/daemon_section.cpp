// The `daemon:` section: DaemonSettings, key by key (config/SCHEMA.md documents each).
#include <grp.h>
#include <pwd.h>

#include <charconv>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/config/config_sections.h"

namespace nnd::daemon {

namespace {
void resolve_run_as(ConfigReader& r, const YAML::Node& user_node, const YAML::Node& group_node,
                    DaemonSettings& s);
}  // namespace

void parse_daemon_section(ConfigReader& r, const YAML::Node& d, DaemonSettings& s) {
  if (d.IsNull()) return;
  if (!d.IsMap()) {
    r.issue(d, "daemon", "expected a mapping of daemon settings, got " + ConfigReader::kind(d));
    return;
  }
  static const std::vector<std::string> known = {
      "endpoint", "user", "group", "socket_mode", "workers", "cpu_affinity",
      "realtime_priority", "log_level", "watchdog", "max_clients", "max_inflight_per_client",
      "slots_per_client", "spin_us", "max_request_bytes", "max_shared_memory_bytes",
      "handshake_timeout_ms", "max_pending_connections", "on_model_error", "control_group",
      "run_as", "run_as_group", "validate_models", "isa_calibration_cache", "max_clients_per_uid",
      "max_shared_memory_bytes_per_uid", "max_model_memory_bytes"};
  YAML::Node run_as_node, run_as_group_node;
  r.for_each_key(d, "daemon", known, [&](const std::string& k, const YAML::Node& v,
                                       const std::string& key) {
    if (k == "endpoint") {
      std::string e;
      if (!r.string_value(v, key, e)) return;
      if (e.empty()) {
        r.issue(v, key, "must not be empty");
      } else if (e.find('/') == std::string::npos &&
                 e.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_.-") != std::string::npos) {
        r.issue(v, key, "a name may hold only letters, digits, '_', '.' and '-' (or give a "
                      "socket path containing '/'), got " + ConfigReader::quote(e));
      } else if (e.size() > 100) {
        r.issue(v, key, "too long for a Unix socket path (at most 100 characters)");
      } else {
        s.endpoint = e;
      }
    } else if (k == "user") {
      std::string u;
      if (!r.string_value(v, key, u)) return;
      s.user = u;
      if (u.empty()) return;
      if (auto uid = ConfigReader::lookup_user(u)) {
        s.allowed_uid = *uid;
      } else {
        r.issue(v, key, "unknown user " + ConfigReader::quote(u));
      }
    } else if (k == "group") {
      r.group_value(v, key, s.group, s.allowed_gid);
    } else if (k == "socket_mode") {
      uint32_t mode = 0;
      if (!r.integer(v, key, 0, 0777, mode, 8)) return;
      // Owner and group only: others are never let near the socket (the peer-credential check
      // would refuse them anyway, but the file mode keeps them from even connecting), and a
      // socket has no use for execute bits.
      if ((mode & ~0660u) != 0) {
        std::ostringstream os;
        os << "must be 0660 or tighter (read/write for owner and group only), got 0" << std::oct
           << mode;
        r.issue(v, key, os.str());
        return;
      }
      s.socket_mode = mode;
    } else if (k == "workers") {
      r.integer(v, key, 1, 64, s.workers);
    } else if (k == "cpu_affinity") {
      s.cpu_affinity.clear();
      if (v.IsNull()) return;
      if (!v.IsSequence()) {
        r.issue(v, key, "expected a list of CPU numbers, got " + ConfigReader::kind(v));
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        int cpu = 0;
        if (r.integer(v[i], key + "[" + std::to_string(i) + "]", 0, 1023, cpu)) {
          s.cpu_affinity.push_back(cpu);
        }
      }
    } else if (k == "realtime_priority") {
      r.integer(v, key, 0, 99, s.realtime_priority);
    } else if (k == "log_level") {
      std::string l;
      if (!r.string_value(v, key, l)) return;
      if (auto lv = parse_log_level(l)) {
        s.log_level = *lv;
      } else {
        r.issue(v, key, "expected error, warning, notice, info or debug, got " + ConfigReader::quote(l));
      }
    } else if (k == "watchdog") {
      r.boolean(v, key, s.watchdog);
    } else if (k == "max_clients") {
      r.integer(v, key, 1, 4096, s.max_clients);
    } else if (k == "max_inflight_per_client") {
      r.integer(v, key, 1, 64, s.max_inflight_per_client);
    } else if (k == "slots_per_client") {
      r.integer(v, key, 1, 64, s.slots_per_client);
    } else if (k == "spin_us") {
      r.integer(v, key, 0, 100000, s.spin_us);
    } else if (k == "max_request_bytes") {
      r.byte_size(v, key, 1, ConfigReader::kTiB, s.max_request_bytes);
    } else if (k == "max_shared_memory_bytes") {
      r.byte_size(v, key, ConfigReader::kMiB, ConfigReader::kTiB, s.max_shared_memory_bytes);
    } else if (k == "max_model_memory_bytes") {
      r.byte_size(v, key, ConfigReader::kMiB, ConfigReader::kTiB, s.max_model_memory_bytes);
    } else if (k == "max_clients_per_uid") {
      r.integer(v, key, 0, 4096, s.max_clients_per_uid);
    } else if (k == "max_shared_memory_bytes_per_uid") {
      r.byte_size(v, key, 0, ConfigReader::kTiB, s.max_shared_memory_bytes_per_uid);
    } else if (k == "handshake_timeout_ms") {
      r.integer(v, key, 100, 60000, s.handshake_timeout_ms);
    } else if (k == "max_pending_connections") {
      r.integer(v, key, 1, 1024, s.max_pending_connections);
    } else if (k == "control_group") {
      r.group_value(v, key, s.control_group, s.control_gid);
    } else if (k == "run_as") {
      if (r.string_value(v, key, s.run_as)) run_as_node = v;
    } else if (k == "run_as_group") {
      if (r.string_value(v, key, s.run_as_group)) run_as_group_node = v;
    } else if (k == "on_model_error") {
      std::string e;
      if (!r.string_value(v, key, e)) return;
      if (e == "skip" || e == "fail") {
        s.skip_failed_models = e == "skip";
      } else {
        r.issue(v, key, "expected skip or fail, got " + ConfigReader::quote(e));
      }
    } else if (k == "isa_calibration_cache") {
      std::string e;
      if (!r.string_value(v, key, e)) return;
      if (e == "auto" || e == "off" || (e.size() > 1 && e[0] == '/' && e.back() != '/')) {
        s.isa_calibration_cache = e;
      } else {
        r.issue(v, key, "expected auto, off or the absolute path of a file, got " + ConfigReader::quote(e));
      }
    } else if (k == "validate_models") {
      std::string e;
      if (!r.string_value(v, key, e)) return;
      if (e == "isolated" || e == "in_process") {
        s.isolated_model_validation = e == "isolated";
      } else {
        r.issue(v, key, "expected isolated or in_process, got " + ConfigReader::quote(e));
      }
    }
  });
  resolve_run_as(r, run_as_node, run_as_group_node, s);
}

namespace {

// daemon.run_as must name an account of the user database (its primary group and supplementary
// groups come from there); run_as_group, a group by name or number, replaces the primary one.
void resolve_run_as(ConfigReader& r, const YAML::Node& user_node, const YAML::Node& group_node,
                    DaemonSettings& s) {
  if (s.run_as.empty()) {
    if (!s.run_as_group.empty()) {
      r.issue(group_node, "daemon.run_as_group", "needs daemon.run_as (the user to switch to)");
    }
    return;
  }
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* res = nullptr;
  uid_t numeric = 0;
  const std::string& u = s.run_as;
  if (auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), numeric);
      ec == std::errc() && p == u.data() + u.size()) {
    ::getpwuid_r(numeric, &pw, buf.data(), buf.size(), &res);
  } else {
    ::getpwnam_r(u.c_str(), &pw, buf.data(), buf.size(), &res);
  }
  if (res == nullptr) {
    r.issue(user_node, "daemon.run_as", "unknown user " + ConfigReader::quote(u) + " (not in the user database)");
    return;
  }
  s.run_as = res->pw_name;  // the name: initgroups() needs it
  s.run_as_uid = res->pw_uid;
  s.run_as_gid = res->pw_gid;
  if (!s.run_as_group.empty()) {
    std::string name = s.run_as_group;
    std::optional<gid_t> gid;
    r.group_value(group_node, "daemon.run_as_group", name, gid);
    if (gid) s.run_as_gid = *gid;
  }
}

}  // namespace

}  // namespace nnd::daemon
