// `nnd --check [FILE]`: validates the config, compiles every model as the daemon would (a file
// that crashes a parser is reported, not a crash of the check) and prints the model table.
#pragma once

#include <string>

#include "daemon/service/loading.h"

namespace nnd::daemon {

// Returns the exit status: 0 when everything is fine, 1 on any problem (printed to stderr).
int run_check(const std::string& path, const CliOverrides& o);

}  // namespace nnd::daemon
