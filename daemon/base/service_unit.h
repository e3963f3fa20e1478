// What the installed nnd.service says about the daemon's view of the filesystem: the user it runs
// as (User=) and the folders its sandbox hides (ProtectHome= hides /home, /root and /run/user;
// PrivateTmp= gives it an empty /tmp and /var/tmp of its own), minus those the operator let back
// in (BindPaths=, BindReadOnlyPaths=). `nnd --check` uses it to check model files as the service
// will see them, and the config's "model file not found" says when the sandbox is the reason.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nnd::daemon {

struct ServiceUnit {
  std::string source;        // where the settings came from: the unit file (and drop-ins) read
  std::string user;          // User= ("" when the unit sets none: root)
  std::string protect_home;  // ProtectHome= value ("no" when unset)
  bool private_tmp = false;  // PrivateTmp=
  std::vector<std::string> bind_paths;  // BindPaths= and BindReadOnlyPaths= sources
};

// Reads nnd.service and its drop-ins (nnd.service.d/*.conf) from systemd's unit folders
// (/etc/systemd/system, /run/systemd/system, /usr/lib/systemd/system, /lib/systemd/system; or the
// colon-separated folders of $SYSTEMD_UNIT_PATH, as systemd itself honours it), later drop-ins
// overriding earlier ones. nullopt when no nnd.service is installed.
std::optional<ServiceUnit> read_service_unit();

// Parses unit-file text into `unit` (the [Service] keys above; others are ignored). Exposed for
// tests and for drop-ins, which are applied on top of the main file.
void apply_unit_text(const std::string& text, ServiceUnit& unit);

// When `path` (absolute) lies in a folder the unit hides from the daemon and no Bind*Paths= lets
// it back in: the reason, naming the folder and the setting, e.g. "nnd.service hides /home from
// the daemon (ProtectHome=yes)". nullopt when the daemon sees the path as the host does.
std::optional<std::string> hidden_by_unit(const ServiceUnit& unit, const std::string& path);

// How to let one folder back in, for messages and docs: "`systemctl edit nnd`, then [Service]
// BindReadOnlyPaths=<folder>" (and for /tmp, to move the file instead).
std::string how_to_allow(const std::string& folder);

}  // namespace nnd::daemon
