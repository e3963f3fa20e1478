#include "core/io/hdf5_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

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

// True when every component of `path` below `parent` exists as a link (H5Lexists fails rather
// than returning false when an intermediate component is missing, so walk them one by one).
bool path_exists(hid_t parent, const std::string& path) {
  std::string prefix;
  for (const std::string& part : split_path(path)) {
    prefix += prefix.empty() ? part : "/" + part;
    htri_t e = H5Lexists(parent, prefix.c_str(), H5P_DEFAULT);
    if (e <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    // Follow hard links only: a soft or external link in an untrusted file could point anywhere,
    // including into other files on disk.
    H5L_info_t li;
    if (H5Lget_info(parent, prefix.c_str(), &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
  }
  return !prefix.empty();
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

File::File(const std::string& path, const std::string& display_name) : name_(display_name) {
  silence_errors();
  htri_t is = H5Fis_hdf5(path.c_str());
  if (is < 0) {
    std::string detail = last_error();
    // H5Fis_hdf5 fails for missing/unreadable files and for files whose superblock is damaged.
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) throw Error(name_ + ": cannot open file: " + std::strerror(errno));
    std::fclose(f);
    throw Error(name_ + ": not a readable HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  if (is == 0) throw Error(name_ + ": not an HDF5 file (no HDF5 signature)");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  // Close every object when the file closes even if a handle leaked (it should not).
  if (fapl.valid()) H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.valid() ? fapl.get() : H5P_DEFAULT);
  if (id < 0) {
    std::string detail = last_error();
    throw Error(name_ + ": cannot open HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  file_ = Handle(id);
}

File::File(const void* image, size_t size, const std::string& display_name) : name_(display_name) {
  silence_errors();
  // H5Fis_hdf5 has no image variant: look for the signature at offset 0, 512, 1024, ... as it does.
  static const unsigned char kSig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  bool found = false;
  for (size_t off = 0; off + sizeof kSig <= size && !found; off = off == 0 ? 512 : off * 2) {
    found = std::memcmp(static_cast<const unsigned char*>(image) + off, kSig, sizeof kSig) == 0;
  }
  if (!found) throw Error(name_ + ": not an HDF5 file (no HDF5 signature)");
  // Before libhdf5 decodes them: a broken global heap hangs or over-reads inside H5Aread.
  const std::string bad = check_global_heaps(static_cast<const uint8_t*>(image), size);
  if (!bad.empty()) throw Error(name_ + ": corrupt HDF5 file: " + bad);
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 64 * 1024, 0) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<void*>(image), size) < 0 ||
      H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG) < 0) {
    fail("cannot set up an in-memory HDF5 file");
  }
  hid_t id = H5Fopen(name_.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) {
    std::string detail = last_error();
    throw Error(name_ + ": cannot open HDF5 file (corrupt or truncated)" +
                (detail.empty() ? "" : ": " + detail));
  }
  file_ = Handle(id);
}

void File::fail(const std::string& what) const {
  std::string detail = last_error();
  throw Error(name_ + ": " + what + (detail.empty() ? "" : " (HDF5: " + detail + ")"));
}

std::optional<Handle> File::open_group(hid_t parent, const std::string& path) const {
  if (!path_exists(parent, path)) return std::nullopt;
  H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
  herr_t st = H5Oget_info_by_name3(parent, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  herr_t st = H5Oget_info_by_name2(parent, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#endif
  if (st < 0) fail("cannot inspect '" + path + "'");
  if (info.type != H5O_TYPE_GROUP) return std::nullopt;
  Handle g(H5Gopen2(parent, path.c_str(), H5P_DEFAULT));
  if (!g.valid()) fail("cannot open group '" + path + "'");
  return g;
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
    throw Error(name_ + ": " + what + ": expected string(s), found a non-string attribute");
  }
  if (ndims > 1) throw Error(name_ + ": " + what + ": expected a scalar or 1-D string attribute");
  if (n > kMaxListEntries) throw Error(name_ + ": " + what + ": too many entries");
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
    throw Error(name_ + ": " + what + ": string attribute has an invalid size");
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
  if (v.size() != 1) throw Error(name_ + ": " + what + ": expected one string");
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
      throw Error(name_ + ": " + where + " attribute '" + attr + "': too many entries");
    }
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

std::optional<Weights> File::read_float_dataset(hid_t parent, const std::string& path,
                                                const std::string& what) const {
  if (!path_exists(parent, path)) return std::nullopt;
  H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
  herr_t st = H5Oget_info_by_name3(parent, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#else
  herr_t st = H5Oget_info_by_name2(parent, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT);
#endif
  if (st < 0) fail(what + ": cannot inspect '" + path + "'");
  if (info.type != H5O_TYPE_DATASET) return std::nullopt;
  Handle ds(H5Dopen2(parent, path.c_str(), H5P_DEFAULT));
  if (!ds.valid()) fail(what + ": cannot open dataset '" + path + "'");
  Handle type(H5Dget_type(ds.get()));
  Handle space(H5Dget_space(ds.get()));
  if (!type.valid() || !space.valid()) fail(what + ": cannot read the dataset's type or shape");
  H5T_class_t cls = H5Tget_class(type.get());
  size_t tsize = H5Tget_size(type.get());
  if (cls != H5T_FLOAT || (tsize != 2 && tsize != 4 && tsize != 8)) {
    std::string kind = cls == H5T_INTEGER ? "integer"
                       : cls == H5T_STRING ? "string"
                       : cls == H5T_FLOAT  ? "float"
                                           : "non-numeric";
    throw Error(name_ + ": " + what + ": dataset '" + path + "' has an unsupported element type (" +
                kind + ", " + std::to_string(tsize) +
                " bytes); expected float32 (float64 and float16 are converted)");
  }
  H5S_class_t sclass = H5Sget_simple_extent_type(space.get());
  int ndims = H5Sget_simple_extent_ndims(space.get());
  if (sclass == H5S_NO_CLASS || ndims < 0) fail(what + ": cannot read the shape of '" + path + "'");
  if (ndims > kMaxRank) {
    throw Error(name_ + ": " + what + ": dataset '" + path + "' has rank " +
                std::to_string(ndims) + " (at most " + std::to_string(kMaxRank) + " supported)");
  }
  hsize_t dims[kMaxRank] = {};
  if (ndims > 0 && H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    fail(what + ": cannot read the shape of '" + path + "'");
  }
  Weights w;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] > static_cast<hsize_t>(kMaxElements)) {
      throw Error(name_ + ": " + what + ": dataset '" + path + "' has an absurd dimension " +
                  std::to_string(dims[i]));
    }
    w.shape.push_back(static_cast<int64_t>(dims[i]));
  }
  int64_t count = sclass == H5S_NULL ? 0 : element_count(w.shape, name_ + ": " + what);
  if (count > kMaxWeightElements) {
    throw Error(name_ + ": " + what + ": dataset '" + path + "' has " + std::to_string(count) +
                " elements, more than the supported " + std::to_string(kMaxWeightElements));
  }
  if (count == 0) return w;
  try {
    w.data.resize(static_cast<size_t>(count));
  } catch (const std::bad_alloc&) {
    throw Error(name_ + ": " + what + ": out of memory reading '" + path + "'");
  }
  if (H5Dread(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data.data()) < 0) {
    fail(what + ": cannot read dataset '" + path + "' (corrupt or truncated file?)");
  }
  return w;
}

}  // namespace nnd::h5
