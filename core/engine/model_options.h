// The options of one model as a config entry states them (config/SCHEMA.md, `models`): which
// engine, ISA, math mode, threads and precision run it, and the element type of each input. One
// definition with one set of spellings and messages for everything that opens a model that way:
// libnnd's nnd_options_set (key and value strings) and the daemon's config.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/engine/engine_options.h"
#include "core/ir/tensor.h"

namespace nnd {

// Arithmetic of the engine. int8 needs the quantized kernels (the arithmetic: core/ir/quant); until a build has them,
// opening a model with kInt8 fails with ErrorCode::kUnsupported (make_model_engine).
enum class Precision { kFloat32, kInt8 };
const char* precision_name(Precision p);  // "float32", "int8"

struct ModelOptions {
  EngineOptions engine;     // engine (jit or reference), isa, math, threads, isa_cache
  bool engine_auto = true;  // `engine: auto`: the JIT, or the reference engine where it is unavailable
  // `inputs`: element type callers send per input name (uint8 camera bytes become float32 in the
  // engine). Inputs not named here keep the model's own type (float32).
  std::vector<std::pair<std::string, DType>> input_dtypes;
  Precision precision = Precision::kFloat32;
  std::string quantization;  // `quantization: FILE` for precision int8 ("" = none)
};

// The keys set_model_option() knows, in config spelling ("inputs.NAME" stands for the per-input
// keys).
const std::vector<std::string>& model_option_keys();

// Sets one option from its config spelling: key "engine" value "auto", "jit" or "reference";
// "isa" "auto" or an ISA id; "math" "exact" or "fast"; "threads" "auto" or 1..64; "precision"
// "float32" or "int8"; "quantization" a file path; "isa_calibration_cache" a file path or "off";
// "inputs.NAME" "uint8" or "float32". Throws Error(kInvalidArgument) with a message that starts
// with the key and names the accepted values (and the closest known key or ISA for a typo).
void set_model_option(ModelOptions& options, const std::string& key, const std::string& value);

// The same, returning instead of throwing: "" when the option was set, else why not, without the
// key ("unknown ISA 'avx3'; expected ..."), for a caller that reports it at the key's place (the
// daemon's config reader gives the line and column). Values are quoted by quote_value.
std::string apply_model_option(ModelOptions& options, const std::string& key, const std::string& value);

}  // namespace nnd
