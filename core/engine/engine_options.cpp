#include "core/engine/engine_options.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace nnd {

std::optional<EngineKind> parse_engine_kind(const std::string& s) {
  if (s == "reference") return EngineKind::kReference;
  if (s == "jit") return EngineKind::kJit;
  return std::nullopt;
}

std::optional<IsaChoice> parse_isa(const std::string& s) {
  if (s == "auto") return IsaChoice::kAuto;
  if (auto isa = jit::isa_from_id(s)) return IsaChoice(*isa);
  return std::nullopt;
}

std::optional<MathMode> parse_math_mode(const std::string& s) {
  if (s == "exact") return MathMode::kExact;
  if (s == "fast") return MathMode::kFast;
  return std::nullopt;
}

std::string default_isa_cache_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (const char* set = std::getenv("NND_ISA_CACHE")) {
    const std::string v = set;
    return v == "off" ? "" : v;
  }
  std::string dir = env("CACHE_DIRECTORY");
  if (!dir.empty()) {
    // systemd passes several folders colon-separated when the unit names several; nnd's names one.
    return dir.substr(0, dir.find(':')) + "/isa-calibration";
  }
  dir = env("XDG_CACHE_HOME");
  if (dir.empty() && !env("HOME").empty()) dir = env("HOME") + "/.cache";
  return dir.empty() ? "" : dir + "/nnd/isa-calibration";
}

int auto_threads(int64_t flops_per_sample, int cores) {
  const int64_t want = (flops_per_sample + kMflopPerThread * 1000000 - 1) / (kMflopPerThread * 1000000);
  return static_cast<int>(std::clamp<int64_t>(want, 1, std::max(1, std::min(cores, kMaxThreads))));
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<int> parse_threads(const std::string& s) {
  if (s == "auto") return kAutoThreads;
  if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int n = std::stoi(s);
  if (n < 1 || n > kMaxThreads) return std::nullopt;
  return n;
}

const char* isa_name(IsaChoice i) { return i.is_auto() ? "auto" : jit::isa_id(*i.isa()); }

std::vector<std::string> isa_choice_ids() {
  std::vector<std::string> ids{"auto"};
  for (const std::string& id : jit::isa_ids()) ids.push_back(id);
  return ids;
}

std::string isa_choice_list() {
  const std::vector<std::string> ids = isa_choice_ids();
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) s += i + 1 == ids.size() ? " or " : ", ";
    s += ids[i];
  }
  return s;
}

const char* math_mode_name(MathMode m) { return m == MathMode::kExact ? "exact" : "fast"; }

}  // namespace nnd
