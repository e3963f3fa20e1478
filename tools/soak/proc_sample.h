// Resource figures of a process read from /proc: resident memory split as the kernel reports it
// (anonymous, file-backed, shared memory) and its open descriptors, memfd segments among them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace nnd::soak {

struct ProcSample {
  int64_t vm_rss_kib = 0;     // VmRSS = RssAnon + RssFile + RssShmem
  int64_t rss_anon_kib = 0;
  int64_t rss_file_kib = 0;
  int64_t rss_shmem_kib = 0;  // mapped memfd segments of connected clients, mostly
  int fds = 0;                // entries of /proc/pid/fd
  int memfds = 0;             // of those, links to "/memfd:..."
  // The memory a leak would grow: RSS without the clients' shared segments, which come and go
  // with client connections and are accounted for by the memfd count instead.
  int64_t private_kib() const { return rss_anon_kib + rss_file_kib; }
};

// nullopt if the process is gone (or /proc is unreadable).
std::optional<ProcSample> sample_process(pid_t pid);

// Names in a directory ({} if it does not exist).
std::set<std::string> list_dir(const std::string& dir);

}  // namespace nnd::soak
