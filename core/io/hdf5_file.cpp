#include "core/io/hdf5_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include <unistd.h>

#include <atomic>

#include "core/io/hdf5_heap_check.h"
#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace nnd::h5 {
namespace {

// Upper bounds that keep a hostile file from making us allocate absurd amounts of memory.
constexpr hssize_t kMaxListEntries = 1 << 20;         // strings in one list attribute
constexpr size_t kMaxStringBytes = size_t{64} << 20;  // bytes in one (fixed-length) attribute
constexpr int64_t kMaxWeightElements = int64_t{1} << 28;  // floats in one weight dataset (1 GiB)
constexpr int kMaxRank = 8;
// Files up to this size are read into memory whole at open (see File::File).
constexpr uint64_t kMaxInMemoryFileBytes = uint64_t{256} << 20;
// Growth step of the core driver's buffer; irrelevant for read-only files, which never grow.
constexpr size_t kCoreIncrement = size_t{1} << 20;

// H5Fis_hdf5's rule: the signature sits at offset 0, 512, 1024, 2048, ...
bool has_hdf5_signature(const void* image, size_t size) {
  static const unsigned char kSig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (size_t off = 0; off + sizeof kSig <= size; off = off == 0 ? 512 : off * 2) {
    if (std::memcmp(static_cast<const unsigned char*>(image) + off, kSig, sizeof kSig) == 0) return true;
  }
  return false;
}

// File-image callbacks that make the core driver use the file's bytes in place: every "allocation"
// of the image returns the buffer itself (passed as udata), copies onto itself are no-ops, and
// nothing is freed. Anything else (a copy elsewhere, growing) fails, which cannot happen for a
// file opened read-only.
void* image_in_place(size_t, H5FD_file_image_op_t, void* udata) { return udata; }
void* image_no_copy(void* dest, const void* src, size_t, H5FD_file_image_op_t, void*) {
  return dest == src ? dest : nullptr;
}
void* image_no_realloc(void*, size_t, H5FD_file_image_op_t, void*) { return nullptr; }
herr_t image_no_free(void*, H5FD_file_image_op_t, void*) { return 0; }
void* udata_same(void* udata) { return udata; }
herr_t udata_keep(void*) { return 0; }

// The core driver refuses an image whose name is an existing file, and treats two open images
// of the same name as one file. Nothing can exist below /dev/null, and the counter keeps
// concurrent loads apart.
std::string unique_image_name() {
  static std::atomic<uint64_t> counter{0};
  return "/dev/null/nnd-h5-image-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

herr_t walk_first(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n == 0 && err != nullptr && err->desc != nullptr) *out = err->desc;
  return 0;
}

// Splits "a/b/c:0" into components, ignoring empty ones.
std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

// The object at a path: `exists` is false when a component is missing or is not a hard link;
// `object` is invalid (with the HDF5 error stack kept for the message) when it exists but cannot
// be opened, which means a damaged object header.
struct Lookup {
  bool exists = false;
  Handle object;
};

// Opens the object at `path` below `parent`, one component at a time, following hard links only:
// a soft or external link in an untrusted file could point anywhere, including into other files
// on disk. Each step looks up one name in one group (H5Lget_info, then H5Oopen); handing HDF5 the
// whole path instead made it walk the prefix again for every component and for every later call,
// which was most of the loader's time on files with a hundred weights.
Lookup open_hard_path(hid_t parent, const std::string& path) {
  Lookup out;
  for (const std::string& part : split_path(path)) {
    const hid_t at = out.object.valid() ? out.object.get() : parent;
    H5L_info_t li;
    if (H5Lget_info(at, part.c_str(), &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD) {
      H5Eclear2(H5E_DEFAULT);
      return Lookup{};
    }
    Handle next(H5Oopen(at, part.c_str(), H5P_DEFAULT));
    if (!next.valid()) return Lookup{true, Handle()};
    out.object = std::move(next);
    out.exists = true;
  }
  return out;
}

}  // namespace

void Handle::reset() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
}

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string last_error() {
  std::string msg;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, &msg);  // innermost (most specific) first
  H5Eclear2(H5E_DEFAULT);
  return msg;
}

File::File(const std::string& path, const std::string& display_name)
    : name_(display_name), bytes_(FileBytes::read(path, kMaxInMemoryFileBytes)) {
  silence_errors();
  // The fast path: the whole file in memory and read by the core driver in place, rather than the
  // default driver's pread per metadata block and per dataset (over 500 system calls for a
  // 100-weight model) or the core driver's own read into a fresh buffer (a page fault per 4 KiB).
  if (bytes_.data() != nullptr) {
    if (!has_hdf5_signature(bytes_.data(), bytes_.size())) {
      throw Error(ErrorCode::kFormat, name_ + ": not an HDF5 file (no HDF5 signature)");
    }
    // Before libhdf5 decodes them: a broken global heap hangs or over-reads inside H5Aread.
    const std::string bad = check_global_heaps(static_cast<const uint8_t*>(bytes_.data()), bytes_.size());
    if (!bad.empty()) throw Error(ErrorCode::kFormat, name_ + ": corrupt HDF5 file: " + bad);
    if (open_in_memory()) return;
    bytes_ = FileBytes();
  }
  // Files we cannot read whole (missing, special, empty or huge): HDF5 reads them from disk.
  htri_t is = H5Fis_hdf5(path.c_str());
  if (is < 0) {
    std::string detail = last_error();
    // H5Fis_hdf5 fails for missing/unreadable files and for files whose superblock is damaged.
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw Error(ErrorCode::kIo, name_ + ": cannot open file: " + std::strerror(errno));
    std::fclose(f);
    throw Error(ErrorCode::kFormat, name_ + ": not a readable HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  if (is == 0) throw Error(ErrorCode::kFormat, name_ + ": not an HDF5 file (no HDF5 signature)");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  // Close every object when the file closes even if a handle leaked (it should not).
  if (fapl.valid()) H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.valid() ? fapl.get() : H5P_DEFAULT);
  if (id < 0) {
    std::string detail = last_error();
    throw Error(ErrorCode::kFormat, name_ + ": cannot open HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  file_ = Handle(id);
}

bool File::open_in_memory() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5FD_file_image_callbacks_t cb = {image_in_place, image_no_copy, image_no_realloc, image_no_free,
                                    udata_same,     udata_keep,    bytes_.data()};
  // Callbacks first: H5Pset_file_image already "copies" the image through them.
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), kCoreIncrement, /*backing_store=*/0) < 0 ||
      H5Pset_file_image_callbacks(fapl.get(), &cb) < 0 ||
      H5Pset_file_image(fapl.get(), bytes_.data(), bytes_.size()) < 0 ||
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  hid_t id = H5Fopen(unique_image_name().c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) {
    std::string detail = last_error();
    throw Error(ErrorCode::kFormat, name_ + ": cannot open HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  file_ = Handle(id);
  return true;
}

File::File(const void* image, size_t size, const std::string& display_name) : name_(display_name) {
  silence_errors();
  // H5Fis_hdf5 has no image variant: look for the signature as it does.
  if (!has_hdf5_signature(image, size)) throw Error(ErrorCode::kFormat, name_ + ": not an HDF5 file (no HDF5 signature)");
  // Before libhdf5 decodes them: a broken global heap hangs or over-reads inside H5Aread.
  const std::string bad = check_global_heaps(static_cast<const uint8_t*>(image), size);
  if (!bad.empty()) throw Error(ErrorCode::kFormat, name_ + ": corrupt HDF5 file: " + bad);
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 64 * 1024, 0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<void*>(image), size) < 0 ||
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0) {
    fail("cannot set up an in-memory HDF5 file");
  }
  // Under a name of its own, not `display_name`: that may be the path of an existing file (the
  // daemon loads the bytes a child process validated and names them by their path), which the
  // core driver refuses, and two loads of one name at once would be taken for one file.
  hid_t id = H5Fopen(unique_image_name().c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) {
    std::string detail = last_error();
    throw Error(ErrorCode::kFormat, name_ + ": cannot open HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  file_ = Handle(id);
}

void File::fail(const std::string& what) const { fail(ErrorCode::kFormat, what); }

void File::fail(ErrorCode code, const std::string& what) const {
  std::string detail = last_error();
  throw Error(code, name_ + ": " + what + (detail.empty() ? "" : " (HDF5: " + detail + ")"));
}

std::optional<Handle> File::open_group(hid_t parent, const std::string& path) const {
  Lookup l = open_hard_path(parent, path);
  if (!l.exists) return std::nullopt;
  if (!l.object.valid()) fail("cannot open '" + path + "'");
  if (H5Iget_type(l.object.get()) != H5I_GROUP) return std::nullopt;
  return std::move(l.object);
}

bool File::has_attr(hid_t obj, const std::string& attr) const {
  htri_t e = H5Aexists(obj, attr.c_str());
  if (e < 0) fail("cannot query attribute '" + attr + "'");
  return e > 0;
}

std::vector<std::string> File::read_strings(hid_t attr, const std::string& what) const {
  Handle type(H5Aget_type(attr));
  Handle space(H5Aget_space(attr));
  if (!type.valid() || !space.valid()) fail(what + ": cannot read the attribute's type");
  int ndims = H5Sget_simple_extent_ndims(space.get());
  hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (ndims < 0 || n < 0) fail(what + ": cannot read the attribute's shape");
  if (H5Tget_class(type.get()) != H5T_STRING) {
    if (n == 0) return {};  // Keras writes an empty float64 array for "no names"
    throw Error(ErrorCode::kFormat, name_ + ": " + what + ": expected string(s), found a non-string attribute");
  }
  if (ndims > 1) throw Error(ErrorCode::kFormat, name_ + ": " + what + ": expected a scalar or 1-D string attribute");
  if (n > kMaxListEntries) throw Error(ErrorCode::kLimit, name_ + ": " + what + ": too many entries");
  std::vector<std::string> out;
  if (n == 0) return out;
  out.reserve(static_cast<size_t>(n));
  H5T_cset_t cset = H5Tget_cset(type.get());
  htri_t vl = H5Tis_variable_str(type.get());
  if (vl < 0) fail(what + ": cannot read the string type");
  if (vl > 0) {
    Handle mem(H5Tcopy(H5T_C_S1));
    if (!mem.valid() || H5Tset_size(mem.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mem.get(), cset) < 0) {
      fail(what + ": cannot build a string type");
    }
    std::vector<char*> buf(static_cast<size_t>(n), nullptr);
    if (H5Aread(attr, mem.get(), buf.data()) < 0) fail(what + ": cannot read the attribute");
    for (char* s : buf) out.emplace_back(s != nullptr ? s : "");
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
#else
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, buf.data());
#endif
    return out;
  }
  size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxStringBytes / static_cast<size_t>(n)) {
    throw Error(ErrorCode::kFormat, name_ + ": " + what + ": string attribute has an invalid size");
  }
  H5T_str_t pad = H5Tget_strpad(type.get());
  Handle mem(H5Tcopy(H5T_C_S1));
  if (!mem.valid() || H5Tset_size(mem.get(), size) < 0 || H5Tset_cset(mem.get(), cset) < 0 ||
      H5Tset_strpad(mem.get(), H5T_STR_NULLPAD) < 0) {
    fail(what + ": cannot build a string type");
  }
  std::vector<char> buf(size * static_cast<size_t>(n), '\0');
  if (H5Aread(attr, mem.get(), buf.data()) < 0) fail(what + ": cannot read the attribute");
  for (hssize_t i = 0; i < n; ++i) {
    const char* p = buf.data() + static_cast<size_t>(i) * size;
    std::string s(p, strnlen(p, size));
    if (pad == H5T_STR_SPACEPAD) {
      while (!s.empty() && s.back() == ' ') s.pop_back();
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string File::read_string_attr(hid_t obj, const std::string& attr,
                                   const std::string& where) const {
  const std::string what = where + " attribute '" + attr + "'";
  Handle a(H5Aopen(obj, attr.c_str(), H5P_DEFAULT));
  if (!a.valid()) fail(what + ": cannot open");
  std::vector<std::string> v = read_strings(a.get(), what);
  if (v.size() != 1) throw Error(ErrorCode::kFormat, name_ + ": " + what + ": expected one string");
  return v[0];
}

std::optional<std::vector<std::string>> File::read_string_list_attr(
    hid_t obj, const std::string& attr, const std::string& where) const {
  if (has_attr(obj, attr)) {
    Handle a(H5Aopen(obj, attr.c_str(), H5P_DEFAULT));
    if (!a.valid()) fail(where + " attribute '" + attr + "': cannot open");
    return read_strings(a.get(), where + " attribute '" + attr + "'");
  }
  // Keras' save_attributes_to_hdf5_group splits lists longer than the object header limit.
  if (!has_attr(obj, attr + "0")) return std::nullopt;
  std::vector<std::string> all;
  for (int chunk = 0;; ++chunk) {
    const std::string name = attr + std::to_string(chunk);
    if (!has_attr(obj, name)) break;
    Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT));
    if (!a.valid()) fail(where + " attribute '" + name + "': cannot open");
    std::vector<std::string> part = read_strings(a.get(), where + " attribute '" + name + "'");
    if (static_cast<hssize_t>(all.size() + part.size()) > kMaxListEntries) {
      throw Error(ErrorCode::kLimit, name_ + ": " + where + " attribute '" + attr + "': too many entries");
    }
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

std::optional<Weights> File::read_float_dataset(hid_t parent, const std::string& path,
                                                const std::string& what, bool integers_too) const {
  // Keras names weights "<layer>/<weight>:0" inside the layer's group, so consecutive calls share
  // the directory part: keep the last one open instead of looking it up again for every weight.
  const size_t slash = path.find_last_of('/');
  hid_t dir = parent;
  std::string leaf = path;
  if (slash != std::string::npos) {
    const std::string dir_path = path.substr(0, slash);
    leaf = path.substr(slash + 1);
    if (!dir_cache_.group.valid() || dir_cache_.parent != parent || dir_cache_.path != dir_path) {
      dir_cache_ = DirCache{};
      Lookup d = open_hard_path(parent, dir_path);
      if (!d.exists) return std::nullopt;
      if (!d.object.valid()) fail(what + ": cannot open '" + dir_path + "'");
      if (H5Iget_type(d.object.get()) != H5I_GROUP) return std::nullopt;
      dir_cache_ = DirCache{parent, dir_path, std::move(d.object)};
    }
    dir = dir_cache_.group.get();
  }
  Lookup l = open_hard_path(dir, leaf);
  if (!l.exists) return std::nullopt;
  if (!l.object.valid()) fail(what + ": cannot open '" + path + "'");
  if (H5Iget_type(l.object.get()) != H5I_DATASET) return std::nullopt;
  const Handle ds = std::move(l.object);
  Handle type(H5Dget_type(ds.get()));
  Handle space(H5Dget_space(ds.get()));
  if (!type.valid() || !space.valid()) fail(what + ": cannot read the dataset's type or shape");
  H5T_class_t cls = H5Tget_class(type.get());
  size_t tsize = H5Tget_size(type.get());
  const bool integer_ok = integers_too && cls == H5T_INTEGER && tsize >= 1 && tsize <= 8;
  if (!integer_ok && (cls != H5T_FLOAT || (tsize != 2 && tsize != 4 && tsize != 8))) {
    std::string kind = cls == H5T_INTEGER ? "integer"
                       : cls == H5T_STRING ? "string"
                       : cls == H5T_FLOAT  ? "float"
                                           : "non-numeric";
    throw Error(ErrorCode::kUnsupported, name_ + ": " + what + ": dataset '" + path + "' has an unsupported element type (" +
                kind + ", " + std::to_string(tsize) +
                " bytes); expected float32 (float64 and float16 are converted)");
  }
  H5S_class_t sclass = H5Sget_simple_extent_type(space.get());
  int ndims = H5Sget_simple_extent_ndims(space.get());
  if (sclass == H5S_NO_CLASS || ndims < 0) fail(what + ": cannot read the shape of '" + path + "'");
  if (ndims > kMaxRank) {
    throw Error(ErrorCode::kLimit, name_ + ": " + what + ": dataset '" + path + "' has rank " +
                std::to_string(ndims) + " (at most " + std::to_string(kMaxRank) + " supported)");
  }
  hsize_t dims[kMaxRank] = {};
  if (ndims > 0 && H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    fail(what + ": cannot read the shape of '" + path + "'");
  }
  Weights w;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] > static_cast<hsize_t>(kMaxElements)) {
      throw Error(ErrorCode::kLimit, name_ + ": " + what + ": dataset '" + path + "' has an absurd dimension " +
                  std::to_string(dims[i]));
    }
    w.shape.push_back(static_cast<int64_t>(dims[i]));
  }
  int64_t count = sclass == H5S_NULL ? 0 : element_count(w.shape, name_ + ": " + what);
  if (count > kMaxWeightElements) {
    throw Error(ErrorCode::kLimit, name_ + ": " + what + ": dataset '" + path + "' has " + std::to_string(count) +
                " elements, more than the supported " + std::to_string(kMaxWeightElements));
  }
  if (count == 0) return w;
  try {
    w.data.resize(static_cast<size_t>(count));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kLimit, name_ + ": " + what + ": out of memory reading '" + path + "'");
  }
  if (H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data.data()) < 0) {
    fail(what + ": cannot read dataset '" + path + "' (corrupt or truncated file?)");
  }
  return w;
}

}  // namespace nnd::h5
