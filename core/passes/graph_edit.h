// Small graph-editing helpers shared by the passes (internal to core/passes).
#pragma once

#include <vector>

#include "core/ir/graph.h"

namespace nnd::passes {

// uses[v]: number of node inputs reading value v plus the number of graph outputs listing it.
std::vector<int> value_uses(const Graph& g);

// True when value v is listed among the graph outputs.
bool is_graph_output(const Graph& g, ValueId v);

// Node `into` takes over the output value of node `from` (which must be a later node whose only
// input is `into`'s output): `into` now produces what `from` produced, under the same value id
// and name, so consumers and graph outputs (and their names) are untouched. `from` is marked in
// `dead` and removed by remove_nodes(). `into`'s old output value is left unused.
void absorb_successor(Graph& g, NodeId into, NodeId from, std::vector<bool>& dead);

// Makes every reader of value `from` (node inputs and graph outputs) read `to` instead.
void replace_uses(Graph& g, ValueId from, ValueId to);

// Erases the nodes marked dead and renumbers the producers of the remaining values. Values that
// are no longer produced by any node (and are not graph inputs) keep their slot with producer
// kNoNode; nothing reads them.
void remove_nodes(Graph& g, const std::vector<bool>& dead);

}  // namespace nnd::passes
