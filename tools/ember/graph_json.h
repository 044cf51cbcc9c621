// `ember inspect graph ARCHIVE --json`: a traced graph (jit/graph.h) as JSON.
// Values are referred to by id; shapes are lists of dims as graph text
// prints them ("784", "*" for the batch size N, "*16" for 16N).
#pragma once

#include <nlohmann/json.hpp>

#include "jit/graph.h"

namespace ember::cli {

// {"inputs", "constants", "nodes" (op, schema, args, outputs), "outputs",
//  "training", "dynamic_batch", "passes_applied", "warnings"}.
nlohmann::json graph_json(const jit::Graph& graph);

}  // namespace ember::cli
