// Read-only zip archives (Keras 3 `.keras` files), a thin RAII layer over Debian's libzip.
// Private to core/io. Every failure is an nnd::Error whose message starts with the archive's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/util/error.h"

struct zip;  // libzip's zip_t

namespace nnd {

class ZipArchive {
 public:
  // Opens the archive at `path`; throws when it is missing, not a zip, or damaged.
  static ZipArchive open_file(const std::string& path);
  // Opens an archive already in memory (not copied: `data` must outlive the object); `name`
  // starts messages.
  static ZipArchive open_bytes(const void* data, size_t size, const std::string& name);

  ZipArchive(ZipArchive&& o) noexcept;
  ZipArchive& operator=(ZipArchive&&) = delete;
  ZipArchive(const ZipArchive&) = delete;
  ~ZipArchive();

  const std::string& name() const { return name_; }
  std::vector<std::string> entry_names() const;
  bool has(const std::string& entry) const;

  // The whole content of `entry`; nullopt when the archive has no such entry. Throws when the
  // entry is encrypted, uses a compression method libzip cannot read, fails its CRC, is larger
  // than `max_bytes`, or claims more bytes than its compressed size can hold (a zip bomb: even
  // deflate's best case stays under ~1030:1).
  std::optional<std::string> read(const std::string& entry, uint64_t max_bytes) const;

 private:
  ZipArchive(zip* z, std::string name) : zip_(z), name_(std::move(name)) {}
  [[noreturn]] void fail(const std::string& msg) const;  // kFormat
  [[noreturn]] void fail(ErrorCode code, const std::string& msg) const;

  zip* zip_ = nullptr;
  std::string name_;
};

}  // namespace nnd
