// Golden code hashes, the part every architecture's test shares: the models whose generated code
// is recorded (the kitchen-sink graph, the real robot networks of tests/data/real/manifest.json in
// ../shared/models, the Keras and ONNX fixtures of tests/data), the hash of a kernel's bytes, and
// the recorded files ("<key> <value>" lines, '#' comments). tests/jit/jit_golden_code_test.cpp
// records x86's code and, assembled on the x86 host, NEON's; tests/arm64/neon_golden_code_test.cpp
// checks NEON's file against the engine of the AArch64 build under qemu-aarch64.
//
// A missing model, manifest or ../shared/models is nnd::Error, never a smaller set: a test that
// checks fewer hashes than it recorded would pass while checking nothing it claims (issue 32).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/io/model_file.h"
#include "core/ir/graph.h"
#include "core/util/error.h"
#include "tests/jit_common/kitchen_sink.h"

namespace nnd::test::golden {

namespace fs = std::filesystem;

struct Model {
  std::string name;  // a file name ("bop.onnx", "act_elu.k2.h5", "onnx/act_elu.onnx") or "kitchen-sink"
  Graph graph;
};

inline nlohmann::json read_manifest(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(ErrorCode::kIo, "golden code: " + file.string() + " is missing");
  const nlohmann::json m = nlohmann::json::parse(in);
  if (!m.contains("cases") || m.at("cases").empty()) throw Error(ErrorCode::kFormat, "golden code: " + file.string() + " lists no cases");
  return m;
}

inline Graph load_listed(const fs::path& file) {
  if (!fs::exists(file)) throw Error(ErrorCode::kIo, "golden code: " + file.string() + " is missing");
  return load_model(file.string());
}

// The kitchen-sink graph and the real networks (.h5 and .onnx of each); with `fixtures`, every
// Keras fixture model (each layout) and every ONNX fixture the loader accepts (the refused ones
// are tests/fixtures' to check) as well.
inline std::vector<Model> models(bool fixtures) {
  std::vector<Model> out;
  out.push_back({"kitchen-sink", jit::test::kitchen_sink()});
  const fs::path data = NND_TEST_DATA_DIR;
  const fs::path shared = NND_SHARED_MODELS_DIR;
  if (!fs::is_directory(shared)) {
    throw Error(ErrorCode::kIo, "golden code: " + shared.string() + " (../shared/models, the real networks) is missing");
  }
  const nlohmann::json real = read_manifest(data / "real" / "manifest.json");
  for (const auto& c : real.at("cases")) {
    for (const char* key : {"model", "onnx"}) {
      const std::string file = c.at(key).get<std::string>();
      out.push_back({file, load_listed(shared / file)});
    }
  }
  if (!fixtures) return out;
  const nlohmann::json keras = read_manifest(data / "fixtures" / "manifest.json");
  for (const auto& c : keras.at("cases")) {
    for (const auto& [layout, file] : c.at("models").items()) {
      out.push_back({file.get<std::string>(), load_listed(data / "fixtures" / file.get<std::string>())});
    }
  }
  const nlohmann::json onnx = read_manifest(data / "onnx" / "manifest.json");
  for (const auto& c : onnx.at("cases")) {
    const std::string file = c.at("model").get<std::string>();
    const fs::path path = data / "onnx" / file;
    if (!fs::exists(path)) throw Error(ErrorCode::kIo, "golden code: " + path.string() + " is missing");
    try {
      out.push_back({"onnx/" + file, load_model(path.string())});
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kInternal) throw;
    }
  }
  return out;
}

// FNV-1a over the bytes (KernelModule::code_hash's function, over one kernel).
inline uint64_t hash_bytes(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

// "<hash> <bytes>" of a kernel's bytes.
inline std::string hash_and_size(const std::vector<uint8_t>& bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%016llx %zu", static_cast<unsigned long long>(hash_bytes(bytes)), bytes.size());
  return buf;
}

// A golden file's rows: the first `key_fields` space-separated fields are the key, the rest of
// the line the value. Empty when the file is missing.
inline std::map<std::string, std::string> read_rows(const fs::path& file, int key_fields) {
  std::map<std::string, std::string> rows;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t end = 0;
    for (int i = 0; i < key_fields && end != std::string::npos; ++i) end = line.find(' ', end + (i > 0 ? 1 : 0));
    if (end == std::string::npos) throw Error(ErrorCode::kFormat, file.string() + ": short line: " + line);
    rows[line.substr(0, end)] = line.substr(end + 1);
  }
  return rows;
}

inline void write_rows(const fs::path& file, const std::string& header, const std::map<std::string, std::string>& rows) {
  std::ofstream out(file);
  out << header;
  for (const auto& [k, v] : rows) out << k << " " << v << "\n";
  std::printf("wrote %zu lines to %s\n", rows.size(), file.c_str());
}

// Fails the calling test for every row that differs, is new or is no longer generated; returns
// the number of such rows.
inline int compare_rows(const std::map<std::string, std::string>& got, const std::map<std::string, std::string>& want,
                        const fs::path& file) {
  int changed = 0;
  for (const auto& [k, v] : got) {
    const auto it = want.find(k);
    if (it == want.end()) {
      ADD_FAILURE() << k << ": not in " << file.filename() << " (generated " << v << ")";
      ++changed;
    } else if (it->second != v) {
      ADD_FAILURE() << k << ": code changed: recorded " << it->second << ", generated " << v;
      ++changed;
    }
  }
  for (const auto& [k, v] : want) {
    if (!got.count(k)) {
      ADD_FAILURE() << k << ": recorded in " << file.filename() << " but no longer generated";
      ++changed;
    }
  }
  return changed;
}

}  // namespace nnd::test::golden
