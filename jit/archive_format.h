// The graph archive (.emb): one file holding a graph and its tensors
// (Note [Graph archive format]); written by jit::save, read by jit::load.
//
// Note [Graph archive format]
// An archive is a safetensors file (Note [safetensors layout] in
// serialize/safetensors_format.h), so any safetensors reader can open its
// weights. Tensors:
//   "input/<name>"  the tensor bound to a parameter or buffer input
//   "const/<id>"    the constant value with that id
// Metadata (strings):
//   "format"         "ember.graph"
//   "format_version" "1"
//   "ember_version"  the writer's version
//   "graph"          the graph as JSON (below)
// The graph JSON:
//   {"training": bool, "dynamic_batch": bool, "passes": [str...],
//    "inputs":    [{"id", "name", "role": "user"|"parameter"|"buffer", "dtype", "device", "shape"}],
//    "constants": [{"id", "name", "wrapped": bool}],
//    "nodes":     [{"op", "args": [ARG...], "outputs": [{"id", "dtype", "device", "shape", "defined"}],
//                   "list_output": bool, "random_blocks": [coeff, offset]}],
//    "outputs":   [id...]}
// A shape is a list of [coeff, offset] pairs (coeff*N + offset). An ARG is
// one of {"value": id}, {"values": [id or null...]}, {"none": null},
// {"int": n}, {"ints": [n...]}, {"float": x}, {"bool": b}, {"str": s},
// {"dtype": "float32"}, {"scalar_int": n}, {"scalar_float": x},
// {"scalar_bool": b}; int, ints and scalar_int may carry "sym": [[coeff,
// offset]...] when they depend on the batch. Floats that JSON cannot hold
// are the strings "inf", "-inf", "nan". Nodes are in execution order; a
// node reads only values defined before it. A fused group (op
// "_fused_elementwise", args [{"values": [ids]}, {"str": program}]) holds its
// program as text (Note [Fused elementwise programs] in
// core/fused_program.h), which the loader parses and checks against the
// node's inputs like any other attribute.
//
// The loader treats the file as untrusted: every field's type and range,
// every id (unique, defined before use: no dangling values, no cycles), the
// op names (registered ops only; nothing in the file is code), each
// argument against the op's schema, each tensor against the dtype and shape
// the graph declares, and the counts (at most kMaxArchiveValues values) are
// checked, and any problem is an ember::Error naming the file.
#pragma once

#include <cstdint>
#include <string_view>

namespace ember::jit {

inline constexpr std::string_view kArchiveFormat = "ember.graph";
inline constexpr int kArchiveVersion = 1;
inline constexpr int64_t kMaxArchiveValues = 1 << 20;
inline constexpr size_t kMaxArchiveDims = 64;

}  // namespace ember::jit
