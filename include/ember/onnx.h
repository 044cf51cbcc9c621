// ember::onnx: hand a traced graph to another runtime as an ONNX model.
//
//   net->eval();
//   ember::jit::GraphModule g = ember::jit::trace(net, ember::randn({8, 1, 28, 28}));
//   ember::onnx::export_graph(g, "model.onnx");      // opset 17, batch axis "N"
//
// The file is one ModelProto (IR version 8, opset 17): the graph's nodes as
// ONNX operators, the bound parameters and buffers (and the graph's
// constants) as initializers, a value_info for every value, and the batch
// dimension of a dynamic-batch trace as the symbolic axis "N". The model is
// checked with ONNX's own checker before anything is written, and the write
// is atomic: on any error no file (and no partial file) is left at `path`.
// docs/graphs.md ("ONNX export") lists the ops that map and the limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::jit {
class GraphModule;
}  // namespace ember::jit

namespace ember::onnx {

struct ExportOptions {
  // The default-domain opset. 17 is the only one supported (the version of
  // the ONNX library ember builds with, and the first with LayerNormalization).
  int64_t opset = 17;
  // The dim_param of the batch dimension N. A dimension that is a multiple
  // or offset of N (16N, N+1) gets a dim_param of its own ("16*N", "N+1").
  std::string batch_dim = "N";
  // ModelProto.graph.name.
  std::string graph_name = "ember_graph";
};

// Writes `module` to `path` as an ONNX model. An op with no ONNX mapping, a
// graph traced in training mode (dropout, batch-norm statistics), an
// in-place op or anything the ONNX checker rejects is an ember::Error naming
// the op and the node.
void export_graph(const jit::GraphModule& module, const std::string& path, const ExportOptions& options = {});

// The ember ops export_graph maps, sorted by name.
std::vector<std::string> exportable_ops();

}  // namespace ember::onnx
