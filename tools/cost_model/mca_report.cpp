#include "tools/cost_model/mca_report.h"

#include <cstdio>
#include <sstream>

#include "core/util/error.h"

namespace nnd::cost {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "Total Cycles:      1105" -> 1105
double value_after_colon(const std::string& line) {
  const size_t c = line.find(':');
  return c == std::string::npos ? 0.0 : std::strtod(line.c_str() + c + 1, nullptr);
}

// "  Resource Pressure       [ 9.05% ]" -> 9.05
double bracketed_pct(const std::string& line) {
  const size_t b = line.find('[');
  return b == std::string::npos ? 0.0 : std::strtod(line.c_str() + b + 1, nullptr);
}

}  // namespace

std::pair<std::string, double> McaRegion::busiest() const {
  std::pair<std::string, double> best{"", 0.0};
  for (const auto& p : pressure) {
    if (p.second > best.second) best = p;
  }
  return best;
}

std::string McaRegion::bottleneck() const {
  const double cycles = cycles_per_iteration();
  char buf[128];
  if (cycles <= 1.1 * block_rthroughput) {
    const auto [res, p] = busiest();
    if (p + 0.05 >= block_rthroughput && !res.empty()) {
      std::snprintf(buf, sizeof buf, "%s %.1f/it", res.c_str(), p);
    } else {
      std::snprintf(buf, sizeof buf, "dispatch %d-wide", dispatch_width);
    }
    return buf;
  }
  return memory_dep_pct > register_dep_pct ? "latency: memory deps" : "latency: register deps";
}

std::vector<McaRegion> parse_mca_report(const std::string& text) {
  std::vector<McaRegion> regions;
  std::istringstream in(text);
  std::vector<std::string> resource_names;  // of the current region's "Resources:" list
  bool in_resources = false;
  int pressure_rows = 0;  // 2: the header comes next, 1: the values come next
  auto current = [&]() -> McaRegion& {
    if (regions.empty()) regions.emplace_back();  // a report of one unnamed region has no header
    return regions.back();
  };
  for (std::string line; std::getline(in, line);) {
    const std::string t = trimmed(line);
    if (t.size() > 1 && t[0] == '[' && t.find("] Code Region") != std::string::npos) {
      McaRegion r;
      const size_t dash = t.find(" - ");
      if (dash != std::string::npos) r.name = t.substr(dash + 3);
      regions.push_back(r);
      resource_names.clear();
      continue;
    }
    if (starts_with(t, "Iterations:")) current().iterations = static_cast<int64_t>(value_after_colon(t));
    else if (starts_with(t, "Instructions:")) current().instructions = static_cast<int64_t>(value_after_colon(t));
    else if (starts_with(t, "Total Cycles:")) current().total_cycles = static_cast<int64_t>(value_after_colon(t));
    else if (starts_with(t, "Dispatch Width:")) current().dispatch_width = static_cast<int>(value_after_colon(t));
    else if (starts_with(t, "Block RThroughput:")) current().block_rthroughput = value_after_colon(t);
    else if (starts_with(t, "Resource Pressure ")) current().resource_pct = bracketed_pct(t);
    else if (starts_with(t, "- Register Dependencies")) current().register_dep_pct = bracketed_pct(t);
    else if (starts_with(t, "- Memory Dependencies")) current().memory_dep_pct = bracketed_pct(t);
    else if (t == "Resources:") {
      in_resources = true;
      resource_names.clear();
    } else if (in_resources) {
      // "[0]   - SLMDivider" or "[3.1] - ZnFPU1"; a blank line ends the list.
      if (t.empty() || t[0] != '[') {
        in_resources = false;
      } else {
        const size_t dash = t.find("- ");
        resource_names.push_back(dash == std::string::npos ? t : trimmed(t.substr(dash + 2)));
      }
    }
    if (t == "Resource pressure per iteration:") {
      pressure_rows = 2;
      continue;
    }
    if (pressure_rows == 2) {
      pressure_rows = 1;  // the "[0] [1] ..." header
      continue;
    }
    if (pressure_rows == 1) {
      pressure_rows = 0;
      std::istringstream cells(t);
      McaRegion& r = current();
      size_t i = 0;
      for (std::string cell; cells >> cell; ++i) {
        const double v = cell == "-" ? 0.0 : std::strtod(cell.c_str(), nullptr);
        std::string name = i < resource_names.size() ? resource_names[i] : std::string("[");
        if (i >= resource_names.size()) name.append(std::to_string(i)).append("]");
        r.pressure.emplace_back(std::move(name), v);
      }
    }
  }
  if (regions.empty()) throw Error(ErrorCode::kFormat, "llvm-mca report: no code region found");
  for (const McaRegion& r : regions) {
    if (r.iterations <= 0 || r.total_cycles <= 0) {
      throw Error(ErrorCode::kFormat, "llvm-mca report: region '" + r.name + "' has no iteration or cycle count");
    }
  }
  return regions;
}

}  // namespace nnd::cost
