// nnctl: control and inspect a running nnd daemon through libnnclient.
//
//   (kSynopsis below)
//
// Exit codes: 0 success, 1 daemon/model/input error (the message names the nnclient status),
// 2 usage error.
#include <CLI/CLI.hpp>

#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/nnclient.hpp"
#include "core/io/model_inputs.h"
#include "core/io/npy.h"
#include "core/util/error.h"
#include "nnd_version.h"

namespace {

// Every subcommand with its options: the usage lines of --help (help2man makes them the man
// page's SYNOPSIS) and what nnctl without a subcommand prints.
std::string synopsis(const std::string& name) {
  return "Usage: " + name + " [--endpoint E] models | stats [--json] | metrics | reload\n"
         "   or: " + name + " [--endpoint E] top [--once] [--interval-ms MS]\n"
         "   or: " + name + " [--endpoint E] infer MODEL [--input NAME=FILE.npy]... "
         "[--output-dir DIR] [--batch N] [--timeout-ms T]\n";
}

// CLI11's usage line for the subcommands, the synopsis for nnctl itself.
class SynopsisFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (app->get_parent() != nullptr) return CLI::Formatter::make_usage(app, std::move(name));
    return synopsis(name);
  }
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string shape_string(int64_t batch, const nnclient::TensorInfo& t) {
  std::string s = "(" + std::to_string(batch);
  for (uint32_t d = 0; d < t.rank; ++d) s += ", " + std::to_string(t.dims[d]);
  return s + ")";
}

std::string npy_shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// ---- infer ----------------------------------------------------------------------------------

int cmd_infer(nnclient::Client& client, const std::string& model,
              const std::vector<std::string>& specs, const std::string& output_dir,
              int64_t timeout_ms, int64_t batch_opt) {
  std::map<std::string, std::string> files;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw UsageError("--input expects NAME=FILE.npy, got '" + spec + "'");
    }
    if (!files.emplace(spec.substr(0, eq), spec.substr(eq + 1)).second) {
      throw UsageError("input '" + spec.substr(0, eq) + "' given twice");
    }
  }
  const nnclient::ModelInfo info = client.model_info(model);
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const auto& t : info.inputs()) known = known || name == t.name;
    if (!known) {
      std::string names;
      for (const auto& t : info.inputs()) names += (names.empty() ? "" : ", ") + std::string(t.name);
      throw nnd::Error(nnd::ErrorCode::kInvalidArgument, "model '" + model + "' has no input '" + name + "' (inputs: " + names + ")");
    }
  }

  // Read the files; the batch is their first axis (all equal), or --batch, or 1.
  std::vector<nnd::NpyArray> arrays(info.inputs().size());
  int64_t batch = batch_opt;
  for (size_t k = 0; k < info.inputs().size(); ++k) {
    const nnclient::TensorInfo& t = info.input(k);
    const auto it = files.find(t.name);
    if (it == files.end()) continue;
    nnd::NpyArray a = nnd::read_npy(it->second);
    bool ok = a.shape.size() == t.rank + 1;
    for (uint32_t d = 0; ok && d < t.rank; ++d) ok = a.shape[d + 1] == t.dims[d];
    if (!ok) {
      throw nnd::Error(nnd::ErrorCode::kInvalidArgument, it->second + ": shape " + npy_shape_string(a.shape) + " does not fit input '" +
                       t.name + "' " + shape_string(-1, t).replace(1, 2, "N") +
                       " (batch first)");
    }
    if (batch > 0 && a.shape[0] != batch) {
      throw nnd::Error(nnd::ErrorCode::kInvalidArgument, it->second + ": batch " + std::to_string(a.shape[0]) + " disagrees with " +
                       std::to_string(batch) + " (other inputs or --batch)");
    }
    batch = a.shape[0];
    nnd::check_input_file_dtype(a, it->second);
    if (t.dtype == NNCLIENT_FLOAT32 && a.dtype == nnd::DType::kUInt8) {
      // uint8 files are converted to float32, as nnrun does for camera bytes.
      std::vector<uint8_t> f(a.bytes.size() * 4);
      for (size_t i = 0; i < a.bytes.size(); ++i) {
        const float v = a.bytes[i];
        std::memcpy(&f[i * 4], &v, 4);
      }
      a.bytes = std::move(f);
      a.dtype = nnd::DType::kFloat32;
    } else if (t.dtype == NNCLIENT_UINT8 && a.dtype != nnd::DType::kUInt8) {
      throw nnd::Error(nnd::ErrorCode::kInvalidArgument, it->second + ": input '" + std::string(t.name) +
                       "' is uint8 in the daemon's config; give a uint8 .npy file");
    }
    arrays[k] = std::move(a);
  }
  if (batch <= 0) batch = 1;
  if (batch > UINT32_MAX) throw nnd::Error(nnd::ErrorCode::kInvalidArgument, "batch too large");
  // Inputs without a file: nnrun's deterministic pattern (float32), or for uint8 inputs the
  // same sequence before the division: ((j*37 + k*101) mod 256).
  for (size_t k = 0; k < info.inputs().size(); ++k) {
    const nnclient::TensorInfo& t = info.input(k);
    if (!arrays[k].bytes.empty() || files.count(t.name)) continue;
    const nnd::Dims dims(t.dims, t.dims + t.rank);
    if (t.dtype == NNCLIENT_FLOAT32) {
      arrays[k] = nnd::deterministic_input(dims, batch, k);
    } else {
      nnd::NpyArray a;
      a.dtype = nnd::DType::kUInt8;
      a.bytes.resize(t.sample_bytes * static_cast<size_t>(batch));
      for (size_t j = 0; j < a.bytes.size(); ++j) a.bytes[j] = static_cast<uint8_t>((j * 37 + k * 101) % 256);
      arrays[k] = std::move(a);
    }
    std::printf("input  %s: %s %s from pattern\n", t.name, shape_string(batch, t).c_str(),
                nnclient::dtype_name(t.dtype));
  }
  for (size_t k = 0; k < info.inputs().size(); ++k) {
    const nnclient::TensorInfo& t = info.input(k);
    if (files.count(t.name)) {
      std::printf("input  %s: %s %s from %s\n", t.name, shape_string(batch, t).c_str(),
                  nnclient::dtype_name(t.dtype), files[t.name].c_str());
    }
  }

  // 8 bytes per element: room for float32 and int64 (ArgMax indices) outputs, 8-byte aligned.
  std::vector<std::vector<int64_t>> outs(info.outputs().size());
  std::vector<std::span<const std::byte>> in_spans;
  std::vector<std::span<std::byte>> out_spans;
  for (const nnd::NpyArray& a : arrays) in_spans.push_back(std::as_bytes(std::span(a.bytes)));
  for (size_t k = 0; k < outs.size(); ++k) {
    const size_t bytes = info.output(k).sample_bytes * static_cast<size_t>(batch);
    outs[k].resize((bytes + 7) / 8);
    out_spans.push_back(std::as_writable_bytes(std::span(outs[k])).first(bytes));
  }
  const auto t0 = std::chrono::steady_clock::now();
  client.infer(info, in_spans, static_cast<uint32_t>(batch), out_spans,
               std::chrono::milliseconds(timeout_ms));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("model %s (version %u, engine %s): batch %lld in %.3f ms\n", info.name().c_str(),
              info.version(), info.engine().c_str(), static_cast<long long>(batch), ms);

  if (!output_dir.empty()) std::filesystem::create_directories(output_dir);
  for (size_t k = 0; k < outs.size(); ++k) {
    const nnclient::TensorInfo& t = info.output(k);
    const bool indices = t.dtype == NNCLIENT_INT64;
    const size_t n = t.sample_bytes / (indices ? 8 : 4) * static_cast<size_t>(batch);
    const auto* f = reinterpret_cast<const float*>(outs[k].data());
    auto value = [&](size_t i) { return indices ? static_cast<double>(outs[k][i]) : static_cast<double>(f[i]); };
    std::printf("output %s: %s %s", t.name, shape_string(batch, t).c_str(), nnclient::dtype_name(t.dtype));
    if (n > 0) {
      double mn = value(0), mx = mn;
      for (size_t i = 1; i < n; ++i) {
        mn = std::min(mn, value(i));
        mx = std::max(mx, value(i));
      }
      std::printf("  min %.6g max %.6g", mn, mx);
    }
    std::printf("\n");
    if (!output_dir.empty()) {
      std::string file = t.name;
      for (char& ch : file) {
        if (ch == '/') ch = '_';
      }
      const std::string path = (std::filesystem::path(output_dir) / (file + ".npy")).string();
      std::vector<int64_t> shape{batch};
      shape.insert(shape.end(), t.dims, t.dims + t.rank);
      nnd::write_npy(path, shape, indices ? nnd::DType::kInt64 : nnd::DType::kFloat32, outs[k].data());
      std::printf("wrote %s\n", path.c_str());
    }
  }
  return 0;
}

// ---- models / stats / reload ---------------------------------------------------------------

// "nnd 1.0.0 (git abc1234), pid 123, up 42 s", or a note for a daemon without DAEMON_INFO.
std::string daemon_line(nnclient::Client& client) {
  try {
    const nnclient::DaemonInfo d = client.daemon_info();
    char b[160];
    std::snprintf(b, sizeof b, "nnd %s (git %s), pid %u, up %.0f s", d.version, d.git_revision,
                  d.pid, static_cast<double>(d.uptime_ns) / 1e9);
    return b;
  } catch (const nnclient::Error& e) {
    if (e.status() != NNCLIENT_E_PROTOCOL) throw;
    return "nnd (version unknown: the daemon is older than nnctl)";
  }
}

int cmd_models(nnclient::Client& client) {
  std::printf("%s\n", daemon_line(client).c_str());
  const std::vector<nnclient::ModelInfo> all = client.list_models();
  if (all.empty()) std::printf("(no models served)\n");
  for (const nnclient::ModelInfo& m : all) {
    std::printf("%s  version %u  engine %s  max_batch %u  signature %016llx\n", m.name().c_str(),
                m.version(), m.engine().c_str(), m.max_batch(),
                static_cast<unsigned long long>(m.signature()));
    for (const auto& t : m.inputs()) {
      std::printf("  input  %-24s %-20s %s\n", t.name, nnclient::dims_string(t).c_str(),
                  nnclient::dtype_name(t.dtype));
    }
    for (const auto& t : m.outputs()) {
      std::printf("  output %-24s %-20s %s\n", t.name, nnclient::dims_string(t).c_str(),
                  nnclient::dtype_name(t.dtype));
    }
  }
  return 0;
}

std::string ms(uint64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", static_cast<double>(ns) / 1e6);
  return b;
}

// One table of per-model figures; `rates` (requests per second) when known.
void print_stats(const std::vector<nnclient::Stats>& stats, const std::map<std::string, double>* rates,
                 const char* eol) {
  std::printf("%-20s %10s %9s %10s %10s %9s %9s %9s %8s %8s%s", "MODEL", "REQUESTS",
              rates ? "REQ/S" : "", "BATCHES", "MEAN BATCH", "P50 MS", "P99 MS", "MAX MS",
              "ERRORS", "DL MISS", eol);
  if (stats.empty()) std::printf("(no models served)%s", eol);
  for (const nnclient::Stats& s : stats) {
    char rate[32] = "";
    if (rates) {
      const auto it = rates->find(s.name);
      if (it != rates->end()) std::snprintf(rate, sizeof rate, "%.1f", it->second);
      else std::snprintf(rate, sizeof rate, "-");
    }
    char mean[32];
    if (s.batches) {
      std::snprintf(mean, sizeof mean, "%.2f",
                    static_cast<double>(s.samples) / static_cast<double>(s.batches));
    } else {
      std::snprintf(mean, sizeof mean, "-");
    }
    std::printf("%-20s %10llu %9s %10llu %10s %9s %9s %9s %8llu %8llu%s", s.name,
                static_cast<unsigned long long>(s.requests), rate,
                static_cast<unsigned long long>(s.batches), mean, ms(s.latency_p50_ns).c_str(),
                ms(s.latency_p99_ns).c_str(), ms(s.latency_max_ns).c_str(),
                static_cast<unsigned long long>(s.errors),
                static_cast<unsigned long long>(s.deadline_misses), eol);
  }
}

// ---- stats --json / metrics ---------------------------------------------------------------

std::string u64(uint64_t v) { return std::to_string(v); }

// Status codes a request can be answered with (always listed, so series exist before the first
// error), plus any other code the daemon counted.
std::vector<uint32_t> error_codes(const nnclient::Metrics& m) {
  std::vector<uint32_t> codes;
  for (uint32_t s = 1; s < NNCLIENT_STATUS_CODES; ++s) {
    const bool request_status = s == NNCLIENT_E_UNKNOWN_MODEL || s == NNCLIENT_E_MODEL_CHANGED ||
                                s == NNCLIENT_E_SHAPE || s == NNCLIENT_E_DEADLINE ||
                                s == NNCLIENT_E_PROTOCOL || s == NNCLIENT_E_OVERLOADED ||
                                s == NNCLIENT_E_INTERNAL || s == NNCLIENT_E_SHUTTING_DOWN ||
                                s == NNCLIENT_E_TOO_MANY_REQUESTS ||
                                s == NNCLIENT_E_REQUEST_TOO_LARGE;
    if (request_status || m.errors_by_status[s]) codes.push_back(s);
  }
  return codes;
}

// Status as named in nnclient.h; the daemon's NND_IPC_E_BAD_REQUEST (9) reads as the client's
// NNCLIENT_E_PROTOCOL, the code a client sees.
std::string status_label(uint32_t s) {
  return nnclient_status_name(static_cast<nnclient_status>(s));
}

std::string batch_bound(size_t b) {
  return b + 1 == NNCLIENT_BATCH_BUCKETS ? "+Inf" : std::to_string(uint64_t{1} << b);
}

// The schema is documented in docs/metrics.md; keys are only ever added.
int cmd_stats_json(nnclient::Client& client) {
  const nnclient::DaemonInfo d = client.daemon_info();
  const std::vector<nnclient::Metrics> all = client.metrics();
  using Json = nlohmann::ordered_json;  // keys in the documented order
  Json daemon = {{"version", d.version},
                 {"git_revision", d.git_revision},
                 {"pid", d.pid},
                 {"uptime_ns", d.uptime_ns},
                 {"rss_bytes", d.rss_bytes},
                 {"clients", d.clients},
                 {"clients_total", d.clients_total},
                 {"clients_refused", d.clients_refused},
                 {"reloads", d.reloads},
                 {"reloads_failed", d.reloads_failed},
                 {"requests_in_flight", d.requests_in_flight},
                 {"shared_memory_bytes", d.shared_memory_bytes},
                 {"models", d.models}};
  Json clients = Json::array();
  for (const nnclient::ClientInfo& c : client.clients()) {
    clients.push_back({{"name", c.name},
                       {"pid", c.pid},
                       {"uid", c.uid},
                       {"slots", c.slots},
                       {"slot_bytes", c.slot_bytes},
                       {"shared_memory_bytes", c.shared_memory_bytes},
                       {"requests_in_flight", c.requests_in_flight},
                       {"connected_ns", c.connected_ns}});
  }
  Json models = Json::array();
  for (const nnclient::Metrics& m : all) {
    Json mean_batch = nullptr;  // null before the first run
    if (m.batches) {
      mean_batch = std::round(static_cast<double>(m.samples) / static_cast<double>(m.batches) * 1e4) / 1e4;
    }
    Json by_status = Json::object(), latency = Json::object(), batch = Json::object();
    for (const uint32_t s : error_codes(m)) by_status[status_label(s)] = m.errors_by_status[s];
    for (uint32_t b = 0; b < NNCLIENT_LATENCY_BUCKETS; ++b) {
      const uint32_t up = nnclient_latency_bucket_us(b);
      latency[up ? std::to_string(up) : "+Inf"] = m.latency_buckets[b];
    }
    for (size_t b = 0; b < NNCLIENT_BATCH_BUCKETS; ++b) batch[batch_bound(b)] = m.batch_buckets[b];
    models.push_back({{"name", m.name},
                      {"requests", m.requests},
                      {"batches", m.batches},
                      {"samples", m.samples},
                      {"mean_batch", mean_batch},
                      {"errors", m.errors},
                      {"deadline_misses", m.deadline_misses},
                      {"queue_depth", m.queue_depth},
                      {"latency_p50_ns", m.latency_p50_ns},
                      {"latency_p99_ns", m.latency_p99_ns},
                      {"latency_max_ns", m.latency_max_ns},
                      {"latency_sum_ns", m.latency_sum_ns},
                      {"errors_by_status", std::move(by_status)},
                      {"latency_buckets_us", std::move(latency)},
                      {"batch_size_buckets", std::move(batch)}});
  }
  const Json out = {{"schema", 1},
                    {"daemon", std::move(daemon)},
                    {"models", std::move(models)},
                    {"clients", std::move(clients)}};
  std::puts(out.dump(2).c_str());
  return 0;
}

// OpenMetrics label value: backslash, double quote and newline escaped.
std::string label(const std::string& v) {
  std::string o;
  for (const char ch : v) {
    if (ch == '\\') o += "\\\\";
    else if (ch == '"') o += "\\\"";
    else if (ch == '\n') o += "\\n";
    else o += ch;
  }
  return o;
}

std::string seconds(uint64_t ns) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", static_cast<double>(ns) / 1e9);
  return b;
}

// OpenMetrics text exposition (application/openmetrics-text; version=1.0.0), ending in "# EOF".
int cmd_metrics(nnclient::Client& client) {
  const nnclient::DaemonInfo d = client.daemon_info();
  const std::vector<nnclient::Metrics> all = client.metrics();
  std::string o;
  auto family = [&](const char* name, const char* type, const char* unit, const char* help) {
    o += std::string("# TYPE ") + name + " " + type + "\n";
    if (unit) o += std::string("# UNIT ") + name + " " + unit + "\n";
    o += std::string("# HELP ") + name + " " + help + "\n";
  };
  auto sample = [&](const std::string& name, const std::string& labels, const std::string& value) {
    o += name + (labels.empty() ? "" : "{" + labels + "}") + " " + value + "\n";
  };
  family("nnd_build", "info", nullptr, "Version and git revision of the daemon.");
  sample("nnd_build_info",
         "version=\"" + label(d.version) + "\",git_revision=\"" + label(d.git_revision) + "\"", "1");
  family("nnd_uptime_seconds", "gauge", "seconds", "Time since the daemon started serving.");
  sample("nnd_uptime_seconds", "", seconds(d.uptime_ns));
  family("nnd_resident_memory_bytes", "gauge", "bytes", "Resident set size of the daemon.");
  sample("nnd_resident_memory_bytes", "", u64(d.rss_bytes));
  family("nnd_shared_memory_bytes", "gauge", "bytes", "Shared-memory segments of all clients.");
  sample("nnd_shared_memory_bytes", "", u64(d.shared_memory_bytes));
  family("nnd_clients", "gauge", nullptr, "Clients connected now.");
  sample("nnd_clients", "", u64(d.clients));
  family("nnd_clients_accepted", "counter", nullptr, "Client hand-shakes accepted.");
  sample("nnd_clients_accepted_total", "", u64(d.clients_total));
  family("nnd_clients_refused", "counter", nullptr, "Client hand-shakes refused (access, limits).");
  sample("nnd_clients_refused_total", "", u64(d.clients_refused));
  family("nnd_reloads", "counter", nullptr, "Configuration reloads by result.");
  sample("nnd_reloads_total", "result=\"ok\"", u64(d.reloads));
  sample("nnd_reloads_total", "result=\"failed\"", u64(d.reloads_failed));
  family("nnd_requests_in_flight", "gauge", nullptr, "Requests queued or running, all models.");
  sample("nnd_requests_in_flight", "", u64(d.requests_in_flight));
  family("nnd_models", "gauge", nullptr, "Models served.");
  sample("nnd_models", "", u64(d.models));

  auto per_model = [&](const char* name, const char* type, const char* unit, const char* help,
                       const std::function<void(const nnclient::Metrics&, const std::string&)>& fn) {
    family(name, type, unit, help);
    for (const nnclient::Metrics& m : all) fn(m, "model=\"" + label(m.name) + "\"");
  };
  per_model("nnd_model_requests", "counter", nullptr, "Requests answered, any status.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              sample("nnd_model_requests_total", l, u64(m.requests));
            });
  per_model("nnd_model_samples", "counter", nullptr, "Samples run by the engine.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              sample("nnd_model_samples_total", l, u64(m.samples));
            });
  per_model("nnd_model_errors", "counter", nullptr,
            "Requests answered with an error, by nnclient status.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              for (const uint32_t s : error_codes(m)) {
                sample("nnd_model_errors_total", l + ",status=\"" + status_label(s) + "\"",
                       u64(m.errors_by_status[s]));
              }
            });
  per_model("nnd_model_deadline_misses", "counter", nullptr,
            "Requests answered NNCLIENT_E_DEADLINE.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              sample("nnd_model_deadline_misses_total", l, u64(m.deadline_misses));
            });
  per_model("nnd_model_queue_depth", "gauge", nullptr, "Requests queued or running now.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              sample("nnd_model_queue_depth", l, u64(m.queue_depth));
            });
  per_model("nnd_model_batch_size", "histogram", nullptr, "Samples per engine run.",
            [&](const nnclient::Metrics& m, const std::string& l) {
              uint64_t acc = 0;
              for (size_t b = 0; b < NNCLIENT_BATCH_BUCKETS; ++b) {
                acc += m.batch_buckets[b];
                sample("nnd_model_batch_size_bucket", l + ",le=\"" + batch_bound(b) + "\"", u64(acc));
              }
              sample("nnd_model_batch_size_count", l, u64(acc));
              sample("nnd_model_batch_size_sum", l, u64(m.samples));
            });
  per_model("nnd_model_latency_seconds", "histogram", "seconds",
            "Daemon-side latency of requests answered OK (request seen to answer).",
            [&](const nnclient::Metrics& m, const std::string& l) {
              uint64_t acc = 0;
              for (uint32_t b = 0; b < NNCLIENT_LATENCY_BUCKETS; ++b) {
                acc += m.latency_buckets[b];
                const uint32_t up = nnclient_latency_bucket_us(b);
                sample("nnd_model_latency_seconds_bucket",
                       l + ",le=\"" + (up ? seconds(uint64_t{up} * 1000) : "+Inf") + "\"", u64(acc));
              }
              sample("nnd_model_latency_seconds_count", l, u64(acc));
              sample("nnd_model_latency_seconds_sum", l, seconds(m.latency_sum_ns));
            });
  o += "# EOF\n";
  std::fputs(o.c_str(), stdout);
  return 0;
}

std::string mib(uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return b;
}

// One line per connected client with the shared memory it holds (nnctl itself is one of them).
void print_clients(const std::vector<nnclient::ClientInfo>& clients) {
  uint64_t total = 0;
  for (const nnclient::ClientInfo& c : clients) total += c.shared_memory_bytes;
  std::printf("\n%zu client%s, %s MiB of shared memory\n", clients.size(),
              clients.size() == 1 ? "" : "s", mib(total).c_str());
  std::printf("%-20s %8s %8s %6s %12s %10s %9s %10s\n", "CLIENT", "PID", "UID", "SLOTS",
              "SLOT BYTES", "SHM MIB", "IN FLIGHT", "CONNECTED");
  for (const nnclient::ClientInfo& c : clients) {
    char age[32];
    std::snprintf(age, sizeof age, "%.0f s", static_cast<double>(c.connected_ns) / 1e9);
    std::printf("%-20s %8u %8u %6u %12llu %10s %9llu %10s\n", c.name, c.pid, c.uid, c.slots,
                static_cast<unsigned long long>(c.slot_bytes), mib(c.shared_memory_bytes).c_str(),
                static_cast<unsigned long long>(c.requests_in_flight), age);
  }
}

int cmd_stats(nnclient::Client& client, bool json) {
  if (json) return cmd_stats_json(client);
  print_stats(client.stats(), nullptr, "\n");
  try {
    print_clients(client.clients());
  } catch (const nnclient::Error& e) {
    if (e.status() != NNCLIENT_E_PROTOCOL) throw;
    std::printf("\n(clients: the daemon is older than nnctl and does not list them)\n");
  }
  return 0;
}

int cmd_reload(nnclient::Client& client) {
  const std::string message = client.reload();
  std::printf("reload accepted%s%s\n", message.empty() ? "" : ": ", message.c_str());
  return 0;
}

// ---- top ------------------------------------------------------------------------------------

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

int cmd_top(nnclient::Client& client, const std::string& endpoint, bool once, int interval_ms) {
  const std::string where = endpoint.empty() ? "default endpoint" : endpoint;
  if (once) {
    const std::vector<nnclient::Stats> stats = client.stats();
    std::printf("nnd top  %s  %zu model%s\n", where.c_str(), stats.size(),
                stats.size() == 1 ? "" : "s");
    print_stats(stats, nullptr, "\n");
    return 0;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);  // no SA_RESTART: poll() returns at once
  sigaction(SIGTERM, &sa, nullptr);
  const bool tty_in = isatty(STDIN_FILENO);
  termios saved{};
  if (tty_in && tcgetattr(STDIN_FILENO, &saved) == 0) {
    termios raw = saved;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  std::printf("\x1b[?25l");  // hide the cursor
  std::map<std::string, uint64_t> last_requests;
  auto last_time = std::chrono::steady_clock::now();
  bool first = true;
  while (!g_stop) {
    std::vector<nnclient::Stats> stats;
    std::string problem;
    try {
      stats = client.stats();
    } catch (const nnclient::Error& e) {
      problem = e.what();
    }
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last_time).count();
    std::map<std::string, double> rates;
    for (const nnclient::Stats& s : stats) {
      const auto it = last_requests.find(s.name);
      if (!first && it != last_requests.end() && dt > 0 && s.requests >= it->second) {
        rates[s.name] = static_cast<double>(s.requests - it->second) / dt;
      }
      last_requests[s.name] = s.requests;
    }
    last_time = now;
    first = false;
    const std::time_t wall = std::time(nullptr);
    char clock[16];
    std::strftime(clock, sizeof clock, "%H:%M:%S", std::localtime(&wall));
    std::printf("\x1b[H\x1b[2J");  // home, clear
    std::printf("nnd top  %s  %s  (q or Ctrl-C to quit)\r\n\r\n", where.c_str(), clock);
    if (!problem.empty()) std::printf("%s\r\n\r\n", problem.c_str());
    print_stats(stats, &rates, "\r\n");
    std::fflush(stdout);

    // Wait for the next refresh or a key.
    const auto until = now + std::chrono::milliseconds(interval_ms);
    while (!g_stop) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{STDIN_FILENO, POLLIN, 0};
      const int r = poll(&p, tty_in ? 1 : 0, static_cast<int>(left.count()));
      if (r > 0 && (p.revents & POLLIN)) {
        char ch = 0;
        if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q' || ch == 3)) g_stop = 1;
      }
    }
  }
  std::printf("\x1b[?25h\n");
  if (tty_in) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "nnctl: control and inspect a running nnd daemon.\n\n"
      "The daemon is reached at --endpoint (or $NND_ENDPOINT, default \"nnd\"): a name means\n"
      "$NND_RUNTIME_DIR/<name>.sock (NND_RUNTIME_DIR defaults to /run/nnd, else /tmp), a value\n"
      "containing '/' is the socket path itself.\n\n"
      "Exit status: 0 success, 1 daemon, model or input error (the message names the nnclient\n"
      "status, e.g. NNCLIENT_E_DAEMON_NOT_RUNNING), 2 usage error."};
  app.formatter(std::make_shared<SynopsisFormatter>());
  app.require_subcommand(1);
  std::string endpoint;
  app.add_option("--endpoint,-e", endpoint, "daemon endpoint name or socket path");
  app.set_version_flag("--version", NND_VERSION_TEXT("nnctl"));

  CLI::App* infer = app.add_subcommand(
      "infer",
      "run MODEL in the daemon on .npy inputs and write each output to DIR/<output name>.npy\n"
      "(float32, or int64 for ArgMax indices; batch first), the same conventions as nnrun so\n"
      "results compare file by file.\n"
      "Inputs are .npy files (float32 or uint8; uint8 is converted for float32 inputs), first\n"
      "axis the batch; an input without a file gets nnrun's deterministic pattern.");
  std::string model, output_dir;
  std::vector<std::string> input_specs;
  int64_t timeout_ms = 10000, batch = 0;
  infer->add_option("model", model, "model name as the daemon serves it")->required();
  infer->add_option("--input,-i", input_specs, "NAME=FILE.npy for the model input NAME (repeatable)");
  infer->add_option("--output-dir,-o", output_dir, "write DIR/<output name>.npy for every output");
  infer->add_option("--timeout-ms", timeout_ms, "how long to wait for the answer (default 10000)")
      ->check(CLI::Range(int64_t{1}, int64_t{86400000}));
  infer->add_option("--batch", batch, "samples when no input file gives the batch (default 1)")
      ->check(CLI::PositiveNumber);

  CLI::App* models = app.add_subcommand(
      "models", "show the daemon's version and git revision, then list the served models: name, "
                "version, engine, inputs and outputs with shapes and dtypes");
  CLI::App* stats = app.add_subcommand(
      "stats", "per-model statistics since the daemon started: requests, batches, mean batch "
               "size, latency p50/p99/max, errors, deadline misses");
  bool stats_json = false;
  stats->add_flag("--json", stats_json,
                  "print one JSON object instead of the table: the daemon's version, memory, "
                  "clients and reloads, and per model the table's figures plus errors by status, "
                  "queue depth and the latency and batch-size histograms (docs/metrics.md)");
  CLI::App* metrics = app.add_subcommand(
      "metrics", "print the daemon's metrics in the OpenMetrics 1.0 text format, for a scraper "
                 "that reads OpenMetrics (Prometheus does, e.g. through a wrapper that runs "
                 "nnctl metrics per scrape; node exporter's textfile collector does not, it reads "
                 "only the older Prometheus text format): per-model requests, errors by status, "
                 "deadline misses, queue depth, batch-size and latency histograms; daemon memory, "
                 "clients and reloads (docs/metrics.md)");
  CLI::App* reload = app.add_subcommand(
      "reload", "ask the daemon to reload its configuration (as SIGHUP does) and report whether "
                "it was accepted");
  CLI::App* top = app.add_subcommand(
      "top", "live view of the per-model statistics with request rates, refreshed every second "
             "until q or Ctrl-C");
  bool once = false;
  int interval_ms = 1000;
  top->add_flag("--once", once, "print one frame without clearing the screen and exit");
  top->add_option("--interval-ms", interval_ms, "refresh period (default 1000)")
      ->check(CLI::Range(100, 60000));

  if (argc == 1) {
    std::fprintf(stderr, "nnctl: a subcommand is required\n%sRun nnctl --help for more.\n",
                 synopsis("nnctl").c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    // One slot: nnctl sends one request at a time, and a one-slot hello from root, the
    // daemon's user or daemon.control_group is a control connection, which the daemon admits
    // even when clients hold every session or every byte of shared memory.
    nnclient::OpenOptions open{};
    open.slots = 1;
    open.endpoint = endpoint.empty() ? nullptr : endpoint.c_str();
    nnclient::Client client(open);
    if (*infer) return cmd_infer(client, model, input_specs, output_dir, timeout_ms, batch);
    if (*models) return cmd_models(client);
    if (*stats) return cmd_stats(client, stats_json);
    if (*metrics) return cmd_metrics(client);
    if (*reload) return cmd_reload(client);
    if (*top) return cmd_top(client, endpoint, once, interval_ms);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "nnctl: %s\n", e.what());
    return 2;
  } catch (const nnclient::Error& e) {
    std::fprintf(stderr, "nnctl: %s\n", e.what());
    return 1;
  } catch (const nnd::Error& e) {
    std::fprintf(stderr, "nnctl: %s\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "nnctl: %s\n", e.what());
    return 1;
  }
  return 2;
}
