#include "daemon/config/config.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "daemon/registry/model_set.h"
#include "ipc/nnd_endpoint.h"

namespace nnd::daemon {

namespace fs = std::filesystem;

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

std::string ConfigIssue::to_string(const std::string& file) const {
  std::ostringstream os;
  os << (file.empty() ? "<config>" : file);
  if (line > 0) os << ':' << line << ':' << column;
  os << ": ";
  if (!key.empty()) os << key << ": ";
  os << message;
  return os.str();
}

namespace {

std::string join_issues(const std::string& file, const std::vector<ConfigIssue>& issues) {
  std::string out;
  for (const ConfigIssue& i : issues) {
    if (!out.empty()) out += '\n';
    out += i.to_string(file);
  }
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

ConfigError::ConfigError(std::string file, std::vector<ConfigIssue> issues)
    : std::runtime_error(join_issues(file, issues)), file_(std::move(file)),
      issues_(std::move(issues)) {}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A typo: a few edits relative to the word's length ("max_btach", "engin", "isa_").
  const size_t limit = std::max<size_t>(2, std::min(word.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string endpoint_socket_path(const std::string& endpoint) {
  return nnd_endpoint_path_string(endpoint);  // the rule is ipc/nnd_endpoint.h's
}

std::string isa_calibration_cache_path(const std::string& setting) {
  if (setting == "off") return "";
  if (setting != "auto") return setting;
  const char* dir = std::getenv("CACHE_DIRECTORY");
  if (!dir || !*dir) return "";
  // systemd passes several folders colon-separated when the unit names several; nnd's names one.
  std::string first(dir);
  first = first.substr(0, first.find(':'));
  return first + "/isa-calibration";
}

namespace {

// Walks the YAML tree, filling a Config and collecting issues.
class Parser {
 public:
  Parser(std::string base_dir) : base_dir_(std::move(base_dir)) {}

  std::vector<ConfigIssue> issues;

  void issue(const YAML::Node& at, const std::string& key, const std::string& message) {
    ConfigIssue i;
    if (at.IsDefined()) {
      const YAML::Mark m = at.Mark();
      if (!m.is_null()) {
        i.line = m.line + 1;
        i.column = m.column + 1;
      }
    }
    i.key = key;
    i.message = message;
    issues.push_back(std::move(i));
  }

  // Iterates a mapping, reporting unknown and duplicate keys; calls `fn(key, value_node,
  // key_node)` for the known ones.
  template <typename Fn>
  void for_each_key(const YAML::Node& map, const std::string& where,
                    const std::vector<std::string>& known, Fn fn) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;
      const YAML::Node v = it->second;
      if (!k.IsScalar()) {
        issue(k, where, "keys must be plain names");
        continue;
      }
      const std::string name = k.Scalar();
      const std::string path = where.empty() ? name : where + "." + name;
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string msg = "unknown key";
        if (const std::string near = closest_match(name, known); !near.empty()) {
          msg += " (did you mean '" + near + "'?)";
          suggested_.insert((where.empty() ? "" : where + ".") + near);
        } else {
          msg += "; known keys here: ";
          for (size_t j = 0; j < known.size(); ++j) msg += (j ? ", " : "") + known[j];
        }
        issue(k, path, msg);
        continue;
      }
      if (!seen.insert(name).second) {
        issue(k, path, "key given twice");
        continue;
      }
      fn(name, v, path);
    }
  }

  bool scalar(const YAML::Node& v, const std::string& key, const char* what, std::string& out) {
    if (!v.IsScalar()) {
      issue(v, key, std::string("expected ") + what + ", got " + kind(v));
      return false;
    }
    out = v.Scalar();
    return true;
  }

  bool string_value(const YAML::Node& v, const std::string& key, std::string& out) {
    return scalar(v, key, "a string", out);
  }

  template <typename T>
  bool integer(const YAML::Node& v, const std::string& key, int64_t lo, int64_t hi, T& out,
               int base = 10) {
    std::string s;
    if (!scalar(v, key, "an integer", s)) return false;
    int64_t x = 0;
    const char* b = s.data();
    const char* e = s.data() + s.size();
    if (b != e && *b == '+') ++b;
    const auto [p, ec] = std::from_chars(b, e, x, base);
    if (ec == std::errc::result_out_of_range) {
      issue(v, key, "must be " + range(lo, hi, base) + ", got " + s);
      return false;
    }
    if (ec != std::errc() || p != e || b == e) {
      issue(v, key, std::string("expected an integer") + (base == 8 ? " (octal)" : "") +
                        ", got '" + s + "'");
      return false;
    }
    if (x < lo || x > hi) {
      issue(v, key, "must be " + range(lo, hi, base) + ", got " + s);
      return false;
    }
    out = static_cast<T>(x);
    return true;
  }

  static constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

  // A byte count: an integer with an optional binary suffix K, M, G or T (so `256M` is 256 MiB).
  bool byte_size(const YAML::Node& v, const std::string& key, uint64_t lo, uint64_t hi,
                 uint64_t& out) {
    std::string s;
    if (!scalar(v, key, "a byte count", s)) return false;
    uint64_t unit = 1;
    std::string digits = s;
    if (!digits.empty()) {
      switch (digits.back()) {
        case 'K': case 'k': unit = kKiB; break;
        case 'M': case 'm': unit = kMiB; break;
        case 'G': case 'g': unit = kGiB; break;
        case 'T': case 't': unit = kTiB; break;
        default: break;
      }
      if (unit != 1) digits.pop_back();
    }
    auto show = [](uint64_t n) {
      for (auto [u, suffix] : {std::pair{kTiB, "T"}, {kGiB, "G"}, {kMiB, "M"}, {kKiB, "K"}}) {
        if (n % u == 0) return std::to_string(n / u) + suffix;
      }
      return std::to_string(n);
    };
    uint64_t x = 0;
    const char* b = digits.data();
    const char* e = digits.data() + digits.size();
    const auto [p, ec] = std::from_chars(b, e, x);
    if (b == e || p != e || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      issue(v, key, "expected a byte count (an integer, optionally with K, M, G or T), got '" + s + "'");
      return false;
    }
    uint64_t bytes = 0;
    if (ec == std::errc::result_out_of_range || __builtin_mul_overflow(x, unit, &bytes) ||
        bytes < lo || bytes > hi) {
      issue(v, key, "must be " + show(lo) + ".." + show(hi) + " bytes, got " + s);
      return false;
    }
    out = bytes;
    return true;
  }

  // A group by name or number: `name` as written, `gid` resolved (left unset when empty).
  void group_value(const YAML::Node& v, const std::string& key, std::string& name,
                   std::optional<gid_t>& gid) {
    if (!string_value(v, key, name) || name.empty()) return;
    if (auto g = lookup_group(name)) {
      gid = *g;
    } else {
      issue(v, key, "unknown group '" + name + "'");
    }
  }

  bool boolean(const YAML::Node& v, const std::string& key, bool& out) {
    std::string s;
    if (!scalar(v, key, "true or false", s)) return false;
    std::string l = s;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
    if (l == "true" || l == "yes" || l == "on") {
      out = true;
    } else if (l == "false" || l == "no" || l == "off") {
      out = false;
    } else {
      issue(v, key, "expected true or false, got '" + s + "'");
      return false;
    }
    return true;
  }

  static std::string kind(const YAML::Node& v) {
    switch (v.Type()) {
      case YAML::NodeType::Null: return "nothing (null)";
      case YAML::NodeType::Scalar: return "'" + v.Scalar() + "'";
      case YAML::NodeType::Sequence: return "a list";
      case YAML::NodeType::Map: return "a mapping";
      default: return "an undefined value";
    }
  }

  static std::string range(int64_t lo, int64_t hi, int base) {
    if (base == 8) {
      std::ostringstream os;
      os << std::oct << '0' << lo << "..0" << hi;
      return os.str();
    }
    return std::to_string(lo) + ".." + std::to_string(hi);
  }

  void parse_daemon(const YAML::Node& d, DaemonSettings& s) {
    if (d.IsNull()) return;
    if (!d.IsMap()) {
      issue(d, "daemon", "expected a mapping of daemon settings, got " + kind(d));
      return;
    }
    static const std::vector<std::string> known = {
        "endpoint", "user", "group", "socket_mode", "workers", "cpu_affinity",
        "realtime_priority", "log_level", "watchdog", "max_clients", "max_inflight_per_client",
        "slots_per_client", "spin_us", "max_request_bytes", "max_shared_memory_bytes",
        "handshake_timeout_ms", "max_pending_connections", "on_model_error", "control_group",
        "run_as", "run_as_group", "validate_models", "isa_calibration_cache"};
    YAML::Node run_as_node, run_as_group_node;
    for_each_key(d, "daemon", known, [&](const std::string& k, const YAML::Node& v,
                                         const std::string& key) {
      if (k == "endpoint") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (e.empty()) {
          issue(v, key, "must not be empty");
        } else if (e.find('/') == std::string::npos &&
                   e.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_.-") != std::string::npos) {
          issue(v, key, "a name may hold only letters, digits, '_', '.' and '-' (or give a "
                        "socket path containing '/'), got '" + e + "'");
        } else if (e.size() > 100) {
          issue(v, key, "too long for a Unix socket path (at most 100 characters)");
        } else {
          s.endpoint = e;
        }
      } else if (k == "user") {
        std::string u;
        if (!string_value(v, key, u)) return;
        s.user = u;
        if (u.empty()) return;
        if (auto uid = lookup_user(u)) {
          s.uid = *uid;
        } else {
          issue(v, key, "unknown user '" + u + "'");
        }
      } else if (k == "group") {
        group_value(v, key, s.group, s.gid);
      } else if (k == "socket_mode") {
        uint32_t mode = 0;
        if (!integer(v, key, 0, 0777, mode, 8)) return;
        // Owner and group only: others are never let near the socket (the peer-credential check
        // would refuse them anyway, but the file mode keeps them from even connecting), and a
        // socket has no use for execute bits.
        if ((mode & ~0660u) != 0) {
          std::ostringstream os;
          os << "must be 0660 or tighter (read/write for owner and group only), got 0" << std::oct
             << mode;
          issue(v, key, os.str());
          return;
        }
        s.socket_mode = mode;
      } else if (k == "workers") {
        integer(v, key, 1, 64, s.workers);
      } else if (k == "cpu_affinity") {
        s.cpu_affinity.clear();
        if (v.IsNull()) return;
        if (!v.IsSequence()) {
          issue(v, key, "expected a list of CPU numbers, got " + kind(v));
          return;
        }
        for (size_t i = 0; i < v.size(); ++i) {
          int cpu = 0;
          if (integer(v[i], key + "[" + std::to_string(i) + "]", 0, 1023, cpu)) {
            s.cpu_affinity.push_back(cpu);
          }
        }
      } else if (k == "realtime_priority") {
        integer(v, key, 0, 99, s.realtime_priority);
      } else if (k == "log_level") {
        std::string l;
        if (!string_value(v, key, l)) return;
        if (auto lv = parse_log_level(l)) {
          s.log_level = *lv;
        } else {
          issue(v, key, "expected error, warning, notice, info or debug, got '" + l + "'");
        }
      } else if (k == "watchdog") {
        boolean(v, key, s.watchdog);
      } else if (k == "max_clients") {
        integer(v, key, 1, 4096, s.max_clients);
      } else if (k == "max_inflight_per_client") {
        integer(v, key, 1, 64, s.max_inflight_per_client);
      } else if (k == "slots_per_client") {
        integer(v, key, 1, 64, s.slots_per_client);
      } else if (k == "spin_us") {
        integer(v, key, 0, 100000, s.spin_us);
      } else if (k == "max_request_bytes") {
        byte_size(v, key, 1, kTiB, s.max_request_bytes);
      } else if (k == "max_shared_memory_bytes") {
        byte_size(v, key, kMiB, kTiB, s.max_shared_memory_bytes);
      } else if (k == "handshake_timeout_ms") {
        integer(v, key, 100, 60000, s.handshake_timeout_ms);
      } else if (k == "max_pending_connections") {
        integer(v, key, 1, 1024, s.max_pending_connections);
      } else if (k == "control_group") {
        group_value(v, key, s.control_group, s.control_gid);
      } else if (k == "run_as") {
        if (string_value(v, key, s.run_as)) run_as_node = v;
      } else if (k == "run_as_group") {
        if (string_value(v, key, s.run_as_group)) run_as_group_node = v;
      } else if (k == "on_model_error") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (e == "skip" || e == "fail") {
          s.skip_failed_models = e == "skip";
        } else {
          issue(v, key, "expected skip or fail, got '" + e + "'");
        }
      } else if (k == "isa_calibration_cache") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (e == "auto" || e == "off" || (e.size() > 1 && e[0] == '/' && e.back() != '/')) {
          s.isa_calibration_cache = e;
        } else {
          issue(v, key, "expected auto, off or the absolute path of a file, got '" + e + "'");
        }
      } else if (k == "validate_models") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (e == "isolated" || e == "in_process") {
          s.isolated_model_validation = e == "isolated";
        } else {
          issue(v, key, "expected isolated or in_process, got '" + e + "'");
        }
      }
    });
    resolve_run_as(run_as_node, run_as_group_node, s);
  }

  // daemon.run_as must name an account of the user database (its primary group and supplementary
  // groups come from there); run_as_group, a group by name or number, replaces the primary one.
  void resolve_run_as(const YAML::Node& user_node, const YAML::Node& group_node,
                      DaemonSettings& s) {
    if (s.run_as.empty()) {
      if (!s.run_as_group.empty()) {
        issue(group_node, "daemon.run_as_group", "needs daemon.run_as (the user to switch to)");
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
      issue(user_node, "daemon.run_as", "unknown user '" + u + "' (not in the user database)");
      return;
    }
    s.run_as = res->pw_name;  // the name: initgroups() needs it
    s.run_as_uid = res->pw_uid;
    s.run_as_gid = res->pw_gid;
    if (!s.run_as_group.empty()) {
      std::string name = s.run_as_group;
      std::optional<gid_t> gid;
      group_value(group_node, "daemon.run_as_group", name, gid);
      if (gid) s.run_as_gid = *gid;
    }
  }

  void parse_model(const YAML::Node& m, size_t index, Config& cfg,
                   std::vector<std::pair<std::string, YAML::Node>>& names) {
    const std::string where = "models[" + std::to_string(index) + "]";
    if (!m.IsMap()) {
      issue(m, where, "expected a mapping (name, path, ...), got " + kind(m));
      return;
    }
    static const std::vector<std::string> known = {
        "name", "path", "inputs", "max_batch", "batch_delay_us", "priority", "engine", "isa",
        "math", "threads", "required"};
    ModelSettings ms;
    ms.engine_auto = true;  // default `engine: auto`
    ms.engine.engine = EngineKind::kJit;
    bool has_name = false, has_path = false, ok = true;
    const size_t before = issues.size();
    for_each_key(m, where, known, [&](const std::string& k, const YAML::Node& v,
                                      const std::string& key) {
      if (k == "name") has_name = true;  // present, even if invalid (reported below)
      if (k == "path") has_path = true;
      if (k == "name") {
        std::string n;
        if (!string_value(v, key, n)) return;
        if (n.empty() || n.size() >= 64 ||
            n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789_.-") != std::string::npos) {
          issue(v, key, "a model name is 1..63 letters, digits, '_', '.' or '-', got '" + n + "'");
          return;
        }
        ms.name = n;
        names.emplace_back(n, v);
      } else if (k == "path") {
        std::string p;
        if (!string_value(v, key, p)) return;
        if (p.empty()) {
          issue(v, key, "must not be empty");
          return;
        }
        fs::path fp(p);
        if (fp.is_relative()) fp = fs::path(base_dir_) / fp;
        fp = fp.lexically_normal();
        ms.path = fp.string();
        struct stat st {};
        if (::stat(ms.path.c_str(), &st) != 0) {
          issue(v, key, "model file not found: " + ms.path);
        } else if (!S_ISREG(st.st_mode)) {
          issue(v, key, "not a regular file: " + ms.path);
        } else if (::access(ms.path.c_str(), R_OK) != 0) {
          issue(v, key, "model file not readable: " + ms.path);
        }
      } else if (k == "inputs") {
        if (v.IsNull()) return;
        if (!v.IsMap()) {
          issue(v, key, "expected a mapping INPUT_NAME: uint8|float32, got " + kind(v));
          return;
        }
        std::set<std::string> seen;
        for (auto it = v.begin(); it != v.end(); ++it) {
          const std::string in = it->first.IsScalar() ? it->first.Scalar() : std::string();
          const std::string ikey = key + "." + in;
          if (in.empty()) {
            issue(it->first, key, "input names must be plain strings");
            continue;
          }
          if (!seen.insert(in).second) {
            issue(it->first, ikey, "input given twice");
            continue;
          }
          std::string t;
          if (!string_value(it->second, ikey, t)) continue;
          if (t == "uint8") {
            ms.input_dtypes.emplace_back(in, DType::kUInt8);
          } else if (t == "float32") {
            ms.input_dtypes.emplace_back(in, DType::kFloat32);
          } else {
            issue(it->second, ikey, "expected uint8 or float32, got '" + t + "'");
          }
        }
      } else if (k == "max_batch") {
        integer(v, key, 1, 4096, ms.max_batch);
      } else if (k == "batch_delay_us") {
        integer(v, key, 0, 1000000, ms.batch_delay_us);
      } else if (k == "required") {
        boolean(v, key, ms.required);
      } else if (k == "priority") {
        integer(v, key, -1000, 1000, ms.priority);
      } else if (k == "engine") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (e == "auto") {
          ms.engine_auto = true;
          ms.engine.engine = EngineKind::kJit;
        } else if (auto kind = parse_engine_kind(e)) {
          ms.engine_auto = false;
          ms.engine.engine = *kind;
        } else {
          issue(v, key, "expected reference, jit or auto, got '" + e + "'");
        }
      } else if (k == "isa") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (auto isa = parse_isa(e)) {
          ms.engine.isa = *isa;
        } else {
          std::string msg = "unknown ISA '" + e + "'; expected " + isa_choice_list();
          if (auto near = closest_match(e, isa_choice_ids()); !near.empty()) {
            msg += " (did you mean '" + near + "'?)";
          }
          issue(v, key, msg);
        }
      } else if (k == "math") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (auto mm = parse_math_mode(e)) {
          ms.engine.math = *mm;
        } else {
          issue(v, key, "expected exact or fast, got '" + e + "'");
        }
      } else if (k == "threads") {
        std::string e;
        if (!string_value(v, key, e)) return;
        if (auto n = parse_threads(e)) {
          ms.engine.threads = *n;
        } else {
          issue(v, key, "expected auto or a count 1.." + std::to_string(kMaxThreads) + ", got '" + e + "'");
        }
      }
    });
    ok = issues.size() == before;
    if (!has_name && !suggested_.count(where + ".name")) {
      issue(m, where + ".name", "missing (every model needs a name)");
      ok = false;
    }
    if (!has_path && !suggested_.count(where + ".path")) {
      issue(m, where + ".path", "missing (every model needs the path of its model file: .h5, .keras or .onnx)");
      ok = false;
    }
    if (ok) {
      cfg.models.push_back(std::move(ms));
      cfg.model_lines.push_back(m.Mark().line + 1);
    }
  }

  void parse_root(const YAML::Node& root, Config& cfg) {
    if (!root.IsMap()) {
      issue(root, "", "the config must be a mapping with the keys 'daemon' and 'models', got " +
                          kind(root));
      return;
    }
    bool has_models = false;
    for_each_key(root, "", {"daemon", "models"}, [&](const std::string& k, const YAML::Node& v,
                                                     const std::string& key) {
      if (k == "daemon") {
        parse_daemon(v, cfg.daemon);
        return;
      }
      has_models = true;
      if (v.IsNull()) return;  // an empty list is allowed: the daemon then serves nothing
      if (!v.IsSequence()) {
        issue(v, key, "expected a list of models, got " + kind(v));
        return;
      }
      std::vector<std::pair<std::string, YAML::Node>> names;
      for (size_t i = 0; i < v.size(); ++i) parse_model(v[i], i, cfg, names);
      for (size_t i = 0; i < names.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (names[i].first == names[j].first) {
            issue(names[i].second, "models[" + std::to_string(i) + "].name",
                  "duplicate model name '" + names[i].first + "' (first defined on line " +
                      std::to_string(names[j].second.Mark().line + 1) + ")");
            break;
          }
        }
      }
    });
    if (!has_models && !suggested_.count("models")) issue(root, "models", "missing (the list of models to serve)");
  }

  static std::optional<uid_t> lookup_user(const std::string& name) {
    uid_t numeric = 0;
    if (auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), numeric);
        ec == std::errc() && p == name.data() + name.size()) {
      return numeric;
    }
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* res = nullptr;
    if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &res) == 0 && res != nullptr) {
      return res->pw_uid;
    }
    return std::nullopt;
  }

  static std::optional<gid_t> lookup_group(const std::string& name) {
    gid_t numeric = 0;
    if (auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), numeric);
        ec == std::errc() && p == name.data() + name.size()) {
      return numeric;
    }
    std::vector<char> buf(65536);
    struct group gr {};
    struct group* res = nullptr;
    if (::getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res) == 0 && res != nullptr) {
      return res->gr_gid;
    }
    return std::nullopt;
  }

 private:
  std::string base_dir_;
  std::set<std::string> suggested_;  // keys already suggested for a typo: not "missing" again
};

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& source_name,
                    const std::string& base_dir) {
  Config cfg;
  cfg.path = source_name;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    ConfigIssue i;
    if (!e.mark.is_null()) {
      i.line = e.mark.line + 1;
      i.column = e.mark.column + 1;
    }
    i.message = "YAML syntax error: " + e.msg;
    throw ConfigError(source_name, {i});
  }
  Parser p(base_dir);
  try {
    p.parse_root(root, cfg);
  } catch (const YAML::Exception& e) {  // not expected: every access above is type-checked
    ConfigIssue i;
    i.message = std::string("YAML error: ") + e.what();
    p.issues.push_back(i);
  }
  if (!p.issues.empty()) throw ConfigError(source_name, std::move(p.issues));
  return cfg;
}

namespace {

// What load_config reads: the bytes of a regular file of at most kMaxConfigBytes. The config path
// comes from the command line or a unit file and may be anything: a FIFO would block the reader
// (and with it `nnd --check`, a reload and the SIGTERM that waits for that reload), /dev/zero
// would be read until memory runs out, a directory reads as nothing. Each gets its own message.
std::string read_config_bytes(const std::string& path) {
  auto fail = [&](const std::string& why) -> std::string {
    ConfigIssue i;
    i.message = why;
    throw ConfigError(path, {i});
  };
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail("cannot read the config file: " + std::string(std::strerror(errno)));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail("cannot read the config file: fstat: " + std::string(std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return fail("is a directory; give the path of the YAML config file");
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    return fail(std::string("is ") + kind + "; the config must be a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigBytes) {
    return fail("is " + std::to_string(st.st_size) + " bytes; a config may be at most " +
                std::to_string(kMaxConfigBytes) + " bytes");
  }
  std::string text;
  text.resize(static_cast<size_t>(st.st_size) + 1);  // +1 notices a file that grew meanwhile
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read the config file: " + std::string(std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > static_cast<size_t>(st.st_size)) {
    return fail("changed size while it was being read; try again");
  }
  text.resize(got);
  return text;
}

}  // namespace

Config load_config(const std::string& path) {
  const std::string text = read_config_bytes(path);
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  return parse_config(text, path, abs.parent_path().string());
}

}  // namespace nnd::daemon
