#include "core/engine/model_options.h"

#include "core/util/closest_match.h"
#include "core/util/error.h"
#include "core/util/quote_value.h"

namespace nnd {

const char* precision_name(Precision p) { return p == Precision::kInt8 ? "int8" : "float32"; }

const std::vector<std::string>& model_option_keys() {
  static const std::vector<std::string> keys{"engine",    "isa",          "math",
                                             "threads",   "precision",    "quantization",
                                             "isa_calibration_cache",     "inputs.NAME"};
  return keys;
}

std::string apply_model_option(ModelOptions& o, const std::string& key, const std::string& value) {
  const std::string got = "got " + quote_value(value);
  if (key == "engine") {
    if (value == "auto") {
      o.engine_auto = true;
      o.engine.engine = EngineKind::kJit;
    } else if (auto kind = parse_engine_kind(value)) {
      o.engine_auto = false;
      o.engine.engine = *kind;
    } else {
      return "expected reference, jit or auto, " + got;
    }
  } else if (key == "isa") {
    auto isa = parse_isa(value);
    if (!isa) {
      std::string msg = "unknown ISA " + quote_value(value) + "; expected " + isa_choice_list();
      if (const std::string near = closest_match(value, isa_choice_ids()); !near.empty()) {
        msg += " (did you mean '" + near + "'?)";
      }
      return msg;
    }
    o.engine.isa = *isa;
  } else if (key == "math") {
    auto m = parse_math_mode(value);
    if (!m) return "expected exact or fast, " + got;
    o.engine.math = *m;
  } else if (key == "threads") {
    auto n = parse_threads(value);
    if (!n) return "expected auto or a count 1.." + std::to_string(kMaxThreads) + ", " + got;
    o.engine.threads = *n;
  } else if (key == "precision") {
    if (value == "float32") {
      o.precision = Precision::kFloat32;
    } else if (value == "int8") {
      o.precision = Precision::kInt8;
    } else {
      return "expected float32 or int8, " + got;
    }
  } else if (key == "quantization") {
    if (value.empty()) return "expected the path of a quantization file, got ''";
    o.quantization = value;
  } else if (key == "isa_calibration_cache") {
    if (value.empty()) return "expected a file path or off, got ''";
    o.engine.isa_cache = value == "off" ? "" : value;
  } else if (key.rfind("inputs.", 0) == 0 && key.size() > 7) {
    const std::string input = key.substr(7);
    DType t = DType::kFloat32;
    if (value == "uint8") {
      t = DType::kUInt8;
    } else if (value == "float32") {
      t = DType::kFloat32;
    } else {
      return "expected uint8 or float32, " + got;
    }
    for (auto& [name, dtype] : o.input_dtypes) {
      if (name == input) {
        dtype = t;
        return "";
      }
    }
    o.input_dtypes.emplace_back(input, t);
  } else {
    // Unknown. A per-input key ("input.image") is compared by the part up to its dot.
    const size_t dot = key.find('.');
    const std::string head = dot == std::string::npos ? key : key.substr(0, dot + 1);
    std::vector<std::string> known;
    std::string list;
    for (const std::string& k : model_option_keys()) {
      list += (list.empty() ? "" : ", ") + k;
      known.push_back(k == "inputs.NAME" ? "inputs." : k);
    }
    std::string msg = "unknown option (known: " + list + ")";
    const std::string near = closest_match(head, known);
    if (near == "inputs.") {
      msg += "; did you mean 'inputs." + (dot == std::string::npos ? "NAME" : bare_value(key.substr(dot + 1))) + "'?";
    } else if (!near.empty()) {
      msg += "; did you mean '" + near + "'?";
    }
    return msg;
  }
  return "";
}

void set_model_option(ModelOptions& options, const std::string& key, const std::string& value) {
  const std::string problem = apply_model_option(options, key, value);
  if (!problem.empty()) throw Error(ErrorCode::kInvalidArgument, bare_value(key) + ": " + problem);
}

}  // namespace nnd
