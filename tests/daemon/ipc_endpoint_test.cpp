// The endpoint -> socket path rule (ipc/nnd_endpoint.h): one implementation, used by the daemon's
// config, its IPC server and libnnclient, which must therefore agree on every endpoint.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/config/config.h"
#include "daemon/ipc/socket_setup.h"
#include "ipc/nnd_endpoint.h"
#ifdef NND_HAVE_NNCLIENT
#include "client/nnclient_private.h"
#endif

namespace {

namespace fs = std::filesystem;

std::string path_in(const char* endpoint, const char* dir) {
  char out[256];
  const int n = nnd_endpoint_path_in(endpoint, dir, out, sizeof out);
  return n < 0 ? "<error>" : std::string(out);
}

TEST(EndpointRule, RuntimeDirThenSystemDirThenFallback) {
  const fs::path tmp = fs::temp_directory_path() / ("nnd-endpoint-" + std::to_string(getpid()));
  fs::create_directories(tmp / "run-nnd");
  std::ofstream(tmp / "a-file") << "x";
  const std::string sys = (tmp / "run-nnd").string(), file = (tmp / "a-file").string();
  const std::string missing = (tmp / "missing").string();

  EXPECT_STREQ(nnd_endpoint_dir_from("/env/dir", sys.c_str(), "/fb"), "/env/dir");
  EXPECT_STREQ(nnd_endpoint_dir_from("", sys.c_str(), "/fb"), sys.c_str());  // empty = unset
  EXPECT_STREQ(nnd_endpoint_dir_from(nullptr, sys.c_str(), "/fb"), sys.c_str());
  EXPECT_STREQ(nnd_endpoint_dir_from(nullptr, missing.c_str(), "/fb"), "/fb");
  EXPECT_STREQ(nnd_endpoint_dir_from(nullptr, file.c_str(), "/fb"), "/fb");  // not a directory
  fs::remove_all(tmp);
}

TEST(EndpointRule, NameOrPath) {
  EXPECT_EQ(path_in("cam", "/d"), "/d/cam.sock");
  EXPECT_EQ(path_in("a.b-c_1", "/run/nnd"), "/run/nnd/a.b-c_1.sock");
  EXPECT_EQ(path_in("/abs/x.sock", "/d"), "/abs/x.sock");  // a '/' makes it a path
  EXPECT_EQ(path_in("rel/x.sock", "/d"), "rel/x.sock");
  EXPECT_EQ(path_in("./x", "/d"), "./x");
  EXPECT_EQ(path_in("", "/d"), "<error>");
  EXPECT_EQ(path_in(nullptr, "/d"), "<error>");
  // The full length comes back as from snprintf, so callers can size or check their buffer.
  EXPECT_EQ(nnd_endpoint_path_in("camera", "/d", nullptr, 0), 14);
  EXPECT_EQ(nnd_endpoint_path_in("/x/y.sock", "/d", nullptr, 0), 9);
}

// Daemon config, daemon server and client resolve every endpoint the same way.
TEST(EndpointRule, DaemonAndClientAgree) {
  const char* old = getenv("NND_RUNTIME_DIR");
  const std::string saved = old ? old : "";
  for (const char* env : {"/some/dir", "", static_cast<const char*>(nullptr)}) {
    if (env) {
      setenv("NND_RUNTIME_DIR", env, 1);
    } else {
      unsetenv("NND_RUNTIME_DIR");
    }
    for (const char* endpoint : {"nnd", "vision", "/abs/x.sock", "rel/y.sock"}) {
      const std::string config = nnd::daemon::endpoint_socket_path(endpoint);
      EXPECT_EQ(nnd::daemon::socket_path_for_endpoint(endpoint), config) << endpoint;
      char buf[256];
      ASSERT_GE(nnd_endpoint_path(endpoint, buf, sizeof buf), 0);
      EXPECT_EQ(config, buf) << endpoint;
#ifdef NND_HAVE_NNCLIENT
      char client[256];
      ASSERT_EQ(nnclient_resolve_endpoint(endpoint, client, sizeof client), NNCLIENT_OK);
      EXPECT_EQ(config, client) << endpoint;
#endif
    }
  }
  if (old) {
    setenv("NND_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    unsetenv("NND_RUNTIME_DIR");
  }
  EXPECT_EQ(nnd::daemon::endpoint_socket_path(""), "");
  EXPECT_EQ(nnd::daemon::socket_path_for_endpoint(""), "");
}

}  // namespace
