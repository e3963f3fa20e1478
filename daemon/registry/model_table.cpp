#include "daemon/registry/model_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace nnd::daemon {

namespace {

std::string human(int64_t n) {
  char buf[32];
  const double x = static_cast<double>(n);
  if (n >= 1000000000) {
    std::snprintf(buf, sizeof buf, "%.2fG", x / 1e9);
  } else if (n >= 1000000) {
    std::snprintf(buf, sizeof buf, "%.2fM", x / 1e6);
  } else if (n >= 10000) {
    std::snprintf(buf, sizeof buf, "%.1fk", x / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  }
  return buf;
}

std::string shape_str(const Dims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(d[i]);
  }
  return s + ")";
}

}  // namespace

std::string describe_inputs(const ServedModel& m) {
  std::string s;
  const Graph& g = m.graph;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[i])];
    if (!s.empty()) s += ' ';
    s += (i < g.input_names.size() ? g.input_names[i] : v.name) + shape_str(v.shape);
    if (i < m.input_dtypes.size() && m.input_dtypes[i] == DType::kUInt8) s += ":u8";
  }
  return s;
}

std::string describe_outputs(const ServedModel& m) {
  std::string s;
  const Graph& g = m.graph;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const Value& v = g.values[static_cast<size_t>(g.outputs[i])];
    if (!s.empty()) s += ' ';
    s += (i < g.output_names.size() ? g.output_names[i] : v.name) + shape_str(v.shape);
  }
  return s;
}

std::string format_model_table(const ModelSet& set) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"MODEL", "INPUTS", "OUTPUTS", "PARAMS", "FLOPS", "COMPILE_MS", "CODE_BYTES",
                  "ENGINE", "MAX_BATCH"});
  int64_t params = 0, flops = 0, code = 0;
  double ms = 0;
  for (const auto& mp : set.models) {
    const ServedModel& m = *mp;
    char cms[32];
    std::snprintf(cms, sizeof cms, "%.1f", m.compile_ms);
    rows.push_back({m.settings.name, describe_inputs(m), describe_outputs(m), human(m.parameters),
                    human(m.flops_per_sample), cms, std::to_string(m.code_bytes), m.engine_name,
                    std::to_string(m.settings.max_batch)});
    params += m.parameters;
    flops += m.flops_per_sample;
    code += static_cast<int64_t>(m.code_bytes);
    ms += m.compile_ms;
  }
  char cms[32];
  std::snprintf(cms, sizeof cms, "%.1f", ms);
  rows.push_back({"total (" + std::to_string(set.models.size()) + ")", "", "", human(params),
                  human(flops), cms, std::to_string(code), "", ""});
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      const bool numeric = c >= 3 && c <= 6;
      const std::string pad(width[c] - r[c].size(), ' ');
      line += numeric ? pad + r[c] : r[c] + (c + 1 < r.size() ? pad : "");
      if (c + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + '\n';
  }
  return out;
}

}  // namespace nnd::daemon
