#include "core/jit/kernel_module.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/jit/code_generator.h"
#include "core/util/error.h"

namespace nnd::jit {

namespace {

class ThrowingErrorHandler : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (first == asmjit::kErrorOk) {
      first = err;
      text = message;
    }
  }
  asmjit::Error first = asmjit::kErrorOk;
  std::string text;
};

// NND_PERF_MAP=1: append "<start> <size> <name>" per kernel to /tmp/perf-<pid>.map, the file
// `perf report` reads to name samples in JIT code (per-layer profiles of nnd, nnrun, nnbench).
void append_perf_map(const void* fn, size_t size, const std::string& name) {
  const char* v = std::getenv("NND_PERF_MAP");
  if (v == nullptr || *v == '\0' || std::string(v) == "0") return;
  const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  if (FILE* f = std::fopen(path.c_str(), "a")) {
    std::fprintf(f, "%lx %zx nnd:%s\n", reinterpret_cast<unsigned long>(fn), size, name.c_str());
    std::fclose(f);
  }
}

}  // namespace

KernelModule::KernelModule(Isa isa, bool keep_listing, std::string dump_dir)
    : isa_(isa), keep_listing_(keep_listing || !dump_dir.empty()), dump_dir_(std::move(dump_dir)) {
  if (!dump_dir_.empty()) std::filesystem::create_directories(dump_dir_);
}

KernelModule::~KernelModule() {
  for (CompiledKernel& k : kernels_) {
    if (k.fn) rt_.release(k.fn);
  }
}

KernelFn KernelModule::compile(const std::string& name, const KernelSpec& spec) {
  return compile_function(name, [&](asmjit::CodeHolder& code, LoopRecorder* loops) {
    return emit_kernel_function(code, isa_, spec, loops);
  });
}

KernelFn KernelModule::compile_function(const std::string& name, const FunctionEmitter& emit) {
  asmjit::CodeHolder code;
  code.init(rt_.environment());
  ThrowingErrorHandler eh;
  code.setErrorHandler(&eh);
  asmjit::StringLogger logger;
  if (keep_listing_) {
    logger.addFlags(asmjit::FormatFlags::kMachineCode);
    code.setLogger(&logger);
  }
  std::optional<LoopRecorder> loops;
  if (loop_batch_ > 0) loops.emplace(loop_batch_);
  const size_t code_size = emit(code, loops ? &*loops : nullptr);
  if (eh.first != asmjit::kErrorOk) {
    throw Error(ErrorCode::kFormat, "JIT: code generation of " + name + " failed: " + eh.text);
  }
  code.flatten();
  code.resolveUnresolvedLinks();

  CompiledKernel k;
  k.name = name;
  k.code_size = code_size;
  const asmjit::CodeBuffer& buf = code.textSection()->buffer();
  k.bytes.assign(buf.data(), buf.data() + buf.size());
  if (keep_listing_) k.listing = logger.data();
  if (loops) k.loops = loops->records(name);
  void* fn = nullptr;
  const asmjit::Error err = rt_.add(&fn, &code);
  if (err != asmjit::kErrorOk) {
    throw Error(ErrorCode::kLimit, "JIT: cannot place " + name + " in executable memory: " + asmjit::DebugUtils::errorAsString(err));
  }
  k.fn = reinterpret_cast<KernelFn>(fn);
  append_perf_map(fn, k.bytes.size(), std::to_string(kernels_.size()) + "-" + name);
  if (!dump_dir_.empty()) {
    std::string file = std::to_string(kernels_.size()) + "-" + name;
    for (char& c : file) {
      if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_' && c != '+') c = '_';
    }
    std::ofstream out(std::filesystem::path(dump_dir_) / (file + ".asm"));
    out << "; " << name << " (" << isa_id(isa_) << ", " << k.bytes.size() << " bytes)\n" << k.listing;
  }
  kernels_.push_back(std::move(k));
  return kernels_.back().fn;
}

size_t KernelModule::code_bytes() const {
  size_t n = 0;
  for (const CompiledKernel& k : kernels_) n += k.bytes.size();
  return n;
}

uint64_t KernelModule::code_hash() const {
  uint64_t h = 1469598103934665603ull;
  for (const CompiledKernel& k : kernels_) {
    for (uint8_t b : k.bytes) {
      h ^= b;
      h *= 1099511628211ull;
    }
  }
  return h;
}

}  // namespace nnd::jit
