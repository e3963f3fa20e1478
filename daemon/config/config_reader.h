// The YAML value reader the config's sections share: it turns nodes into settings, checking
// each against its type and range, and collects every problem as a ConfigIssue with the node's
// line, column and dotted key. The sections (daemon_section.cpp, models_section.cpp) say which
// keys exist and what each means; this file says how a value of each kind is read.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/util/closest_match.h"
#include "core/util/quote_value.h"
#include "daemon/config/config.h"

namespace nnd::daemon {

class ConfigReader {
 public:
  static constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;

  std::vector<ConfigIssue> issues;

  // Records a problem at `at` (its line and column when it has them).
  void issue(const YAML::Node& at, const std::string& key, const std::string& message);

  // Iterates a mapping, reporting unknown and duplicate keys; calls `fn(key, value_node,
  // key_path)` for the known ones.
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
      const std::string path = key_path(where, name);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string msg = "unknown key";
        if (const std::string near = closest_match(name, known); !near.empty()) {
          msg += " (did you mean " + quote(near) + "?)";
          note_suggested((where.empty() ? "" : where + ".") + near);
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

  // A scalar of any content (`what` names the expected kind in the message).
  bool scalar(const YAML::Node& v, const std::string& key, const char* what, std::string& out);
  bool string_value(const YAML::Node& v, const std::string& key, std::string& out) {
    return scalar(v, key, "a string", out);
  }

  // An integer in lo..hi (base 8: octal, as socket_mode is written).
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
      issue(v, key, "must be " + range(lo, hi, base) + ", got " + bare(s));
      return false;
    }
    if (ec != std::errc() || p != e || b == e) {
      issue(v, key, std::string("expected an integer") + (base == 8 ? " (octal)" : "") +
                        ", got " + quote(s));
      return false;
    }
    if (x < lo || x > hi) {
      issue(v, key, "must be " + range(lo, hi, base) + ", got " + bare(s));
      return false;
    }
    out = static_cast<T>(x);
    return true;
  }

  // A byte count: an integer with an optional binary suffix K, M, G or T (so `256M` is 256 MiB).
  bool byte_size(const YAML::Node& v, const std::string& key, uint64_t lo, uint64_t hi,
                 uint64_t& out);
  // A group by name or number: `name` as written, `gid` resolved (left unset when empty).
  void group_value(const YAML::Node& v, const std::string& key, std::string& name,
                   std::optional<gid_t>& gid);
  bool boolean(const YAML::Node& v, const std::string& key, bool& out);

  // How a node of the wrong type is described in a message.
  static std::string kind(const YAML::Node& v);
  // A value or key as a message quotes it (core/util/quote_value.h): 'token' when it is one
  // short printable line, else only its size. A config path may name any file (the config is
  // read as root at start): text that did not parse as the schema is never repeated in full.
  static constexpr size_t kMaxQuotedBytes = nnd::kMaxQuotedBytes;
  static std::string quote(const std::string& token);
  static std::string bare(const std::string& token);  // the same without the quotes
  // "where.name" for a key (a key that is no name -- long, or with other characters than
  // letters, digits, '_' and '-' -- is named by its size).
  static std::string key_path(const std::string& where, const std::string& name);
  // "lo..hi" (octal with base 8).
  static std::string range(int64_t lo, int64_t hi, int base);
  // A user or group by name or number (nullopt: not in the database).
  static std::optional<uid_t> lookup_user(const std::string& name);
  static std::optional<gid_t> lookup_group(const std::string& name);

  // Whether `key` was already suggested for a typo (then it is not reported missing as well).
  bool suggested(const std::string& key) const { return suggested_.count(key) != 0; }

 private:
  void note_suggested(const std::string& key);
  std::set<std::string> suggested_;  // keys already suggested for a typo: not "missing" again
};

}  // namespace nnd::daemon
