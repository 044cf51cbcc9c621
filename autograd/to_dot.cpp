// Graphviz DOT of the autograd graph behind a tensor.
#include <sstream>
#include <unordered_map>
#include <vector>

#include "autograd/autograd_meta.h"
#include "autograd/functions.h"
#include "core/dot_escape.h"

namespace ember::autograd {

namespace {

std::string shape_text(IntArrayRef sizes, DType dtype) {
  std::ostringstream os;
  os << sizes << " " << dtype;
  return os.str();
}

}  // namespace

std::string to_dot(const Tensor& t) {
  std::ostringstream os;
  os << "digraph autograd {\n  node [shape=box, fontname=\"monospace\"];\n";
  os << "  output [label=\"output\\n" << dot_escape(shape_text(t.sizes(), t.dtype())) << "\", shape=ellipse];\n";
  Edge root = requires_grad(t) ? gradient_edge(t) : Edge{};
  if (!root.valid()) {
    os << "}\n";
    return os.str();
  }
  std::unordered_map<const Node*, size_t> ids;
  std::vector<const Node*> order;
  auto id_of = [&](const Node* n) {
    auto [it, added] = ids.try_emplace(n, ids.size());
    if (added) order.push_back(n);
    return it->second;
  };
  id_of(root.function.get());
  os << "  output -> n0 [dir=back];\n";
  for (size_t i = 0; i < order.size(); ++i) {  // breadth-first; `order` grows as nodes are found
    const Node* n = order[i];
    std::ostringstream label;
    label << n->name();
    if (auto* acc = dynamic_cast<const AccumulateGrad*>(n)) {
      const Tensor v = acc->variable();
      if (v.defined()) label << "\\nleaf " << shape_text(v.sizes(), v.dtype());
      else label << "\\nleaf (freed)";
    } else {
      if (!n->forward_description().empty()) label << "\\n" << dot_escape(n->forward_description());
      for (const auto& m : n->input_meta()) label << "\\ngrad in " << shape_text(m.sizes, m.dtype);
    }
    const bool leaf = dynamic_cast<const AccumulateGrad*>(n) != nullptr;
    os << "  n" << i << " [label=\"" << label.str() << "\"" << (leaf ? ", style=filled, fillcolor=lightblue" : "")
       << "];\n";
    size_t k = 0;
    for (const auto& [name, saved] : n->saved_tensors()) {
      os << "  s" << i << "_" << k << " [label=\"saved " << dot_escape(name) << "\\n"
         << dot_escape(shape_text(saved.sizes(), saved.dtype())) << "\", shape=ellipse, style=dashed];\n";
      os << "  s" << i << "_" << k << " -> n" << i << " [style=dashed];\n";
      ++k;
    }
    for (const Edge& e : n->next_functions()) {
      if (!e.valid()) continue;
      const size_t child = id_of(e.function.get());
      os << "  n" << i << " -> n" << child << ";\n";
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace ember::autograd
