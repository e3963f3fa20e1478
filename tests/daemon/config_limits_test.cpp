// Config keys of the daemon's resource limits and access hardening: defaults, byte-count syntax,
// ranges and the socket-mode rule, each error with its key and line.
#include <gtest/gtest.h>

#include <string>

#include "daemon/config/config.h"

using namespace nnd::daemon;

namespace {

Config parse(const std::string& yaml) { return parse_config(yaml, "limits.yaml", "/"); }

// The single issue of `yaml` (line, key, a piece of the message).
void expect_issue(const std::string& yaml, int line, const std::string& key, const std::string& text) {
  try {
    parse(yaml);
    ADD_FAILURE() << "expected a ConfigError for:\n" << yaml;
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    const ConfigIssue& i = e.issues()[0];
    EXPECT_EQ(i.line, line) << e.what();
    EXPECT_EQ(i.key, key) << e.what();
    EXPECT_NE(i.message.find(text), std::string::npos) << e.what();
  }
}

TEST(ConfigLimits, Defaults) {
  const DaemonSettings d = parse("models: []\n").daemon;
  EXPECT_EQ(d.max_request_bytes, 16ull << 20);
  EXPECT_EQ(d.max_shared_memory_bytes, 256ull << 20);
  EXPECT_EQ(d.handshake_timeout_ms, 2000u);
  EXPECT_EQ(d.max_pending_connections, 16u);
  EXPECT_EQ(d.socket_mode, 0660u);
}

TEST(ConfigLimits, ByteCountsTakeBinarySuffixes) {
  const DaemonSettings d = parse(
                               "daemon:\n"
                               "  max_request_bytes: 1536K\n"
                               "  max_shared_memory_bytes: 2G\n"
                               "  handshake_timeout_ms: 500\n"
                               "  max_pending_connections: 4\n"
                               "models: []\n")
                               .daemon;
  EXPECT_EQ(d.max_request_bytes, 1536ull * 1024);
  EXPECT_EQ(d.max_shared_memory_bytes, 2ull << 30);
  EXPECT_EQ(d.handshake_timeout_ms, 500u);
  EXPECT_EQ(d.max_pending_connections, 4u);
  EXPECT_EQ(parse("daemon:\n  max_request_bytes: 4096\nmodels: []\n").daemon.max_request_bytes, 4096u);
  EXPECT_EQ(parse("daemon:\n  max_shared_memory_bytes: 64m\nmodels: []\n").daemon.max_shared_memory_bytes,
            64ull << 20);
}

TEST(ConfigLimits, BadValuesNameKeyAndLine) {
  expect_issue("daemon:\n  workers: 2\n  max_request_bytes: 0\nmodels: []\n", 3, "daemon.max_request_bytes",
               "must be 1..1T bytes, got 0");
  expect_issue("daemon:\n  max_request_bytes: lots\nmodels: []\n", 2, "daemon.max_request_bytes",
               "expected a byte count");
  expect_issue("daemon:\n  max_request_bytes: 12Q\nmodels: []\n", 2, "daemon.max_request_bytes",
               "expected a byte count");
  expect_issue("daemon:\n  max_request_bytes: -5\nmodels: []\n", 2, "daemon.max_request_bytes",
               "expected a byte count");
  expect_issue("daemon:\n  max_shared_memory_bytes: 512K\nmodels: []\n", 2,
               "daemon.max_shared_memory_bytes", "must be 1M..1T bytes, got 512K");
  // 2^64 overflows before and after the suffix: a range error, not a wrap-around.
  expect_issue("daemon:\n  max_shared_memory_bytes: 18446744073709551616\nmodels: []\n", 2,
               "daemon.max_shared_memory_bytes", "must be 1M..1T bytes");
  expect_issue("daemon:\n  max_shared_memory_bytes: 17179869184G\nmodels: []\n", 2,
               "daemon.max_shared_memory_bytes", "must be 1M..1T bytes");
  expect_issue("daemon:\n  handshake_timeout_ms: 50\nmodels: []\n", 2, "daemon.handshake_timeout_ms",
               "must be 100..60000");
  expect_issue("daemon:\n  max_pending_connections: 0\nmodels: []\n", 2,
               "daemon.max_pending_connections", "must be 1..1024");
  expect_issue("daemon:\n  max_pending_conections: 3\nmodels: []\n", 2, "daemon.max_pending_conections",
               "did you mean 'max_pending_connections'");
}

TEST(ConfigLimits, SocketModeIsOwnerAndGroupOnly) {
  for (const char* ok : {"0660", "0640", "0600", "0620", "0000", "660"}) {
    EXPECT_NO_THROW(parse(std::string("daemon:\n  socket_mode: ") + ok + "\nmodels: []\n")) << ok;
  }
  expect_issue("daemon:\n  socket_mode: 0666\nmodels: []\n", 2, "daemon.socket_mode",
               "must be 0660 or tighter (read/write for owner and group only), got 0666");
  expect_issue("daemon:\n  socket_mode: 0770\nmodels: []\n", 2, "daemon.socket_mode", "got 0770");
  expect_issue("daemon:\n  socket_mode: 0662\nmodels: []\n", 2, "daemon.socket_mode", "got 0662");
}

}  // namespace
