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

#include "daemon/config/config_sections.h"
#include "ipc/nnd_endpoint.h"

namespace nnd::daemon {

namespace fs = std::filesystem;

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

}  // namespace

ConfigError::ConfigError(std::string file, std::vector<ConfigIssue> issues)
    : DaemonError(DaemonErrorCode::kConfig, join_issues(file, issues)), file_(std::move(file)),
      issues_(std::move(issues)) {}

std::string endpoint_socket_path(const std::string& endpoint) {
  return nnd_endpoint_path_string(endpoint);  // the rule is ipc/nnd_endpoint.h's
}

std::string isa_calibration_cache_path(const std::string& setting) {
  if (setting == "off") return "";
  if (setting != "auto") return setting;
  return default_isa_cache_path();  // the file nnrun, nnbench and nninfo use too (core/engine)
}

namespace {

void parse_root(ConfigReader& r, const YAML::Node& root, const std::string& base_dir, Config& cfg) {
  if (!root.IsMap()) {
    // Not quoted, whatever its size: a file that is no mapping at all is not a config (a config
    // path pointing at /etc/shadow must not bring its lines to the journal).
    const std::string got = root.IsScalar() ? "a single value of " + std::to_string(root.Scalar().size()) + " bytes"
                                            : ConfigReader::kind(root);
    r.issue(root, "", "the config must be a mapping with the keys 'daemon' and 'models', got " + got);
    return;
  }
  bool has_models = false;
  r.for_each_key(root, "", {"daemon", "models"}, [&](const std::string& k, const YAML::Node& v,
                                                     const std::string& key) {
    if (k == "daemon") {
      parse_daemon_section(r, v, cfg.daemon);
    } else {
      has_models = true;
      parse_models_section(r, v, key, base_dir, cfg);
    }
  });
  if (!has_models && !r.suggested("models")) r.issue(root, "models", "missing (the list of models to serve)");
}

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
  ConfigReader p;
  try {
    parse_root(p, root, base_dir, cfg);
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
