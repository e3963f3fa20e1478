// nnd.hpp — header-only C++ wrapper of libnnd (nnd.h), for C++17 and later.
//
//   libnnd::Model bop("bop.onnx", libnnd::Options().set("isa", "auto").set("threads", "2"));
//   std::vector<float> image(batch * bop.input(0).sample_elements);
//   std::vector<float> scores(batch * bop.output(0).sample_elements);
//   bop.run(batch, {image}, {scores});
//
// run() checks every buffer against the model before anything runs: the number of inputs and
// outputs, each buffer's element type (float for a float32 tensor, uint8_t for uint8, int64_t
// for int64: data of another type is refused, never converted; a model whose callers send uint8
// camera bytes says so at open with set("inputs.NAME", "uint8")) and its length (batch samples,
// exactly). A buffer is anything with data() and size() (std::vector, std::array, std::span) or
// a pointer and an element count: libnnd::In(ptr, n), libnnd::Out(ptr, n).
//
// Errors: every failure throws libnnd::Error (a std::runtime_error) with the nnd_status
// (`status()`) and the message "NND_E_IO: <detail from nnd_last_error>".
//
// Threads: run() may be called from several threads at once on one Model. A Model is move-only;
// destroy it only when no call on it is running.
#ifndef NND_HPP
#define NND_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "nnd.hpp needs C++17 or later (-std=c++17); from C or older C++ use nnd.h"
#endif

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nnd.h"

namespace libnnd {

class Error : public std::runtime_error {
 public:
  Error(nnd_status status, const std::string& detail)
      : std::runtime_error(std::string(nnd_status_name(status)) + ": " +
                           (detail.empty() ? nnd_strerror(status) : detail)),
        status_(status) {}
  nnd_status status() const noexcept { return status_; }

 private:
  nnd_status status_;
};

namespace detail {
inline void check(nnd_status s) {
  if (s != NND_OK) throw Error(s, nnd_last_error());
}
inline const char* dtype_name(nnd_dtype t) {
  switch (t) {
    case NND_FLOAT32: return "float32";
    case NND_UINT8: return "uint8";
    case NND_INT64: return "int64";
  }
  return "unknown dtype";
}
// The nnd_dtype of a C++ element type; only the three the API has.
template <typename T>
constexpr nnd_dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_same_v<U, float> || std::is_same_v<U, uint8_t> || std::is_same_v<U, int64_t>,
                "libnnd tensors hold float (float32), uint8_t (uint8) or int64_t (int64)");
  return std::is_same_v<U, float> ? NND_FLOAT32 : std::is_same_v<U, uint8_t> ? NND_UINT8 : NND_INT64;
}
template <typename C>
using element_of = std::remove_pointer_t<decltype(std::declval<C&>().data())>;
}  // namespace detail

// An input buffer of a run: where its elements are, how many, and of which type.
class In {
 public:
  template <typename T>
  In(const T* data, size_t count) : data_(data), count_(count), dtype_(detail::dtype_of<T>()) {}
  template <typename C, typename = decltype(std::declval<const C&>().size())>
  In(const C& c) : In(c.data(), static_cast<size_t>(c.size())) {}  // NOLINT(google-explicit-constructor)

  const void* data() const { return data_; }
  size_t count() const { return count_; }
  nnd_dtype dtype() const { return dtype_; }

 private:
  const void* data_;
  size_t count_;
  nnd_dtype dtype_;
};

// An output buffer of a run.
class Out {
 public:
  template <typename T, typename = std::enable_if_t<!std::is_const_v<T>>>
  Out(T* data, size_t count) : data_(data), count_(count), dtype_(detail::dtype_of<T>()) {}
  template <typename C, typename = decltype(std::declval<C&>().size()),
            typename = std::enable_if_t<!std::is_const_v<detail::element_of<C>>>>
  Out(C& c) : Out(c.data(), static_cast<size_t>(c.size())) {}  // NOLINT(google-explicit-constructor)

  void* data() const { return data_; }
  size_t count() const { return count_; }
  nnd_dtype dtype() const { return dtype_; }

 private:
  void* data_;
  size_t count_;
  nnd_dtype dtype_;
};

// The options of a model, spelled as in a `models` entry of nnd.yaml (nnd_options_set).
class Options {
 public:
  Options() { detail::check(nnd_options_new(&o_)); }
  ~Options() { nnd_options_free(o_); }
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;
  Options(Options&& other) noexcept : o_(std::exchange(other.o_, nullptr)) {}
  Options& operator=(Options&& other) noexcept {
    std::swap(o_, other.o_);
    return *this;
  }

  Options& set(const std::string& key, const std::string& value) & {
    detail::check(nnd_options_set(o_, key.c_str(), value.c_str()));
    return *this;
  }
  Options&& set(const std::string& key, const std::string& value) && { return std::move(set(key, value)); }

  const nnd_options_t* get() const noexcept { return o_; }

 private:
  nnd_options_t* o_ = nullptr;
};

struct TensorInfo {
  std::string name;
  nnd_dtype dtype = NND_FLOAT32;
  std::vector<int64_t> dims;  // one sample
  size_t sample_elements = 0;
  size_t sample_bytes = 0;
};

class Model {
 public:
  explicit Model(const std::string& path, const Options& options = Options()) {
    detail::check(nnd_model_open(path.c_str(), options.get(), &m_));
  }
  ~Model() { nnd_model_close(m_); }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&& other) noexcept : m_(std::exchange(other.m_, nullptr)) {}
  Model& operator=(Model&& other) noexcept {
    std::swap(m_, other.m_);
    return *this;
  }

  size_t num_inputs() const { return nnd_model_num_inputs(m_); }
  size_t num_outputs() const { return nnd_model_num_outputs(m_); }
  TensorInfo input(size_t index) const { return info(index, true); }
  TensorInfo output(size_t index) const { return info(index, false); }
  std::string engine() const { return nnd_model_engine(m_); }
  std::string summary() const { return nnd_model_summary(m_); }

  // Runs `batch` samples; see the top of this file for the checks made first.
  void run(uint32_t batch, std::initializer_list<In> inputs, std::initializer_list<Out> outputs) {
    run(batch, std::vector<In>(inputs), std::vector<Out>(outputs));
  }
  void run(uint32_t batch, const std::vector<In>& inputs, const std::vector<Out>& outputs) {
    check_buffers(batch, inputs, true);
    check_buffers(batch, outputs, false);
    std::vector<const void*> in;
    std::vector<void*> out;
    for (const In& i : inputs) in.push_back(i.data());
    for (const Out& o : outputs) out.push_back(o.data());
    detail::check(nnd_model_run(m_, batch, in.data(), out.data()));
  }

  nnd_model_t* get() const noexcept { return m_; }

 private:
  TensorInfo info(size_t index, bool is_input) const {
    nnd_tensor_info_t t{};
    t.struct_size = sizeof t;
    const uint32_t i = index > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(index);
    detail::check(is_input ? nnd_model_input(m_, i, &t) : nnd_model_output(m_, i, &t));
    return TensorInfo{t.name, t.dtype, std::vector<int64_t>(t.dims, t.dims + t.rank),
                      static_cast<size_t>(t.sample_elements), static_cast<size_t>(t.sample_bytes)};
  }

  template <typename Buffer>
  void check_buffers(uint32_t batch, const std::vector<Buffer>& buffers, bool is_input) const {
    const char* side = is_input ? "input" : "output";
    const size_t want = is_input ? num_inputs() : num_outputs();
    if (buffers.size() != want) {
      throw Error(NND_E_INVALID_ARGUMENT, std::to_string(buffers.size()) + " " + side + " buffers given, the model has " +
                                              std::to_string(want));
    }
    for (size_t k = 0; k < buffers.size(); ++k) {
      const TensorInfo t = info(k, is_input);
      const std::string what = std::string(side) + " " + std::to_string(k) + " '" + t.name + "'";
      if (buffers[k].dtype() != t.dtype) {
        throw Error(NND_E_INVALID_ARGUMENT,
                    what + " is " + detail::dtype_name(t.dtype) + ", the buffer holds " +
                        detail::dtype_name(buffers[k].dtype()) +
                        " (libnnd converts nothing unasked: convert the data, or open the model with "
                        "inputs.NAME set to the type you send)");
      }
      const size_t elements = static_cast<size_t>(batch) * t.sample_elements;
      if (buffers[k].count() != elements) {
        throw Error(NND_E_INVALID_ARGUMENT, what + ": the buffer has " + std::to_string(buffers[k].count()) +
                                                " elements, batch " + std::to_string(batch) + " needs " +
                                                std::to_string(elements));
      }
    }
  }

  nnd_model_t* m_ = nullptr;
};

}  // namespace libnnd

#endif  // NND_HPP
