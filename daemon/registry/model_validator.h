// Isolated validation of model files: a child process parses a file before the daemon does.
//
// The daemon's model loaders hand foreign bytes to libhdf5 (.h5), protobuf (.onnx) and libzip
// plus a JSON parser (.keras). Some damage crashes those libraries instead of making them report
// an error: libhdf5 1.10 dereferences a variable-length string's heap index unchecked
// (H5HG_read), so a flipped index in an .h5 file's model_config reference is a SIGSEGV
// (tests/data/crashers/). In the daemon that would kill every model already serving. So the
// daemon first lets a child process parse the file, and parses it itself only when the child
// reported it valid and exited cleanly.
//
// The child is the nnd executable itself (/proc/self/exe, so the very same build even when the
// package was upgraded under the running daemon; see self_executable), started with posix_spawn rather than a fork of
// the multi-threaded daemon (a forked child would inherit locks other threads held at that
// instant, the allocator's among them), in the mode `nnd --validate-model NAME` (see
// run_model_validator). The flag is not listed in `nnd --help`: it is the daemon's internal
// interface, its report format may change between versions; `nnd --check` is the users' tool.
//
// The child gets exactly three descriptors: stdin is the sealed memfd holding the file's bytes
// (daemon/registry/sealed_file.h), so the child checks the very bytes the daemon loads next;
// stdout and stderr are one pipe carrying its report (and whatever the C library prints when it
// aborts). It runs with every signal at its default and unblocked, dies with the daemon
// (PR_SET_PDEATHSIG), writes no core file (RLIMIT_CORE 0, not dumpable), and limits itself before
// it reads a byte: CPU time (RLIMIT_CPU) and address space (RLIMIT_AS, sized from the file). The
// daemon kills it after a wall-clock timeout.
//
// This is a crash barrier, not a sandbox: the child runs as the daemon's user, so bytes that
// take over a parser could still do what that user may (no seccomp filter is installed).
#pragma once

#include <cstdint>
#include <string>

#include "daemon/registry/registry_builder.h"
#include "daemon/registry/sealed_file.h"
#include "daemon/base/logger.h"

namespace nnd::daemon {

struct ValidatorOptions {
  // The nnd executable to run in validation mode; empty: this program (self_executable()).
  // Tests point this at the built binary (they are not nnd themselves).
  std::string executable;
  // Wall clock after which the daemon kills the child (SIGKILL). A parse takes milliseconds for
  // the example models and a few seconds for hundreds of MB; this only bounds a hang. It stays
  // below systemd's TimeoutStartSec (60 s in systemd/nnd.service).
  uint32_t timeout_ms = 30000;
  // RLIMIT_CPU of the child (SIGXCPU when used up), for a parser that spins.
  uint32_t cpu_seconds = 20;
  // RLIMIT_AS of the child: base + per_file_byte x the file's size, so that absurd sizes in a
  // file end in std::bad_alloc (reported as invalid) instead of driving the machine into the
  // OOM killer. Measured (the smallest limit that still passes): the executable, its libraries
  // and a small model need 37-39 MiB (example .h5/.keras files, bop.h5); a large ONNX file
  // 5.4-5.5x its size (alexnet 233 MiB: 1273 MiB, fcn_resnet50 126 MiB: 726 MiB: the mapped
  // file, protobuf's copy, the weights converted into the graph). The child only parses (no JIT),
  // so nothing else needs room. 0 for the base: no limit. Builds with AddressSanitizer or
  // ThreadSanitizer set none (their shadow memory reserves terabytes of address space).
  uint64_t address_space_base_bytes = uint64_t{256} << 20;
  uint32_t address_space_per_file_byte = 8;
  // The child also holds the model's memory need (model_memory.h, at max_batch) to this limit
  // (daemon.max_model_memory_bytes; 0: none): a file that parses into a model too large to
  // compile is refused before the daemon loads it.
  uint64_t max_model_memory_bytes = 0;
  uint32_t max_batch = 1;
};

struct ValidationVerdict {
  enum class Outcome {
    kValid,        // parsed, exited 0
    kInvalid,      // the loader rejected the file (an ordinary nnd::Error), exited 1
    kTooLarge,     // it parsed, but its memory need is over max_model_memory_bytes, exited 1
    kCrashed,      // ended by a signal (SIGSEGV, SIGABRT, SIGXCPU, ...)
    kTimedOut,     // still running at the timeout; killed
    kFailedToRun,  // could not be started, or exited without a verdict
  };
  Outcome outcome = Outcome::kFailedToRun;
  std::string summary;    // kValid: what the child found ("1 input(s), 1 output(s), 17 node(s)")
  std::string error;      // kInvalid, kTooLarge: the message (it names the file); kFailedToRun: why
  int signal = 0;         // kCrashed: the signal
  std::string last_words; // the last line the child printed besides its report, e.g. glibc's
                          // "free(): invalid pointer" before a SIGABRT ("" when none)
  double wall_ms = 0;     // from spawn to reaped
  bool valid() const { return outcome == Outcome::kValid; }
};

// Runs the validator on `file`'s bytes; `name` (normally the file's path) starts the loader's
// messages. Blocks until the child has exited or was killed; never throws for anything the child
// does. Thread-safe: the daemon validates several files at once from its compile threads.
ValidationVerdict validate_in_child(const SealedFile& file, const std::string& name,
                                    const ValidatorOptions& options);

// The message for a verdict that is not valid, starting with `path`:
// "/etc/nnd/models/x.h5: crashed the model validator (SIGSEGV); nnd did not load it".
std::string validation_failure_message(const ValidationVerdict& verdict, const std::string& path,
                                       const ValidatorOptions& options);

// The program to run as this process's validator: "/proc/self/exe", which stays this very
// binary even when a package upgrade has replaced the file on disk; but the program's path when
// /proc/self/exe is another file than that path names (under valgrind it is valgrind's tool,
// while readlink reports the program valgrind runs).
std::string self_executable();

// "SIGSEGV", "SIGABRT", ... ("signal 42" for one without a name here).
std::string signal_name(int sig);

// The GraphLoader for build_model_set (BuildOptions::load_graph): reads the file once into a
// SealedFile, validates it in a child process, logs how long that took, then loads the same
// bytes in this process. Throws nnd::Error naming the file when the file cannot be read or the
// verdict is not valid.
GraphLoader isolated_graph_loader(const ValidatorOptions& options, Logger log);

// The child's side. `nnd --validate-model NAME [--cpu-seconds N] [--max-address-space BYTES]
// [--max-model-memory BYTES --max-batch N]`: sets its limits, reads the model file's bytes from
// stdin, loads them with load_model_bytes (NAME starts messages), holds the model's memory need to
// the limit and reports on stdout: "nnd-validate: valid ..." and exit 0, or "nnd-validate:
// invalid <message>" / "nnd-validate: too-large <message>" and exit 1; 2 on a usage error. main() calls this first,
// when argv[1] is the flag, before anything else runs.
inline constexpr const char* kValidateModelFlag = "--validate-model";
int run_model_validator(int argc, char** argv);

}  // namespace nnd::daemon
