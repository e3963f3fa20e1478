#include "core/jit/isa_calibration_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace nnd::jit {
namespace {

constexpr const char* kHeader = "nnd-isa-calibration 1";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// The CPU field may not hold the separators of the format.
std::string field_safe(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string format_line(const IsaCalibrationEntry& e) {
  std::string s = field_safe(e.key.cpu);
  s += '\t';
  s += hex64(e.key.network);
  s += '\t';
  s += std::to_string(e.key.batch);
  s += '\t';
  s += math_mode_name(e.key.math);
  s += '\t';
  s += isa_id(e.isa);
  s += '\t';
  char buf[64];
  for (size_t i = 0; i < e.timings.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%s=%.2f", i ? "," : "", isa_id(e.timings[i].isa), e.timings[i].min_us);
    s += buf;
  }
  return s;
}

// One line back into an entry; nullopt when any field is malformed.
std::optional<IsaCalibrationEntry> parse_line(const std::string& line) {
  const std::vector<std::string> f = split(line, '\t');
  if (f.size() != 6 || f[0].empty()) return std::nullopt;
  IsaCalibrationEntry e;
  e.key.cpu = f[0];
  if (f[1].size() != 16 || f[1].find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  e.key.network = std::stoull(f[1], nullptr, 16);
  if (f[2].empty() || f[2].size() > 9 || f[2].find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  e.key.batch = std::stoll(f[2]);
  const std::optional<MathMode> math = parse_math_mode(f[3]);
  const std::optional<Isa> isa = isa_from_id(f[4]);
  if (!math || !isa || e.key.batch < 1) return std::nullopt;
  e.key.math = *math;
  e.isa = *isa;
  for (const std::string& item : split(f[5], ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::optional<Isa> t_isa = isa_from_id(item.substr(0, eq));
    char* end = nullptr;
    const std::string num = item.substr(eq + 1);
    const double us = std::strtod(num.c_str(), &end);
    if (!t_isa || num.empty() || *end != '\0' || !(us >= 0)) return std::nullopt;
    IsaTiming t;
    t.isa = *t_isa;
    t.min_us = us;
    t.median_us = us;
    e.timings.push_back(t);
  }
  return e;
}

bool same_key(const IsaCalibrationKey& a, const IsaCalibrationKey& b) {
  return field_safe(a.cpu) == field_safe(b.cpu) && a.network == b.network && a.batch == b.batch && a.math == b.math;
}

// Holds an exclusive flock() on "<path>.lock" for its lifetime (no lock if it cannot be opened:
// the store then still works, only not serialised).
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

struct Remembered {
  std::string cache_path;
  IsaCalibrationEntry entry;
};

std::mutex& remembered_mutex() {
  static std::mutex m;
  return m;
}

std::vector<Remembered>& remembered() {  // oldest first
  static std::vector<Remembered> v;
  return v;
}

}  // namespace

std::optional<IsaCalibrationEntry> remembered_isa_choice(const std::string& cache_path, const IsaCalibrationKey& key) {
  const std::lock_guard<std::mutex> lock(remembered_mutex());
  for (const Remembered& r : remembered()) {
    if (r.cache_path == cache_path && same_key(r.entry.key, key)) return r.entry;
  }
  return std::nullopt;
}

void remember_isa_choice(const std::string& cache_path, const IsaCalibrationEntry& e) {
  const std::lock_guard<std::mutex> lock(remembered_mutex());
  std::vector<Remembered>& v = remembered();
  std::erase_if(v, [&](const Remembered& r) { return r.cache_path == cache_path && same_key(r.entry.key, e.key); });
  v.push_back({cache_path, e});
  if (v.size() > kMaxRemembered) v.erase(v.begin());
}

std::vector<IsaCalibrationEntry> IsaCalibrationCache::read_all(std::vector<std::string>* warnings) const {
  std::vector<IsaCalibrationEntry> out;
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) return out;  // the first start: nothing measured yet
  std::ifstream in(path_);
  if (!in) {
    warnings->push_back("ISA calibration cache " + path_ + ": cannot be read (" + std::strerror(errno) + "); measuring instead");
    return out;
  }
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    warnings->push_back("ISA calibration cache " + path_ + ": not a calibration cache (first line is not '" + kHeader +
                        "'); ignoring it, it is rewritten at the next store");
    return out;
  }
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    if (std::optional<IsaCalibrationEntry> e = parse_line(line)) {
      out.push_back(std::move(*e));
    } else {
      warnings->push_back("ISA calibration cache " + path_ + ":" + std::to_string(number) +
                          ": malformed entry, ignored (dropped at the next store)");
    }
  }
  return out;
}

std::optional<IsaCalibrationEntry> IsaCalibrationCache::lookup(const IsaCalibrationKey& key,
                                                               std::vector<std::string>* warnings) const {
  std::optional<IsaCalibrationEntry> found;
  for (IsaCalibrationEntry& e : read_all(warnings)) {
    if (same_key(e.key, key)) found = std::move(e);  // the last one wins, as store() leaves one
  }
  return found;
}

bool IsaCalibrationCache::store(const IsaCalibrationEntry& e, std::vector<std::string>* warnings) const {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const FileLock lock(path_);
  std::vector<std::string> read_warnings;  // already reported by lookup() before measuring
  std::vector<IsaCalibrationEntry> entries = read_all(&read_warnings);
  std::erase_if(entries, [&](const IsaCalibrationEntry& x) { return same_key(x.key, e.key); });
  entries.push_back(e);
  if (entries.size() > kMaxEntries) entries.erase(entries.begin(), entries.end() - static_cast<std::ptrdiff_t>(kMaxEntries));
  std::ostringstream text;
  text << kHeader << "\n";
  for (const IsaCalibrationEntry& x : entries) text << format_line(x) << "\n";
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      std::filesystem::remove(tmp, ec);
      warnings->push_back("ISA calibration cache " + path_ + ": cannot be written (" + why +
                          "); the choice is measured again at the next start");
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::filesystem::remove(tmp, ec);
    warnings->push_back("ISA calibration cache " + path_ + ": cannot be replaced (" + why +
                        "); the choice is measured again at the next start");
    return false;
  }
  return true;
}

}  // namespace nnd::jit
