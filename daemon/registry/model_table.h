// The table `nnd --check` prints: one row per model with its inputs, outputs, parameters, FLOPs,
// compile time, code size and engine.
#pragma once

#include <string>

#include "daemon/registry/model_set.h"

namespace nnd::daemon {

// "name:(30, 40, 3) uint8" style list of a model's inputs or outputs.
std::string describe_inputs(const ServedModel& m);
std::string describe_outputs(const ServedModel& m);

// Column-aligned text table, header first, one line per model, a total line last.
std::string format_model_table(const ModelSet& set);

}  // namespace nnd::daemon
