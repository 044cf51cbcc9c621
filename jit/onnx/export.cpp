// onnx::export_graph (include/ember/onnx.h): an ember graph as an ONNX
// ModelProto, checked by ONNX's checker, written atomically.
#include <onnx/checker.h>

#include <algorithm>
#include <limits>
#include <set>

#include "ember/jit.h"
#include "ember/onnx.h"
#include "ember/version.h"
#include "jit/onnx/op_table.h"
#include "jit/op_traits.h"
#include "serialize/safetensors_format.h"

namespace ember::onnx {
namespace {

constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpset = 17;

// Why an op with no entry in the table cannot be exported.
[[noreturn]] void fail_unmapped(const NodeExport& e) {
  const OpEntry& op = *e.node.op;
  if (jit::mutates(op))
    e.fail("in-place ops have no ONNX equivalent (ONNX values are immutable); trace the out-of-place op instead");
  if (jit::is_random(op))
    e.fail("it draws random numbers (dropout in training mode?); trace the module after eval()");
  e.fail("the op '" + e.node.name() + "' has no ONNX mapping (ember::onnx::exportable_ops() lists those that do)");
}

void export_nodes(ModelBuilder& b, const jit::Graph& g) {
  const std::vector<int64_t> uses = g.use_counts();
  const OpTable& table = op_table();
  for (const auto& node : g.nodes()) {
    NodeExport e(b, *node, uses);
    for (const jit::Value* v : node->input_values())
      if (!v->defined) e.fail("it reads " + v->ref() + ", which an op left undefined");
    auto it = table.find(node->name());
    if (it == table.end()) fail_unmapped(e);
    it->second(e);
    for (size_t i = 0; i < node->outputs.size(); ++i)
      if (e.used(i) && !b.is_bound(node->outputs[i]))
        e.fail("the mapping did not produce its output " + std::to_string(i));
  }
}

// Graph outputs are "output" or "output0", "output1", ...; an output that is
// an input, a constant or repeated is copied out with Identity.
std::vector<std::string> reserve_outputs(ModelBuilder& b, const jit::Graph& g) {
  std::vector<std::string> names;
  std::vector<const jit::Value*> reserved;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const jit::Value* v = g.outputs()[i];
    names.push_back(b.fresh(g.outputs().size() == 1 ? "output" : "output" + std::to_string(i)));
    const bool first = std::find(reserved.begin(), reserved.end(), v) == reserved.end();
    if (v->kind == jit::ValueKind::NodeOutput && first) {
      b.reserve(v, names.back());
      reserved.push_back(v);
    }
  }
  return names;
}

// Initializers no node reads (a constant that was only used converted to
// another dtype, an unused parameter): runtimes warn about them.
void remove_unused_initializers(::onnx::GraphProto& graph) {
  std::set<std::string> read;
  for (const ::onnx::NodeProto& n : graph.node())
    for (const std::string& in : n.input()) read.insert(in);
  for (const ::onnx::ValueInfoProto& out : graph.output()) read.insert(out.name());
  auto& initializers = *graph.mutable_initializer();
  int kept = 0;
  for (int i = 0; i < initializers.size(); ++i)
    if (read.count(initializers.Get(i).name()) != 0) initializers.SwapElements(i, kept++);
  while (initializers.size() > kept) initializers.RemoveLast();
}

::onnx::ModelProto build_model(const jit::GraphModule& module, const ExportOptions& options) {
  const jit::Graph& g = module.graph();
  ::onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("ember");
  model.set_producer_version(version());
  ::onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  ::onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(options.graph_name);
  ModelBuilder b(graph, g, options.batch_dim);
  const std::vector<std::string> output_names = reserve_outputs(b, g);

  const auto bound = module.named_bound();
  size_t next_bound = 0;
  for (const jit::Value* v : g.inputs()) {
    const std::string name = b.fresh(v->name.empty() ? "input" : v->name);
    b.bind(v, name);
    if (v->role == jit::InputRole::User) b.set_type(*graph.add_input(), name, v->dtype, v->shape);
    else b.initializer(bound.at(next_bound++).second, name);
  }
  for (const jit::Value* c : g.constants()) {
    const std::string name = b.fresh(c->name.empty() ? "const" + std::to_string(c->id) : c->name);
    b.bind(c, name);
    b.initializer(c->constant, name);
  }
  export_nodes(b, g);

  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const jit::Value* v = g.outputs()[i];
    EMBER_CHECK(v->defined, "onnx::export_graph: output ", i, " (", v->ref(), ") is an undefined tensor");
    if (b.name(v) != output_names[i]) b.add("Identity", {b.name(v)}, {output_names[i]});
    b.set_type(*graph.add_output(), output_names[i], v->dtype, v->shape);
  }
  for (const auto& node : g.nodes())
    for (const jit::Value* v : node->outputs)
      if (b.is_bound(v) && std::find(g.outputs().begin(), g.outputs().end(), v) == g.outputs().end())
        b.add_value_info(v);
  remove_unused_initializers(graph);
  return model;
}

}  // namespace

void export_graph(const jit::GraphModule& module, const std::string& path, const ExportOptions& options) {
  const std::string where = "onnx::export_graph(" + path + ")";
  EMBER_CHECK(options.opset == kOpset, where, ": opset ", options.opset, " is not supported (ember writes opset ",
              kOpset, ")");
  EMBER_CHECK(!options.batch_dim.empty(), where, ": the batch dim_param name is empty");
  const jit::Graph& g = module.graph();
  g.verify(where);
  EMBER_CHECK(!g.training, where,
              ": the graph was traced in training mode (dropout and batch norm would use their training "
              "behaviour); call module->eval() before jit::trace");
  const ::onnx::ModelProto model = build_model(module, options);
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    EMBER_FAIL(where, ": ONNX's checker rejected the exported model: ", e.what());
  }
  const size_t size = model.ByteSizeLong();
  EMBER_CHECK(size <= static_cast<size_t>(std::numeric_limits<int32_t>::max()), where, ": the model is ", size,
              " bytes; a protobuf ModelProto holds at most 2 GiB and ember does not write external data");
  std::string bytes;
  EMBER_CHECK(model.SerializeToString(&bytes), where, ": protobuf could not serialise the model");
  serialize::write_file_atomic(path, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::vector<std::string> exportable_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : op_table()) names.push_back(name);
  return names;
}

}  // namespace ember::onnx
