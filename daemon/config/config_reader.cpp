#include "daemon/config/config_reader.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>

namespace nnd::daemon {

void ConfigReader::issue(const YAML::Node& at, const std::string& key, const std::string& message) {
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

void ConfigReader::note_suggested(const std::string& key) { suggested_.insert(key); }

bool ConfigReader::scalar(const YAML::Node& v, const std::string& key, const char* what,
                          std::string& out) {
  if (!v.IsScalar()) {
    issue(v, key, std::string("expected ") + what + ", got " + kind(v));
    return false;
  }
  out = v.Scalar();
  return true;
}

bool ConfigReader::byte_size(const YAML::Node& v, const std::string& key, uint64_t lo, uint64_t hi,
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
    issue(v, key, "expected a byte count (an integer, optionally with K, M, G or T), got " + quote(s));
    return false;
  }
  uint64_t bytes = 0;
  if (ec == std::errc::result_out_of_range || __builtin_mul_overflow(x, unit, &bytes) ||
      bytes < lo || bytes > hi) {
    issue(v, key, "must be " + show(lo) + ".." + show(hi) + " bytes, got " + bare(s));
    return false;
  }
  out = bytes;
  return true;
}

void ConfigReader::group_value(const YAML::Node& v, const std::string& key, std::string& name,
                               std::optional<gid_t>& gid) {
  if (!string_value(v, key, name) || name.empty()) return;
  if (auto g = lookup_group(name)) {
    gid = *g;
  } else {
    issue(v, key, "unknown group " + quote(name));
  }
}

bool ConfigReader::boolean(const YAML::Node& v, const std::string& key, bool& out) {
  std::string s;
  if (!scalar(v, key, "true or false", s)) return false;
  std::string l = s;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "true" || l == "yes" || l == "on") {
    out = true;
  } else if (l == "false" || l == "no" || l == "off") {
    out = false;
  } else {
    issue(v, key, "expected true or false, got " + quote(s));
    return false;
  }
  return true;
}

std::string ConfigReader::kind(const YAML::Node& v) {
  switch (v.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Scalar: return quote(v.Scalar());
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an undefined value";
  }
}

std::string ConfigReader::quote(const std::string& token) { return quote_value(token); }

std::string ConfigReader::bare(const std::string& token) { return bare_value(token); }

std::string ConfigReader::key_path(const std::string& where, const std::string& name) {
  // A key is quoted only when it could be one: a name of letters, digits, '_' and '-'.
  const bool name_like = !name.empty() && name.size() <= kMaxQuotedBytes &&
                         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-") == std::string::npos;
  const std::string shown = name_like ? name : "<a key of " + std::to_string(name.size()) + " bytes>";
  return where.empty() ? shown : where + "." + shown;
}

std::string ConfigReader::range(int64_t lo, int64_t hi, int base) {
  if (base == 8) {
    std::ostringstream os;
    os << std::oct << '0' << lo << "..0" << hi;
    return os.str();
  }
  return std::to_string(lo) + ".." + std::to_string(hi);
}

std::optional<uid_t> ConfigReader::lookup_user(const std::string& name) {
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

std::optional<gid_t> ConfigReader::lookup_group(const std::string& name) {
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

}  // namespace nnd::daemon
