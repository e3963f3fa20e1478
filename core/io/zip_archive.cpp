#include "core/io/zip_archive.h"

#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <memory>

#include "core/util/error.h"

namespace nnd {
namespace {

std::string error_text(zip_error_t* e) { return zip_error_strerror(e); }

// Largest expansion deflate (or any method libzip reads) can produce from one compressed byte,
// with room for headers of tiny entries. An honest entry always satisfies it.
constexpr uint64_t kMaxExpansion = 1100;
constexpr uint64_t kExpansionSlack = 64 * 1024;

}  // namespace

ZipArchive ZipArchive::open_file(const std::string& path) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (z == nullptr) {
    zip_error_t e;
    zip_error_init_with_code(&e, code);
    std::string msg = error_text(&e);
    zip_error_fini(&e);
    throw Error(code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ ? ErrorCode::kIo : ErrorCode::kFormat, path + ": cannot open as a zip archive: " + msg);
  }
  return ZipArchive(z, path);
}

ZipArchive ZipArchive::open_bytes(const void* data, size_t size, const std::string& name) {
  zip_error_t e;
  zip_error_init(&e);
  zip_source_t* src = zip_source_buffer_create(data, size, 0, &e);
  if (src == nullptr) {
    std::string msg = error_text(&e);
    zip_error_fini(&e);
    throw Error(ErrorCode::kFormat, name + ": cannot open as a zip archive: " + msg);
  }
  zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &e);
  if (z == nullptr) {
    zip_source_free(src);  // not taken over on failure
    std::string msg = error_text(&e);
    zip_error_fini(&e);
    throw Error(ErrorCode::kFormat, name + ": cannot open as a zip archive: " + msg);
  }
  zip_error_fini(&e);
  return ZipArchive(z, name);
}

ZipArchive::ZipArchive(ZipArchive&& o) noexcept : zip_(o.zip_), name_(std::move(o.name_)) {
  o.zip_ = nullptr;
}

ZipArchive::~ZipArchive() {
  if (zip_ != nullptr) zip_discard(zip_);  // read-only: nothing to write back
}

void ZipArchive::fail(const std::string& msg) const { fail(ErrorCode::kFormat, msg); }
void ZipArchive::fail(ErrorCode code, const std::string& msg) const { throw Error(code, name_ + ": " + msg); }

std::vector<std::string> ZipArchive::entry_names() const {
  std::vector<std::string> out;
  const zip_int64_t n = zip_get_num_entries(zip_, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* s = zip_get_name(zip_, static_cast<zip_uint64_t>(i), 0);
    if (s != nullptr) out.emplace_back(s);
  }
  return out;
}

bool ZipArchive::has(const std::string& entry) const {
  return zip_name_locate(zip_, entry.c_str(), 0) >= 0;
}

std::optional<std::string> ZipArchive::read(const std::string& entry, uint64_t max_bytes) const {
  const zip_int64_t index = zip_name_locate(zip_, entry.c_str(), 0);
  if (index < 0) return std::nullopt;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_, static_cast<zip_uint64_t>(index), 0, &st) != 0) {
    fail(entry + ": " + zip_strerror(zip_));
  }
  const std::string what = "archive entry " + entry;
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
    fail(what + " is encrypted");
  }
  if ((st.valid & ZIP_STAT_COMP_METHOD) && !zip_compression_method_supported(st.comp_method, 0)) {
    fail(what + " uses compression method " + std::to_string(st.comp_method) +
         ", which this build of libzip cannot read (Keras writes entries stored or deflated)");
  }
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE)) fail(what + ": size unknown");
  if (st.size > max_bytes) {
    fail(ErrorCode::kLimit, what + " is " + std::to_string(st.size) + " bytes, more than the limit of " +
         std::to_string(max_bytes));
  }
  if (st.size / kMaxExpansion > st.comp_size + kExpansionSlack / kMaxExpansion) {
    fail(what + " claims " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
         " compressed bytes: damaged or a zip bomb");
  }
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> f(zip_fopen_index(zip_, static_cast<zip_uint64_t>(index), 0),
                                                       zip_fclose);
  if (!f) fail(what + ": " + zip_strerror(zip_));
  std::string out(static_cast<size_t>(st.size), '\0');
  uint64_t done = 0;
  while (done < st.size) {
    const zip_int64_t n = zip_fread(f.get(), out.data() + done, st.size - done);
    if (n < 0) fail(what + ": " + zip_file_strerror(f.get()));  // includes CRC errors
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  if (done != st.size) {
    fail(what + ": truncated (" + std::to_string(done) + " of " + std::to_string(st.size) + " bytes)");
  }
  // libzip 1.7 checks the CRC of deflated entries only; Keras stores its entries uncompressed.
  if (st.valid & ZIP_STAT_CRC) {
    uLong crc = crc32(0L, Z_NULL, 0);
    for (uint64_t at = 0; at < done;) {
      const uInt n = static_cast<uInt>(std::min<uint64_t>(done - at, 1u << 30));
      crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + at), n);
      at += n;
    }
    if (crc != st.crc) fail(what + ": CRC error (the archive is damaged)");
  }
  return out;
}

}  // namespace nnd
