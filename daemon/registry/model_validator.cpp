#include "daemon/registry/model_validator.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <string_view>
#include <vector>

#include "core/io/model_file.h"
#include "core/util/error.h"
#include "daemon/registry/model_memory.h"

extern char** environ;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NND_VALIDATOR_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NND_VALIDATOR_SANITIZED 1
#endif
#endif

namespace nnd::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// The report line's prefix: whatever else the child prints (a C library's abort message) is
// told apart from the verdict by it.
constexpr std::string_view kReportPrefix = "nnd-validate: ";
// The parent keeps at most this much of what the child prints (the end of it).
constexpr size_t kMaxOutputBytes = 64 << 10;
// Largest model file the daemon reads (the ONNX loader's limit; .h5 and .keras stay far below).
constexpr uint64_t kMaxModelFileBytes = uint64_t{2} << 30;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A report is one line: newlines and backslashes in a message are escaped.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// ---- the parent's side -------------------------------------------------------------------------

// posix_spawn's dup2 of a descriptor onto itself would keep its close-on-exec flag; descriptors
// 0..2 are only ours when the daemon was started with them closed. Moves such a one up.
class HighFd {
 public:
  explicit HighFd(int fd) : fd_(fd) {
    if (fd_ >= 0 && fd_ <= 2) {
      owned_ = ::fcntl(fd_, F_DUPFD_CLOEXEC, 3);
      fd_ = owned_;
    }
  }
  ~HighFd() {
    if (owned_ >= 0) ::close(owned_);
  }
  HighFd(const HighFd&) = delete;
  HighFd& operator=(const HighFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
  int owned_ = -1;
};

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnActions() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnActions() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

// What the child printed, split into its report and the rest.
struct ChildOutput {
  bool reported = false;
  std::string word;  // "valid" | "invalid"
  std::string text;  // the message after the word
  std::string last_words;
};

ChildOutput parse_output(const std::string& out) {
  ChildOutput r;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string_view line(out.data() + start, end - start);
    start = end + 1;
    if (line.substr(0, kReportPrefix.size()) == kReportPrefix) {
      line.remove_prefix(kReportPrefix.size());
      const size_t sp = line.find(' ');
      r.reported = true;
      r.word = std::string(line.substr(0, sp));
      r.text = sp == std::string_view::npos ? "" : unescape(line.substr(sp + 1));
    } else if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      r.last_words = std::string(line.substr(0, 300));
    }
  }
  return r;
}

uint64_t address_space_limit(const ValidatorOptions& o, size_t file_bytes) {
#ifdef NND_VALIDATOR_SANITIZED
  (void)o;
  (void)file_bytes;
  return 0;
#else
  if (o.address_space_base_bytes == 0) return 0;
  return o.address_space_base_bytes + uint64_t{o.address_space_per_file_byte} * file_bytes;
#endif
}

// The child's environment: the daemon's own (libhdf5 reads a few variables; the child must parse
// as the daemon will). In sanitizer builds the sanitizers would catch a crash themselves and exit
// with a status of their own (ASan 1, TSan 66); there the child lets the kernel deliver deadly
// signals and aborts on any other sanitizer report, so that every finding reads as a crash, as
// it would in a release build, with the report's summary as its last words. Leak checking is off
// in the child: it exits right after the parse, and the daemon's own leaks are still checked.
class ChildEnvironment {
 public:
  ChildEnvironment() {
#ifdef NND_VALIDATOR_SANITIZED
    static const char* const kTools[] = {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"};
    for (const char* tool : kTools) {
      const char* old = std::getenv(tool);
      owned_.push_back(std::string(tool) + "=" + (old ? std::string(old) + ":" : "") +
                       "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                       "abort_on_error=1:detect_leaks=0");
    }
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view var = *e;
      if (std::none_of(std::begin(kTools), std::end(kTools), [&](const char* tool) {
            return var.substr(0, var.find('=')) == tool;
          })) {
        envp_.push_back(*e);
      }
    }
    for (std::string& v : owned_) envp_.push_back(v.data());
    envp_.push_back(nullptr);
#endif
  }
  char** get() { return envp_.empty() ? environ : envp_.data(); }

 private:
  std::vector<std::string> owned_;
  std::vector<char*> envp_;
};

}  // namespace

std::string self_executable() {
  static const char kSelf[] = "/proc/self/exe";
  char buf[4096];
  const ssize_t n = ::readlink(kSelf, buf, sizeof buf - 1);
  if (n <= 0) return kSelf;
  const std::string path(buf, static_cast<size_t>(n));
  struct stat self {}, named {};
  // A replaced binary reads "/usr/sbin/nnd (deleted)", which stat() does not find: kSelf.
  if (::stat(kSelf, &self) == 0 && ::stat(path.c_str(), &named) == 0 &&
      (self.st_dev != named.st_dev || self.st_ino != named.st_ino)) {
    return path;
  }
  return kSelf;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

ValidationVerdict validate_in_child(const SealedFile& file, const std::string& name,
                                    const ValidatorOptions& options) {
  const auto t0 = Clock::now();
  ValidationVerdict v;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    v.error = std::string("pipe2: ") + std::strerror(errno);
    return v;
  }
  int read_fd = pipe_fds[0];
  pid_t pid = -1;
  const std::string exe = options.executable.empty() ? self_executable() : options.executable;
  {
    HighFd model(file.fd()), report(pipe_fds[1]);
    SpawnActions sa;
    posix_spawn_file_actions_adddup2(&sa.actions, model.get(), 0);
    posix_spawn_file_actions_adddup2(&sa.actions, report.get(), 1);
    posix_spawn_file_actions_adddup2(&sa.actions, report.get(), 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors the daemon holds without close-on-exec (none should) stay out of the child.
    posix_spawn_file_actions_addclosefrom_np(&sa.actions, 3);
#endif
    // The daemon blocks SIGHUP/SIGTERM/SIGINT (signalfd) and ignores SIGPIPE; both would survive
    // the exec. The child gets every signal unblocked and at its default action.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(&sa.attr, &none);
    posix_spawnattr_setsigdefault(&sa.attr, &all);
    posix_spawnattr_setflags(&sa.attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    ChildEnvironment env;
    const std::string cpu = std::to_string(options.cpu_seconds);
    const std::string as = std::to_string(address_space_limit(options, file.size()));
    const std::string mem = std::to_string(options.max_model_memory_bytes);
    const std::string batch = std::to_string(options.max_batch);
    std::vector<char*> argv = {const_cast<char*>(exe.c_str()),
                               const_cast<char*>(kValidateModelFlag),
                               const_cast<char*>(name.c_str()),
                               const_cast<char*>("--cpu-seconds"),
                               const_cast<char*>(cpu.c_str()),
                               const_cast<char*>("--max-address-space"),
                               const_cast<char*>(as.c_str()),
                               const_cast<char*>("--max-model-memory"),
                               const_cast<char*>(mem.c_str()),
                               const_cast<char*>("--max-batch"),
                               const_cast<char*>(batch.c_str()),
                               nullptr};
    const int rc = (model.get() < 0 || report.get() < 0)
                       ? EMFILE
                       : ::posix_spawn(&pid, exe.c_str(), &sa.actions, &sa.attr,
                                       argv.data(), env.get());
    ::close(pipe_fds[1]);  // the child's copy is the only writer left: EOF when it exits
    if (rc != 0) {
      ::close(read_fd);
      v.error = "cannot start " + exe + ": " + std::strerror(rc);
      v.wall_ms = ms_since(t0);
      return v;
    }
  }

  // Collect what the child prints until it exits or the timeout passes.
  const auto deadline = t0 + std::chrono::milliseconds(options.timeout_ms);
  std::string out;
  bool pipe_open = true, timed_out = false;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      v.error = std::string("waitpid: ") + std::strerror(errno);
      break;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      timed_out = true;
      break;
    }
    const int left_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1);
    if (!pipe_open) {
      // EOF came: the child is exiting; reap it within a millisecond or two.
      ::usleep(500);
      continue;
    }
    // Wake on output or EOF; every 50 ms in any case, to notice a child that exited while
    // something else (which it could only have spawned itself) still holds the pipe.
    struct pollfd p {read_fd, POLLIN, 0};
    const int n = ::poll(&p, 1, std::min(left_ms, 50));
    if (n <= 0) continue;
    char buf[4096];
    const ssize_t got = ::read(read_fd, buf, sizeof buf);
    if (got > 0) {
      out.append(buf, static_cast<size_t>(got));
      if (out.size() > 2 * kMaxOutputBytes) out.erase(0, out.size() - kMaxOutputBytes);
    } else if (got == 0 || errno != EINTR) {
      pipe_open = false;
    }
  }
  // The child is gone; whatever it wrote last is still in the pipe.
  int fl = ::fcntl(read_fd, F_GETFL);
  if (fl >= 0) ::fcntl(read_fd, F_SETFL, fl | O_NONBLOCK);
  for (char buf[4096];;) {
    const ssize_t got = ::read(read_fd, buf, sizeof buf);
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
  }
  if (out.size() > kMaxOutputBytes) out.erase(0, out.size() - kMaxOutputBytes);
  ::close(read_fd);
  v.wall_ms = ms_since(t0);
  if (!v.error.empty()) return v;

  const ChildOutput co = parse_output(out);
  v.last_words = co.last_words;
  if (timed_out) {
    v.outcome = ValidationVerdict::Outcome::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    // Even after a "valid" report: a parser that corrupted the heap may only crash on the way
    // out, and that file is no more welcome in the daemon.
    v.outcome = ValidationVerdict::Outcome::kCrashed;
    v.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && co.reported && co.word == "valid") {
    v.outcome = ValidationVerdict::Outcome::kValid;
    v.summary = co.text;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 1 && co.reported &&
             (co.word == "invalid" || co.word == "too-large")) {
    v.outcome = co.word == "invalid" ? ValidationVerdict::Outcome::kInvalid : ValidationVerdict::Outcome::kTooLarge;
    v.error = co.text;
  } else {
    v.outcome = ValidationVerdict::Outcome::kFailedToRun;
    v.error = "the validator exited with status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " without a verdict";
  }
  return v;
}

std::string validation_failure_message(const ValidationVerdict& v, const std::string& path,
                                       const ValidatorOptions& options) {
  const std::string said = v.last_words.empty() ? "" : " (it said: " + v.last_words + ")";
  switch (v.outcome) {
    case ValidationVerdict::Outcome::kValid:
      return path + ": valid";
    case ValidationVerdict::Outcome::kInvalid:
    case ValidationVerdict::Outcome::kTooLarge:
      return v.error;  // the loader's or the limit's message, which names the file
    case ValidationVerdict::Outcome::kCrashed:
      if (v.signal == SIGXCPU) {
        return path + ": the model validator used up its CPU time limit (" +
               std::to_string(options.cpu_seconds) + " s, SIGXCPU); nnd did not load the file";
      }
      return path + ": crashed the model validator (" + signal_name(v.signal) + ")" + said +
             "; the file is damaged, nnd did not load it";
    case ValidationVerdict::Outcome::kTimedOut: {
      char limit[32];
      std::snprintf(limit, sizeof limit, "%.1f s", options.timeout_ms / 1000.0);
      return path + ": the model validator did not finish within " + limit +
             " and was killed; nnd did not load the file";
    }
    case ValidationVerdict::Outcome::kFailedToRun:
      break;
  }
  return path + ": could not validate the file in a child process: " + v.error + said +
         " (daemon.validate_models: in_process loads without this step)";
}

GraphLoader isolated_graph_loader(const ValidatorOptions& options, Logger log) {
  return [options, log = std::move(log)](const ModelSettings& s) {
    const SealedFile file = SealedFile::read(s.path, kMaxModelFileBytes);
    ValidatorOptions o = options;
    o.max_batch = s.max_batch;
    const ValidationVerdict v = validate_in_child(file, s.path, o);
    // The child's message names the failure, but its code does not cross the pipe: a file the
    // validator rejects, or that crashes or stalls it, is malformed as far as the daemon can tell.
    const ErrorCode code = v.outcome == ValidationVerdict::Outcome::kFailedToRun ? ErrorCode::kInternal
                           : v.outcome == ValidationVerdict::Outcome::kTooLarge  ? ErrorCode::kLimit
                                                                                 : ErrorCode::kFormat;
    if (!v.valid()) throw Error(code, validation_failure_message(v, s.path, options));
    if (log) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%zu bytes validated in a child process in %.1f ms (",
                    file.size(), v.wall_ms);
      log(LogLevel::kInfo, "model '" + s.name + "': " + buf + v.summary + ")");
    }
    // Exactly the bytes the child parsed: the file on disk may have changed since.
    return load_model_bytes(file.data(), file.size(), s.path);
  };
}

// ---- the child's side --------------------------------------------------------------------------

namespace {

void report(const std::string& word, const std::string& text) {
  const std::string line = std::string(kReportPrefix) + word + " " + escape(text) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(1, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

void limit(int resource, rlim_t soft, rlim_t hard) {
  const struct rlimit r {soft, hard};
  ::setrlimit(resource, &r);
}

}  // namespace

int run_model_validator(int argc, char** argv) {
  std::string name;
  uint64_t cpu_seconds = 0, max_address_space = 0, max_model_memory = 0, max_batch = 1;
  bool usage_ok = argc >= 3 && std::string_view(argv[1]) == kValidateModelFlag;
  if (usage_ok) name = argv[2];
  for (int i = 3; usage_ok && i < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) {
      usage_ok = false;
      break;
    }
    char* end = nullptr;
    const unsigned long long value = std::strtoull(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0') {
      usage_ok = false;
    } else if (flag == "--cpu-seconds") {
      cpu_seconds = value;
    } else if (flag == "--max-address-space") {
      max_address_space = value;
    } else if (flag == "--max-model-memory") {
      max_model_memory = value;
    } else if (flag == "--max-batch") {
      max_batch = value;
    } else {
      usage_ok = false;
    }
  }
  if (!usage_ok) {
    std::fprintf(stderr,
                 "usage: nnd %s NAME [--cpu-seconds N] [--max-address-space BYTES] [--max-model-memory BYTES]\n"
                 "       [--max-batch N] < MODEL-FILE\n"
                 "(internal: the daemon validates model files in a child process this way)\n",
                 kValidateModelFlag);
    return 2;
  }

  // Limits first, before a byte of the file is read.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);      // never outlive the daemon
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  ::prctl(PR_SET_DUMPABLE, 0);             // a crash here is expected: no core file
  limit(RLIMIT_CORE, 0, 0);
  if (cpu_seconds > 0) limit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1);
  if (max_address_space > 0) limit(RLIMIT_AS, max_address_space, max_address_space);

  // The bytes: a memfd (or any regular file) is mapped; a pipe or terminal (someone trying the
  // mode by hand) is read.
  const void* data = nullptr;
  size_t size = 0;
  std::string piped;
  struct stat st {};
  if (::fstat(0, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    size = static_cast<size_t>(st.st_size);
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, 0, 0);
    if (data == MAP_FAILED) {
      report("invalid", name + ": the validator cannot map the file: " + std::strerror(errno));
      return 1;
    }
  } else {
    for (char buf[65536];;) {
      const ssize_t r = ::read(0, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      piped.append(buf, static_cast<size_t>(r));
      if (piped.size() > kMaxModelFileBytes) {
        report("invalid", name + ": more than the " + std::to_string(kMaxModelFileBytes >> 20) +
                              " MiB a model file may have");
        return 1;
      }
    }
    data = piped.data();
    size = piped.size();
  }

  try {
    Graph g = load_model_bytes(data, size, name);
    if (max_model_memory > 0) {
      const ModelMemoryNeed need = model_memory_need(g, static_cast<uint32_t>(std::min<uint64_t>(max_batch, UINT32_MAX)));
      if (need.total() > max_model_memory) {
        report("too-large", name + ": needs " + describe_memory_need(need) +
                                ", over daemon.max_model_memory_bytes (" + byte_text(max_model_memory) +
                                "; found by the model validator, before the daemon loaded it)");
        return 1;
      }
    }
    report("valid", std::to_string(g.inputs.size()) + " input(s), " +
                        std::to_string(g.outputs.size()) + " output(s), " +
                        std::to_string(g.nodes.size()) + " node(s)");
    return 0;
  } catch (const std::bad_alloc&) {
    report("invalid", name + ": loading it needs more memory than the model validator may use (" +
                          std::to_string(max_address_space >> 20) + " MiB of address space)");
  } catch (const std::exception& e) {
    report("invalid", e.what());
  }
  return 1;
}

}  // namespace nnd::daemon
