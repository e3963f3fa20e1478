#include "daemon/base/service_unit.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nnd::daemon {

namespace fs = std::filesystem;

namespace {

constexpr const char* kUnit = "nnd.service";

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool truthy(const std::string& v) { return v == "yes" || v == "true" || v == "on" || v == "1"; }

std::vector<std::string> unit_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SYSTEMD_UNIT_PATH"); env && env[0]) {
    std::stringstream ss(env);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty()) dirs.push_back(d);
    }
    return dirs;
  }
  return {"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"};
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Whether `path` is `dir` or lies below it (component-wise: /home2 is not below /home).
bool under(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  if (path == dir) return true;
  const std::string d = dir.back() == '/' ? dir : dir + "/";
  return path.compare(0, d.size(), d) == 0;
}

}  // namespace

void apply_unit_text(const std::string& text, ServiceUnit& unit) {
  std::stringstream ss(text);
  std::string section, line, pending;
  while (std::getline(ss, line)) {
    // A line ending in a backslash continues on the next one.
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    line = trim(pending + line);
    pending.clear();
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    if (section != "[Service]") continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key == "User") {
      unit.user = value;
    } else if (key == "ProtectHome") {
      unit.protect_home = truthy(value) ? "yes" : (value.empty() || value == "no" || value == "false" ||
                                                   value == "off" || value == "0")
                                                      ? "no"
                                                      : value;
    } else if (key == "PrivateTmp") {
      unit.private_tmp = truthy(value);
    } else if (key == "BindPaths" || key == "BindReadOnlyPaths") {
      if (value.empty()) {  // an empty assignment resets the list
        unit.bind_paths.clear();
        continue;
      }
      std::stringstream vs(value);
      for (std::string item; vs >> item;) {
        if (item[0] == '-' || item[0] == '+') item.erase(0, 1);
        // SOURCE[:DESTINATION[:OPTIONS]]: what the daemon sees is the destination (default: the source).
        const size_t c1 = item.find(':');
        std::string dest = item;
        if (c1 != std::string::npos) {
          const size_t c2 = item.find(':', c1 + 1);
          dest = item.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
          if (dest.empty()) dest = item.substr(0, c1);
        }
        if (!dest.empty()) unit.bind_paths.push_back(fs::path(dest).lexically_normal().string());
      }
    }
  }
}

std::optional<ServiceUnit> read_service_unit() {
  std::optional<ServiceUnit> unit;
  const std::vector<std::string> dirs = unit_dirs();
  // The unit file: the first folder that has one wins (/etc overrides /usr/lib).
  for (const std::string& d : dirs) {
    const fs::path p = fs::path(d) / kUnit;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      unit.emplace();
      unit->protect_home = "no";
      unit->source = p.string();
      apply_unit_text(read_file(p), *unit);
      break;
    }
  }
  if (!unit) return unit;
  // Drop-ins of every folder, ordered by file name (a name in an earlier folder hides the same
  // name in a later one).
  std::vector<std::pair<std::string, fs::path>> dropins;
  for (const std::string& d : dirs) {
    const fs::path dir = fs::path(d) / (std::string(kUnit) + ".d");
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() != ".conf") continue;
      const std::string name = e.path().filename().string();
      if (std::none_of(dropins.begin(), dropins.end(), [&](const auto& x) { return x.first == name; })) {
        dropins.emplace_back(name, e.path());
      }
    }
  }
  std::sort(dropins.begin(), dropins.end());
  for (const auto& [name, p] : dropins) {
    apply_unit_text(read_file(p), *unit);
    unit->source += " + " + p.string();
  }
  return unit;
}

std::optional<std::string> hidden_by_unit(const ServiceUnit& unit, const std::string& path) {
  const std::string p = fs::path(path).lexically_normal().string();
  for (const std::string& b : unit.bind_paths) {
    if (under(p, b)) return std::nullopt;
  }
  if (unit.protect_home == "yes" || unit.protect_home == "tmpfs") {
    for (const char* dir : {"/home", "/root", "/run/user"}) {
      if (under(p, dir)) {
        return std::string("nnd.service hides ") + dir + " from the daemon (ProtectHome=" + unit.protect_home + ")";
      }
    }
  }
  if (unit.private_tmp) {
    for (const char* dir : {"/tmp", "/var/tmp"}) {
      if (under(p, dir)) {
        return std::string("nnd.service gives the daemon a private, empty ") + dir + " (PrivateTmp=yes)";
      }
    }
  }
  return std::nullopt;
}

std::string how_to_allow(const std::string& folder) {
  return "move it to a folder the service sees (models: e.g. /usr/local/share/nnd/models), or let "
         "this one in: `systemctl edit nnd`, add the lines `[Service]` and `BindReadOnlyPaths=" +
         folder + "`, then `systemctl restart nnd` (man nnd.yaml, \"Where model files may live\")";
}

}  // namespace nnd::daemon
