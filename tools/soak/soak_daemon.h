// The nnd process under soak: started with a private NND_RUNTIME_DIR and a NOTIFY_SOCKET owned
// by nnd_soak (so READY=1 / RELOADING=1 tell exactly when a start or reload finished), reloaded
// with SIGHUP, killed with SIGKILL and restarted on the same config file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace nnd::soak {

class DaemonProcess {
 public:
  // `dir` must exist; the runtime dir is dir/run, the log dir/nnd.log (appended to by every
  // incarnation).
  DaemonProcess(std::string nnd_exe, std::string dir, std::string endpoint);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Starts nnd --config `config`; true once READY=1 arrived within timeout_ms.
  bool start(const std::string& config, int timeout_ms);
  // SIGHUP, then waits for RELOADING=1 and the READY=1 that ends the reload. Returns false if
  // they did not come; `*failed_reload` is set when nnd reported the reload failed.
  bool reload(int timeout_ms, bool* failed_reload, std::string* status);
  void kill9();
  // SIGTERM and a bounded wait; the exit code, or -1 (signal, timeout: then SIGKILLed).
  int stop(int timeout_ms);
  // False once the process exited (reaps it; exit_description() says how).
  bool alive();

  pid_t pid() const { return pid_; }
  const std::string& runtime_dir() const { return run_dir_; }
  std::string socket_path() const { return run_dir_ + "/" + endpoint_ + ".sock"; }
  std::string log_path() const { return dir_ + "/nnd.log"; }
  const std::string& exit_description() const { return exit_description_; }

 private:
  std::string wait_for(const std::string& what, int timeout_ms);

  std::string exe_, dir_, run_dir_, endpoint_, notify_path_, exit_description_;
  int notify_fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace nnd::soak
