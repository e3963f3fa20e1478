// libFuzzer target: the daemon's YAML config parser and validator (parse_config). Input: the
// YAML text. Expected outcome: a Config, or ConfigError listing the problems. Relative model
// paths resolve against the source tree's config/ folder (NND_FUZZ_CONFIG_DIR), as for the
// default config/nnd.yaml, so the seeds' model paths exist; user/group names go through the
// system's NSS lookup.
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/config/config.h"
#include "tests/fuzz/fuzz_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    nnd::daemon::Config cfg = nnd::daemon::parse_config(text, "fuzz.yaml", NND_FUZZ_CONFIG_DIR);
    // Every accepted model must have come out with the limits the schema promises.
    for (const auto& m : cfg.models) {
      if (m.name.empty() || m.max_batch < 1 || m.max_batch > 4096) __builtin_trap();
    }
    nnd::fuzz::report("accepted");
  } catch (const nnd::daemon::ConfigError& e) {
    nnd::fuzz::report(e.what());
    // Every issue must render (file:line:col: key: message) without throwing.
    for (const auto& i : e.issues()) (void)i.to_string(e.file());
  }
  return 0;
}
