// Whether an open file is a regular file whose bytes the daemon may read as a config or a model:
// not a FIFO, device, socket or directory, and not a kernel pseudo-file. Files of /proc, /sys and
// the like stat as regular files of size 0 yet read as text that changes while it is read
// (/proc/self/environ): "the file grew, try again" would never come true, so they are refused
// as what they are.
#pragma once

#include <optional>
#include <string>

namespace nnd::daemon {

// nullopt for a regular file on an ordinary filesystem; else why not, e.g. "a FIFO", "a file of
// the /proc pseudo-filesystem". `fd` is open on the file.
std::optional<std::string> irregular_file_kind(int fd);

}  // namespace nnd::daemon
