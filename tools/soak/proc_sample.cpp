#include "proc_sample.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

namespace nnd::soak {

std::optional<ProcSample> sample_process(pid_t pid) {
  const std::string base = "/proc/" + std::to_string(pid);
  std::ifstream st(base + "/status");
  if (!st) return std::nullopt;
  ProcSample s;
  bool any = false;
  std::string line;
  while (std::getline(st, line)) {
    long long v = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %lld", &v) == 1) s.vm_rss_kib = v, any = true;
    else if (std::sscanf(line.c_str(), "RssAnon: %lld", &v) == 1) s.rss_anon_kib = v;
    else if (std::sscanf(line.c_str(), "RssFile: %lld", &v) == 1) s.rss_file_kib = v;
    else if (std::sscanf(line.c_str(), "RssShmem: %lld", &v) == 1) s.rss_shmem_kib = v;
  }
  if (!any) return std::nullopt;  // a zombie has no VmRSS
  DIR* d = ::opendir((base + "/fd").c_str());
  if (!d) return std::nullopt;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++s.fds;
    char target[256];
    const std::string link = base + "/fd/" + e->d_name;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n > 0) {
      target[n] = '\0';
      if (std::strstr(target, "memfd:") != nullptr) ++s.memfds;
    }
  }
  ::closedir(d);
  return s;
}

std::set<std::string> list_dir(const std::string& dir) {
  std::set<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.insert(e->d_name);
  }
  ::closedir(d);
  return out;
}

}  // namespace nnd::soak
