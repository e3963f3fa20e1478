#include "daemon/base/file_kind.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

namespace nnd::daemon {

std::optional<std::string> irregular_file_kind(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;  // the caller's read reports the error
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return std::nullopt;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC: return "a file of the /proc pseudo-filesystem";
    case SYSFS_MAGIC: return "a file of the /sys pseudo-filesystem";
    case DEBUGFS_MAGIC: return "a file of debugfs";
    case TRACEFS_MAGIC: return "a file of tracefs";
    case SECURITYFS_MAGIC: return "a file of securityfs";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC: return "a file of the cgroup pseudo-filesystem";
    case BPF_FS_MAGIC: return "a file of the bpf pseudo-filesystem";
    case EFIVARFS_MAGIC: return "a file of efivarfs";
    default: return std::nullopt;
  }
}

}  // namespace nnd::daemon
