// The `models:` section: one ModelSettings per entry (config/SCHEMA.md documents each key), model
// names unique.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string_view>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/base/file_kind.h"
#include "daemon/base/service_unit.h"
#include "daemon/config/config_sections.h"

namespace nnd::daemon {

namespace {

namespace fs = std::filesystem;

// "model file not found: PATH", and why when the service's sandbox is the reason (the daemon runs
// in nnd.service, whose ProtectHome=/PrivateTmp= hide /home and /tmp from it).
std::string not_found(const std::string& path) {
  std::string msg = "model file not found: " + path;
  static const std::optional<ServiceUnit> unit = read_service_unit();
  if (unit) {
    if (const auto hidden = hidden_by_unit(*unit, path)) {
      msg += " (" + *hidden + "; " + how_to_allow(fs::path(path).parent_path().string()) + ")";
    }
  }
  return msg;
}

// "model file not readable by user 'nnd' (uid 104): PATH": whom the check ran as, which is the
// daemon's own user when it validates a reload.
std::string not_readable(const std::string& path) {
  struct passwd pw {}, *res = nullptr;
  char buf[4096];
  const uid_t uid = ::geteuid();
  const std::string who = ::getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res
                              ? "user '" + std::string(res->pw_name) + "' (uid " + std::to_string(uid) + ")"
                              : "uid " + std::to_string(uid);
  return "model file not readable by " + who + ": " + path;
}

// A model's name as written, for the duplicate check.
struct NamedEntry {
  std::string name;
  YAML::Node node;
  size_t index = 0;  // models[index]
};

void parse_model(ConfigReader& r, const YAML::Node& m, size_t index, const std::string& base_dir, Config& cfg,
                 std::vector<NamedEntry>& names) {
  const std::string where = "models[" + std::to_string(index) + "]";
  if (!m.IsMap()) {
    r.issue(m, where, "expected a mapping (name, path, ...), got " + ConfigReader::kind(m));
    return;
  }
  static const std::vector<std::string> known = {
      "name", "path", "inputs", "max_batch", "batch_delay_us", "priority", "engine", "isa",
      "math", "threads", "precision", "required"};
  ModelSettings ms;
  ms.options.engine_auto = true;  // default `engine: auto`
  ms.options.engine.engine = EngineKind::kJit;
  bool has_name = false, has_path = false, ok = true;
  const size_t before = r.issues.size();
  r.for_each_key(m, where, known, [&](const std::string& k, const YAML::Node& v,
                                    const std::string& key) {
    if (k == "name") has_name = true;  // present, even if invalid (reported below)
    if (k == "path") has_path = true;
    if (k == "name") {
      std::string n;
      if (!r.string_value(v, key, n)) return;
      if (n.empty() || n.size() >= 64 ||
          n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "0123456789_.-") != std::string::npos) {
        r.issue(v, key, "a model name is 1..63 letters, digits, '_', '.' or '-', got " + ConfigReader::quote(n));
        return;
      }
      ms.name = n;
      names.push_back({n, v, index});
    } else if (k == "path") {
      std::string p;
      if (!r.string_value(v, key, p)) return;
      if (p.empty()) {
        r.issue(v, key, "must not be empty");
        return;
      }
      fs::path fp(p);
      if (fp.is_relative()) fp = fs::path(base_dir) / fp;
      fp = fp.lexically_normal();
      ms.path = fp.string();
      struct stat st {};
      if (::stat(ms.path.c_str(), &st) != 0) {
        r.issue(v, key, not_found(ms.path));
      } else if (!S_ISREG(st.st_mode)) {
        r.issue(v, key, "not a regular file: " + ms.path);
      } else if (::access(ms.path.c_str(), R_OK) != 0) {
        r.issue(v, key, not_readable(ms.path));
      } else if (const int fd = ::open(ms.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC); fd >= 0) {
        if (const auto kind = irregular_file_kind(fd)) {
          r.issue(v, key, "not a regular file: " + ms.path + " is " + *kind);
        }
        ::close(fd);
      }
    } else if (k == "inputs") {
      if (v.IsNull()) return;
      if (!v.IsMap()) {
        r.issue(v, key, "expected a mapping INPUT_NAME: uint8|float32, got " + ConfigReader::kind(v));
        return;
      }
      std::set<std::string> seen;
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string in = it->first.IsScalar() ? it->first.Scalar() : std::string();
        const std::string ikey = key + "." + in;
        if (in.empty()) {
          r.issue(it->first, key, "input names must be plain strings");
          continue;
        }
        if (!seen.insert(in).second) {
          r.issue(it->first, ikey, "input given twice");
          continue;
        }
        std::string t;
        if (!r.string_value(it->second, ikey, t)) continue;
        if (const std::string problem = apply_model_option(ms.options, "inputs." + in, t); !problem.empty()) {
          r.issue(it->second, ikey, problem);
        }
      }
    } else if (k == "max_batch") {
      r.integer(v, key, 1, 4096, ms.max_batch);
    } else if (k == "batch_delay_us") {
      r.integer(v, key, 0, 1000000, ms.batch_delay_us);
    } else if (k == "required") {
      r.boolean(v, key, ms.required);
    } else if (k == "priority") {
      r.integer(v, key, -1000, 1000, ms.priority);
    } else {
      // engine, isa, math, threads, precision: spelt, checked and explained as libnnd does.
      std::string text;
      if (!r.string_value(v, key, text)) return;
      if (const std::string problem = apply_model_option(ms.options, k, text); !problem.empty()) {
        r.issue(v, key, problem);
      }
    }
  });
  ok = r.issues.size() == before;
  if (!has_name && !r.suggested(where + ".name")) {
    r.issue(m, where + ".name", "missing (every model needs a name)");
    ok = false;
  }
  if (!has_path && !r.suggested(where + ".path")) {
    r.issue(m, where + ".path", "missing (every model needs the path of its model file: .h5, .keras or .onnx)");
    ok = false;
  }
  if (ok) {
    cfg.models.push_back(std::move(ms));
    cfg.model_lines.push_back(m.Mark().line + 1);
  }
}

}  // namespace

void parse_models_section(ConfigReader& r, const YAML::Node& v, const std::string& key,
                          const std::string& base_dir, Config& cfg) {
  if (v.IsNull()) return;  // an empty list is allowed: the daemon then serves nothing
  if (!v.IsSequence()) {
    r.issue(v, key, "expected a list of models, got " + ConfigReader::kind(v));
    return;
  }
  if (v.size() > kMaxModels) {
    // Before any entry is parsed: a config of thousands of models would take longer to compile
    // than systemd waits for the start (TimeoutStartSec), and each entry costs a file check.
    r.issue(v, key, std::to_string(v.size()) + " models; a config may list at most " +
                        std::to_string(kMaxModels));
    return;
  }
  std::vector<NamedEntry> names;
  for (size_t i = 0; i < v.size(); ++i) parse_model(r, v[i], i, base_dir, cfg, names);
  // Duplicates in one pass (a quadratic check took 22 s for 140,000 names).
  std::unordered_map<std::string_view, const YAML::Node*> first;
  first.reserve(names.size());
  for (const NamedEntry& e : names) {
    const auto [it, fresh] = first.emplace(e.name, &e.node);
    if (!fresh) {
      r.issue(e.node, "models[" + std::to_string(e.index) + "].name",
              "duplicate model name '" + e.name + "' (first defined on line " +
                  std::to_string(it->second->Mark().line + 1) + ")");
    }
  }
}

}  // namespace nnd::daemon
