// Minimal RAII layer over the HDF5 C API, private to core/io (the Keras loader).
//
// Every failure becomes nnd::Error whose message starts with the file name; HDF5's own automatic
// error-stack printing is switched off for the calling thread (H5Eset_auto2) and the innermost
// HDF5 message is appended to ours instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hdf5.h>

#include "core/io/file_bytes.h"
#include "core/ir/tensor.h"
#include "core/util/error.h"

namespace nnd::h5 {

// Owns one hid_t and closes it with the function matching its kind.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

// Turns off HDF5's automatic error printing for this thread.
void silence_errors();

// The innermost message on the current thread's HDF5 error stack ("" when empty); clears it.
std::string last_error();

// An open, read-only HDF5 file. Messages start with `display_name`.
class File {
 public:
  explicit File(const std::string& path, const std::string& display_name);
  // Opens an in-memory file image (HDF5 core driver, copied, nothing touches the disk): for
  // the fuzz target, which feeds thousands of inputs a second, and the daemon, which loads the
  // bytes a child process validated. `display_name` only starts messages; it may be any path.
  File(const void* image, size_t size, const std::string& display_name);

  const std::string& name() const { return name_; }
  hid_t root() const { return file_.get(); }

  // Opens a group by absolute or relative path below `parent`; nullopt when it does not exist.
  std::optional<Handle> open_group(hid_t parent, const std::string& path) const;

  bool has_attr(hid_t obj, const std::string& attr) const;

  // Reads a string attribute (scalar, or 1-element array) stored as a variable-length or a
  // fixed-length (NUL- or space-padded) string. `where` names the object for messages.
  std::string read_string_attr(hid_t obj, const std::string& attr, const std::string& where) const;

  // Reads a list-of-strings attribute (`layer_names`, `weight_names`) in either encoding; an
  // empty numeric array (Keras writes one for layers without weights) reads as an empty list.
  // Keras splits long lists into `name0`, `name1`, ... attributes; those are joined. Returns
  // nullopt when neither form exists.
  std::optional<std::vector<std::string>> read_string_list_attr(hid_t obj, const std::string& attr,
                                                                const std::string& where) const;

  // Reads a floating-point dataset (float32, or float64/float16 converted) at `path` below
  // `parent`; with `integers_too` an integer one too, converted (Normalization's int64 count).
  // nullopt when no dataset exists at that path. `what` prefixes messages.
  std::optional<Weights> read_float_dataset(hid_t parent, const std::string& path, const std::string& what,
                                            bool integers_too = false) const;

 private:
  [[noreturn]] void fail(const std::string& what) const;  // kFormat
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const;
  // Opens bytes_ through the core driver without copying it; false (nothing thrown) when HDF5
  // refuses the set-up, so the caller can fall back to reading the file from disk.
  bool open_in_memory();
  std::vector<std::string> read_strings(hid_t attr, const std::string& what) const;

  std::string name_;
  FileBytes bytes_;  // declared before file_: HDF5 reads from it until the file closes
  Handle file_;
  // The group read_float_dataset opened last for the directory part of a path (`path` below
  // `parent`). HDF5 never reuses an hid_t within a process, so the key cannot alias a new object.
  // Declared after file_ so it closes first.
  struct DirCache {
    hid_t parent = H5I_INVALID_HID;
    std::string path;
    Handle group;
  };
  mutable DirCache dir_cache_;
};

}  // namespace nnd::h5
