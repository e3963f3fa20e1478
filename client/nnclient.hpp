// nnclient.hpp — header-only C++ wrapper of the nnclient C API (nnclient.h), for C++17 and later.
//
//   nnclient::Client client;                          // default endpoint; throws on failure
//   nnclient::ModelInfo ball = client.model_info("ball");
//   std::vector<float> out(batch * ball.output(0).sample_bytes / sizeof(float));
//   client.infer(ball, {nnclient::as_bytes(patches)}, batch, {nnclient::as_writable_bytes(out)},
//                std::chrono::milliseconds(50));
//
//   nnclient::Request r = client.begin(detector, 1);  // zero-copy
//   nnclient::span<uint8_t> image = r.input<uint8_t>(0);   // fill in place
//   r.submit();
//   r.wait(std::chrono::milliseconds(50));
//   nnclient::span<const float> result = r.output<float>(0);  // read in place until r is destroyed
//
// Views: nnclient::span<T> is std::span<T> when the standard library has it (C++20,
// __cpp_lib_span); under C++17 it is a small pointer + size view of its own with the same
// members used here (data, size, size_bytes, empty, begin, end, operator[]), constructible from a
// pointer and a size, a C array, std::array, std::vector or any container with data() and size().
//
// Errors: every failure throws nnclient::Error (a std::runtime_error) carrying the nnclient_status
// (`status()`) and a message "NNCLIENT_E_TIMEOUT: <detail from nnclient_last_error>". Where a
// failure is an expected outcome on the hot path, the try_* functions (try_infer, Request::try_wait)
// return the nnclient_status instead of throwing.
//
// Ownership and threads: Client and Request are move-only RAII types. A Request must be destroyed
// (or release()d) before the Client it came from; like the C handle, a Client and its Requests are
// used by one thread at a time.
#ifndef NNCLIENT_HPP
#define NNCLIENT_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "nnclient.hpp needs C++17 or later (-std=c++17); from C or older C++ use nnclient.h"
#endif

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include "nnclient.h"

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
#define NNCLIENT_HPP_STD_SPAN 1
#else
#define NNCLIENT_HPP_STD_SPAN 0
#endif

namespace nnclient {

#if NNCLIENT_HPP_STD_SPAN
template <typename T>
using span = std::span<T>;
#else
// C++17: a minimal contiguous view (no static extent, no subspans).
template <typename T>
class span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using size_type = size_t;
  using pointer = T*;
  using iterator = T*;

  constexpr span() noexcept = default;
  constexpr span(T* p, size_t n) noexcept : p_(p), n_(n) {}
  template <size_t N>
  constexpr span(T (&a)[N]) noexcept : p_(a), n_(N) {}
  // span<const U> from span<U>.
  template <typename U, typename = std::enable_if_t<std::is_convertible_v<U (*)[], T (*)[]>>>
  constexpr span(const span<U>& o) noexcept : p_(o.data()), n_(o.size()) {}
  // Any contiguous container with data() and size() (std::vector, std::array, std::string).
  template <typename C,
            typename = std::enable_if_t<
                !std::is_same_v<std::remove_cv_t<std::remove_reference_t<C>>, span> &&
                std::is_convertible_v<std::remove_pointer_t<decltype(std::declval<C&>().data())> (*)[],
                                      T (*)[]>>,
            typename = decltype(std::declval<C&>().size())>
  constexpr span(C&& c) noexcept : p_(c.data()), n_(static_cast<size_t>(c.size())) {}

  constexpr T* data() const noexcept { return p_; }
  constexpr size_t size() const noexcept { return n_; }
  constexpr size_t size_bytes() const noexcept { return n_ * sizeof(T); }
  constexpr bool empty() const noexcept { return n_ == 0; }
  constexpr T* begin() const noexcept { return p_; }
  constexpr T* end() const noexcept { return p_ + n_; }
  constexpr T& operator[](size_t i) const noexcept { return p_[i]; }
  constexpr T& front() const noexcept { return p_[0]; }
  constexpr T& back() const noexcept { return p_[n_ - 1]; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};
#endif

class Error : public std::runtime_error {
 public:
  Error(nnclient_status status, const std::string& detail)
      : std::runtime_error(std::string(nnclient_status_name(status)) + ": " +
                           (detail.empty() ? nnclient_strerror(status) : detail)),
        status_(status) {}
  nnclient_status status() const noexcept { return status_; }

 private:
  nnclient_status status_;
};

using Status = nnclient_status;
using TensorInfo = nnclient_tensor_info;
using Stats = nnclient_model_stats_t;
using Metrics = nnclient_model_metrics_t;
using DaemonInfo = nnclient_daemon_info_t;
using ClientInfo = nnclient_client_info_t;
using OpenOptions = nnclient_open_options_t;

// Byte views of any contiguous buffer (a container with data() and size(), a span, or a C
// array), for infer().
template <typename T, size_t N>
span<const std::byte> as_bytes(const T (&a)[N]) {
  return {reinterpret_cast<const std::byte*>(a), N * sizeof(T)};
}
template <typename T, size_t N>
span<std::byte> as_writable_bytes(T (&a)[N]) {
  static_assert(!std::is_const_v<T>, "as_writable_bytes needs a writable buffer");
  return {reinterpret_cast<std::byte*>(a), N * sizeof(T)};
}
template <typename C>
span<const std::byte> as_bytes(const C& c) {
  return {reinterpret_cast<const std::byte*>(c.data()), c.size() * sizeof(*c.data())};
}
template <typename C>
span<std::byte> as_writable_bytes(C& c) {
  static_assert(!std::is_const_v<std::remove_reference_t<decltype(*c.data())>>,
                "as_writable_bytes needs a writable buffer");
  return {reinterpret_cast<std::byte*>(c.data()), c.size() * sizeof(*c.data())};
}

// A model's inputs and outputs as the daemon serves them (a copy of nnclient_model_info_t).
class ModelInfo {
 public:
  ModelInfo() = default;
  explicit ModelInfo(const nnclient_model_info_t& raw) : raw_(raw) {}

  std::string name() const { return raw_.name; }
  std::string engine() const { return raw_.engine; }
  uint32_t version() const { return raw_.version; }
  uint32_t max_batch() const { return raw_.max_batch; }
  uint64_t signature() const { return raw_.signature; }
  span<const TensorInfo> inputs() const { return {raw_.inputs, raw_.num_inputs}; }
  span<const TensorInfo> outputs() const { return {raw_.outputs, raw_.num_outputs}; }
  const TensorInfo& input(size_t k) const { return inputs()[k]; }
  const TensorInfo& output(size_t k) const { return outputs()[k]; }
  const nnclient_model_info_t& raw() const { return raw_; }

 private:
  nnclient_model_info_t raw_{};
};

inline std::string dims_string(const TensorInfo& t) {
  std::string s = "(";
  for (uint32_t d = 0; d < t.rank; ++d) {
    s += (d ? ", " : "") + std::to_string(t.dims[d]);
  }
  return s + (t.rank == 1 ? ",)" : ")");
}
inline const char* dtype_name(nnclient_dtype t) {
  return t == NNCLIENT_UINT8 ? "uint8" : t == NNCLIENT_INT64 ? "int64" : "float32";
}

namespace detail {
// The dtype a typed view of a tensor needs: float for float32, uint8_t (unsigned char) for uint8,
// int64_t for int64 (ArgMax indices); std::byte views any tensor as raw bytes. Any other T does
// not compile.
template <typename T>
constexpr bool is_bytes() {
  return std::is_same_v<std::remove_cv_t<T>, std::byte>;
}
template <typename T>
constexpr nnclient_dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_same_v<U, float> || std::is_same_v<U, uint8_t> || std::is_same_v<U, int64_t> ||
                    std::is_same_v<U, std::byte>,
                "a tensor view is float (float32), uint8_t (uint8), int64_t (int64) or std::byte (raw bytes)");
  return std::is_same_v<U, uint8_t> ? NNCLIENT_UINT8 : std::is_same_v<U, int64_t> ? NNCLIENT_INT64 : NNCLIENT_FLOAT32;
}
}  // namespace detail

inline uint64_t to_us(std::chrono::microseconds t) {
  return t.count() <= 0 ? 0 : static_cast<uint64_t>(t.count());
}

class Client;

// One zero-copy request: reserve (Client::begin), fill inputs in place, submit, wait, read
// outputs in place. The destructor returns the slot (a request still in flight is abandoned; its
// slot comes back when the daemon finishes it).
class Request {
 public:
  Request() = default;
  Request(Request&& o) noexcept { *this = std::move(o); }
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      release();
      c_ = std::exchange(o.c_, nullptr);
      r_ = std::exchange(o.r_, nullptr);
      batch_ = o.batch_;
      in_ = o.in_;
      out_ = o.out_;
      in_dtype_ = o.in_dtype_;
      out_dtype_ = o.out_dtype_;
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { release(); }

  explicit operator bool() const { return r_ != nullptr; }
  uint32_t batch() const { return batch_; }

  // Input k (batch samples) as a span of T, to be filled before submit(). T must match the
  // input's dtype (float for float32, uint8_t for uint8) or be std::byte: a mismatch throws
  // Error(NNCLIENT_E_INVALID_ARGUMENT) rather than handing out memory of another type.
  template <typename T = std::byte>
  span<T> input(uint32_t k) {
    void* p = r_ ? nnclient_request_input(r_, k) : nullptr;
    if (!p) throw Error(NNCLIENT_E_INVALID_ARGUMENT, "no input " + std::to_string(k) +
                                                         " (bad index, or already submitted)");
    check_dtype<T>("input", k, in_dtype_[k]);
    return {static_cast<T*>(p), in_.at(k) / sizeof(T)};
  }

  void submit(std::chrono::microseconds deadline = std::chrono::microseconds(0)) {
    nnclient_request_options o{};
    o.deadline_us = deadline.count();
    check(nnclient_submit(c_, r_, &o));
  }

  // Waits for the answer (timeout 0 = forever); throws on any failure (also on timeout).
  void wait(std::chrono::microseconds timeout) { check(try_wait(timeout)); }
  Status try_wait(std::chrono::microseconds timeout) {
    if (!r_) return NNCLIENT_E_INVALID_ARGUMENT;
    return nnclient_wait(c_, r_, to_us(timeout));
  }

  // Output k of a completed request, in place in shared memory (float, or std::byte).
  template <typename T = float>
  span<const T> output(uint32_t k) const {
    const void* p = r_ ? nnclient_request_output(r_, k) : nullptr;
    if (!p) throw Error(NNCLIENT_E_INVALID_ARGUMENT, "no output " + std::to_string(k) +
                                                         " (bad index, or not completed)");
    check_dtype<T>("output", k, out_dtype_[k]);
    return {static_cast<const T*>(p), out_.at(k) / sizeof(T)};
  }

  void release() noexcept {
    if (r_) nnclient_request_release(c_, r_);
    r_ = nullptr;
  }

 private:
  friend class Client;
  Request(nnclient_t* c, nnclient_request_t* r, const ModelInfo& info, uint32_t batch)
      : c_(c), r_(r), batch_(batch) {
    for (size_t k = 0; k < info.inputs().size(); ++k) {
      in_[k] = info.input(k).sample_bytes * batch;
      in_dtype_[k] = info.input(k).dtype;
    }
    for (size_t k = 0; k < info.outputs().size(); ++k) {
      out_[k] = info.output(k).sample_bytes * batch;
      out_dtype_[k] = info.output(k).dtype;
    }
  }
  void check(Status s) const {
    if (s != NNCLIENT_OK) throw Error(s, nnclient_last_error(c_));
  }
  template <typename T>
  static void check_dtype(const char* side, uint32_t k, nnclient_dtype actual) {
    if (detail::is_bytes<T>() || detail::dtype_of<T>() == actual) return;
    throw Error(NNCLIENT_E_INVALID_ARGUMENT,
                std::string(side) + " " + std::to_string(k) + " is " + dtype_name(actual) + ", not " +
                    dtype_name(detail::dtype_of<T>()) + ": ask for " + side + "<" +
                    (actual == NNCLIENT_UINT8 ? "uint8_t" : actual == NNCLIENT_INT64 ? "int64_t" : "float") + ">(" +
                    std::to_string(k) +
                    ") (or std::byte for raw bytes); nothing is converted");
  }

  nnclient_t* c_ = nullptr;
  nnclient_request_t* r_ = nullptr;
  uint32_t batch_ = 0;
  std::array<size_t, NNCLIENT_MAX_TENSORS> in_{}, out_{};
  std::array<nnclient_dtype, NNCLIENT_MAX_TENSORS> in_dtype_{}, out_dtype_{};
};

class Client {
 public:
  // Connects (endpoint nullptr or "" = default endpoint); throws Error when it cannot.
  explicit Client(const char* endpoint = nullptr) {
    nnclient_status s = NNCLIENT_OK;
    c_ = nnclient_open(endpoint && *endpoint ? endpoint : nullptr, &s);
    if (!c_) throw Error(s, nnclient_last_error(nullptr));
  }
  explicit Client(const std::string& endpoint) : Client(endpoint.c_str()) {}
  // Connects saying what this handle will ask for (nnclient_open_with); struct_size is set here.
  explicit Client(OpenOptions options) {
    options.struct_size = sizeof(options);
    nnclient_status s = NNCLIENT_OK;
    c_ = nnclient_open_with(&options, &s);
    if (!c_) throw Error(s, nnclient_last_error(nullptr));
  }
  Client(Client&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Client& operator=(Client&& o) noexcept {
    if (this != &o) {
      nnclient_close(c_);
      c_ = std::exchange(o.c_, nullptr);
    }
    return *this;
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() { nnclient_close(c_); }

  nnclient_t* get() const { return c_; }
  std::string last_error() const { return nnclient_last_error(c_); }

  ModelInfo model_info(const std::string& name) {
    nnclient_model_info_t raw{};
    check(nnclient_model_info(c_, name.c_str(), &raw));
    return ModelInfo(raw);
  }

  std::vector<ModelInfo> list_models() {
    std::vector<ModelInfo> all;
    for (uint32_t i = 0;; ++i) {
      nnclient_model_info_t raw{};
      const Status s = nnclient_list_models(c_, i, &raw);
      if (s == NNCLIENT_E_UNKNOWN_MODEL) break;
      check(s);
      all.emplace_back(raw);
    }
    return all;
  }

  std::vector<Stats> stats() {
    std::vector<Stats> all;
    for (uint32_t i = 0;; ++i) {
      Stats st{};
      const Status s = nnclient_stats(c_, i, &st);
      if (s == NNCLIENT_E_UNKNOWN_MODEL) break;
      check(s);
      all.push_back(st);
    }
    return all;
  }

  // Per-model metrics (histograms, errors by status, queue depth), same order as stats().
  std::vector<Metrics> metrics() {
    std::vector<Metrics> all;
    for (uint32_t i = 0;; ++i) {
      Metrics m{};
      m.struct_size = sizeof(m);
      const Status s = nnclient_model_metrics(c_, i, &m);
      if (s == NNCLIENT_E_UNKNOWN_MODEL) break;
      check(s);
      all.push_back(m);
    }
    return all;
  }

  // Daemon-wide figures: version, git revision, RSS, clients, reloads.
  DaemonInfo daemon_info() {
    DaemonInfo d{};
    d.struct_size = sizeof(d);
    check(nnclient_daemon_info(c_, &d));
    return d;
  }

  // The connected clients with the shared memory each holds (nnctl stats).
  std::vector<ClientInfo> clients() {
    std::vector<ClientInfo> all;
    for (uint32_t i = 0;; ++i) {
      ClientInfo ci{};
      ci.struct_size = sizeof(ci);
      const Status s = nnclient_client_info(c_, i, &ci);
      if (s == NNCLIENT_E_UNKNOWN_MODEL) break;
      check(s);
      all.push_back(ci);
    }
    return all;
  }

  // Asks the daemon to reload; returns its message, throws if refused.
  std::string reload() {
    check(nnclient_reload(c_));
    return nnclient_last_error(c_);
  }

  // Copying inference: inputs[k] / outputs[k] must hold exactly batch * sample_bytes bytes.
  void infer(const ModelInfo& info, std::initializer_list<span<const std::byte>> inputs,
             uint32_t batch, std::initializer_list<span<std::byte>> outputs,
             std::chrono::microseconds timeout) {
    infer(info, span<const span<const std::byte>>(inputs.begin(), inputs.size()), batch,
          span<const span<std::byte>>(outputs.begin(), outputs.size()), timeout);
  }
  void infer(const ModelInfo& info, span<const span<const std::byte>> inputs,
             uint32_t batch, span<const span<std::byte>> outputs,
             std::chrono::microseconds timeout) {
    const std::string bad = check_buffers(info, inputs, batch, outputs);
    if (!bad.empty()) throw Error(NNCLIENT_E_SHAPE, bad);
    check(try_infer(info, inputs, batch, outputs, timeout));
  }
  // As infer(), returning the status (detail in last_error(); NNCLIENT_E_SHAPE without detail
  // when a buffer has the wrong size).
  Status try_infer(const ModelInfo& info, span<const span<const std::byte>> inputs,
                   uint32_t batch, span<const span<std::byte>> outputs,
                   std::chrono::microseconds timeout) {
    if (!check_buffers(info, inputs, batch, outputs).empty()) return NNCLIENT_E_SHAPE;
    const void* in[NNCLIENT_MAX_TENSORS] = {};
    void* out[NNCLIENT_MAX_TENSORS] = {};
    for (size_t k = 0; k < inputs.size(); ++k) in[k] = inputs[k].data();
    for (size_t k = 0; k < outputs.size(); ++k) out[k] = outputs[k].data();
    return nnclient_infer(c_, &info.raw(), in, batch, out, to_us(timeout));
  }

  // Zero-copy request for `batch` samples (see Request).
  Request begin(const ModelInfo& info, uint32_t batch) {
    nnclient_request_t* r = nullptr;
    check(nnclient_request_begin(c_, &info.raw(), batch, &r));
    return Request(c_, r, info, batch);
  }

 private:
  void check(Status s) const {
    if (s != NNCLIENT_OK) throw Error(s, nnclient_last_error(c_));
  }
  static std::string check_buffers(const ModelInfo& info,
                                   span<const span<const std::byte>> inputs,
                                   uint32_t batch, span<const span<std::byte>> outputs) {
    if (inputs.size() != info.inputs().size() || outputs.size() != info.outputs().size()) {
      return "model '" + info.name() + "' takes " + std::to_string(info.inputs().size()) +
             " inputs and " + std::to_string(info.outputs().size()) + " outputs, got " +
             std::to_string(inputs.size()) + " and " + std::to_string(outputs.size());
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k].size() != info.input(k).sample_bytes * batch) {
        return "input '" + std::string(info.input(k).name) + "' has " +
               std::to_string(inputs[k].size()) + " bytes, batch " + std::to_string(batch) +
               " needs " + std::to_string(info.input(k).sample_bytes * batch);
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].size() != info.output(k).sample_bytes * batch) {
        return "output '" + std::string(info.output(k).name) + "' has room for " +
               std::to_string(outputs[k].size()) + " bytes, batch " + std::to_string(batch) +
               " needs " + std::to_string(info.output(k).sample_bytes * batch);
      }
    }
    return {};
  }

  nnclient_t* c_ = nullptr;
};

}  // namespace nnclient

#endif  // NNCLIENT_HPP
