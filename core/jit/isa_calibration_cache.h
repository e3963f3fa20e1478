// The ISA calibration cache: a text file that keeps each `isa: auto` choice measured on this
// machine (isa_calibration.h), so that a restart serves the same ISA again instead of measuring
// anew. Different ISAs round differently in the last bits; a robot whose daemon restarted should
// not flip between them on a near-tie.
//
// One line per key: the CPU (CpuFeatures::identity()), the network (graph_content_hash), the
// calibration batch and the math mode, then the chosen ISA and the times measured then:
//
//   nnd-isa-calibration 1
//   AuthenticAMD 25.17.1 | AMD EPYC 9R14 | sse4.1 avx2 avx512<TAB>5f0c...<TAB>1<TAB>exact<TAB>avx2<TAB>sse4.1=2239.1,avx2=885.0,avx512=902.3
//
// Nothing here is fatal: an unreadable file, a wrong header or a malformed line is a warning (the
// bad lines are ignored, and dropped at the next store); a file that cannot be written is a
// warning too (the choice just is not kept). Stores from several threads or processes are
// serialised by an flock() on "<path>.lock" and replace the file by rename(), so a reader never
// sees half a file. At most kMaxEntries lines are kept, the most recently stored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/jit/isa_calibration.h"

namespace nnd::jit {

struct IsaCalibrationKey {
  std::string cpu;        // CpuFeatures::identity()
  uint64_t network = 0;   // graph_content_hash()
  int64_t batch = 1;      // samples per run in the measurement
  MathMode math = MathMode::kExact;
};

struct IsaCalibrationEntry {
  IsaCalibrationKey key;
  Isa isa = Isa::kSse41;
  std::vector<IsaTiming> timings;  // min_us per candidate (samples and median are not kept)
};

// Choices made in this process, by cache path ("" included) and key: make_jit_engine consults
// them when the file has no entry (no file configured, an unwritable or corrupt one, one another
// process rewrote), so that a reload in the same process serves the ISA it served before even
// when nothing could be kept on disk. At most kMaxRemembered, the most recent.
inline constexpr size_t kMaxRemembered = 1024;
std::optional<IsaCalibrationEntry> remembered_isa_choice(const std::string& cache_path, const IsaCalibrationKey& key);
void remember_isa_choice(const std::string& cache_path, const IsaCalibrationEntry& e);

class IsaCalibrationCache {
 public:
  static constexpr size_t kMaxEntries = 256;

  explicit IsaCalibrationCache(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  // The entry stored for `key`, if any. A missing file is no warning (the first start); anything
  // unreadable is, appended to *warnings.
  std::optional<IsaCalibrationEntry> lookup(const IsaCalibrationKey& key, std::vector<std::string>* warnings) const;

  // Adds or replaces the entry for e.key. Returns false (with a warning) if the file could not be
  // written.
  bool store(const IsaCalibrationEntry& e, std::vector<std::string>* warnings) const;

 private:
  std::vector<IsaCalibrationEntry> read_all(std::vector<std::string>* warnings) const;

  std::string path_;
};

}  // namespace nnd::jit
