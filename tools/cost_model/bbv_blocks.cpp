#include "tools/cost_model/bbv_blocks.h"

#include <capstone/capstone.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/util/error.h"

namespace nnd::cost {
namespace {

uint64_t parse_hex(const std::string& s, const std::string& what) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(s, &used, 16);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) throw Error(ErrorCode::kFormat, what + ": not a hex number: '" + s + "'");
  return v;
}

}  // namespace

void write_code_regions(const std::string& path, const std::vector<CodeRegion>& regions) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) throw Error(ErrorCode::kIo, "cannot write " + path);
  char b[4];
  for (const CodeRegion& r : regions) {
    out << std::hex << r.address << std::dec << ' ' << r.bytes.size() << ' ';
    for (uint8_t byte : r.bytes) {
      std::snprintf(b, sizeof b, "%02x", byte);
      out << b;
    }
    out << ' ' << r.name << '\n';
  }
  if (!out) throw Error(ErrorCode::kIo, "cannot write " + path);
}

std::vector<CodeRegion> read_code_regions(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorCode::kIo, "cannot read " + path);
  std::vector<CodeRegion> out;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    std::istringstream f(line);
    std::string addr, hex;
    size_t size = 0;
    CodeRegion r;
    if (!(f >> addr >> size >> hex) || hex.size() != 2 * size) {
      throw Error(ErrorCode::kFormat, path + ":" + std::to_string(number) + ": expected '<address> <size> <bytes> <name>'");
    }
    r.address = parse_hex(addr, path);
    for (size_t i = 0; i < size; ++i) r.bytes.push_back(static_cast<uint8_t>(parse_hex(hex.substr(2 * i, 2), path)));
    std::getline(f >> std::ws, r.name);
    out.push_back(std::move(r));
  }
  return out;
}

std::map<uint64_t, uint64_t> read_bbv(const std::string& bb_path, const std::string& pc_path) {
  std::ifstream pc(pc_path);
  if (!pc) throw Error(ErrorCode::kIo, "cannot read " + pc_path);
  std::map<uint64_t, uint64_t> address_of;  // exp-bbv's block id -> start address
  for (std::string line; std::getline(pc, line);) {
    if (line.size() < 2 || line[0] != 'F' || line[1] != ':') continue;
    std::istringstream f(line.substr(2));
    std::string id, addr;
    if (!std::getline(f, id, ':') || !std::getline(f, addr, ':')) {
      throw Error(ErrorCode::kFormat, pc_path + ": malformed line '" + line + "'");
    }
    address_of[std::stoull(id)] = parse_hex(addr, pc_path);
  }
  std::ifstream bb(bb_path);
  if (!bb) throw Error(ErrorCode::kIo, "cannot read " + bb_path);
  std::map<uint64_t, uint64_t> counts;
  for (std::string line; std::getline(bb, line);) {
    if (line.empty() || line[0] != 'T') continue;  // comments, other threads' headers
    std::istringstream f(line.substr(1));
    for (std::string item; f >> item;) {  // ":id:count"
      const size_t colon = item.find(':', 1);
      if (item.size() < 4 || item[0] != ':' || colon == std::string::npos) {
        throw Error(ErrorCode::kFormat, bb_path + ": malformed entry '" + item + "'");
      }
      const uint64_t id = std::stoull(item.substr(1, colon - 1));
      const auto a = address_of.find(id);
      if (a == address_of.end()) throw Error(ErrorCode::kFormat, bb_path + ": block " + std::to_string(id) + " is not in " + pc_path);
      counts[a->second] += std::stoull(item.substr(colon + 1));
    }
  }
  return counts;
}

std::vector<ExecutedBlock> executed_blocks(const std::vector<CodeRegion>& regions,
                                           const std::map<uint64_t, uint64_t>& counts, int max_insns,
                                           std::vector<std::string>* warnings) {
  csh h = 0;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) throw Error(ErrorCode::kInternal, "Capstone: cs_open failed");
  cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = cs_malloc(h);
  std::vector<ExecutedBlock> out;
  char buf[160];
  for (size_t ri = 0; ri < regions.size(); ++ri) {
    const CodeRegion& r = regions[ri];
    for (auto it = counts.lower_bound(r.address); it != counts.end() && it->first < r.address + r.bytes.size(); ++it) {
      ExecutedBlock b;
      b.region = ri;
      b.offset = static_cast<size_t>(it->first - r.address);
      const uint8_t* code = r.bytes.data() + b.offset;
      size_t left = r.bytes.size() - b.offset;
      uint64_t address = it->first;
      bool ended = false;
      while (b.instructions < max_insns && cs_disasm_iter(h, &code, &left, &address, insn)) {
        ++b.instructions;
        b.size += insn->size;
        const cs_detail* d = insn->detail;
        for (uint8_t g = 0; g < d->groups_count; ++g) {
          const uint8_t grp = d->groups[g];
          ended |= grp == CS_GRP_JUMP || grp == CS_GRP_CALL || grp == CS_GRP_RET || grp == CS_GRP_INT || grp == CS_GRP_IRET;
        }
        if (ended) break;
      }
      if (b.instructions == 0) {
        std::snprintf(buf, sizeof buf, "%s+0x%zx: cannot decode the block's first instruction; left out", r.name.c_str(), b.offset);
        warnings->push_back(buf);
        continue;
      }
      const uint64_t executed = it->second;
      if (executed % static_cast<uint64_t>(b.instructions) != 0) {
        std::snprintf(buf, sizeof buf, "%s+0x%zx: %llu instructions are not a multiple of the block's %d", r.name.c_str(),
                      b.offset, static_cast<unsigned long long>(executed), b.instructions);
        warnings->push_back(buf);
      }
      b.runs = static_cast<int64_t>((executed + static_cast<uint64_t>(b.instructions) / 2) / static_cast<uint64_t>(b.instructions));
      out.push_back(b);
    }
  }
  cs_free(insn, 1);
  cs_close(&h);
  return out;
}

}  // namespace nnd::cost
