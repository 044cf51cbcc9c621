// Printing a module tree: operator<< (PyTorch's format) and nn::summary
// (the same tree with parameter counts).
#include <ostream>
#include <sstream>

#include "ember/nn/module.h"
#include "ember/nn/utils.h"

namespace ember::nn {
namespace {

// 1234567 -> "1,234,567"
std::string with_thousands(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

void print_count(std::ostream& os, const Module& module, bool with_counts) {
  if (!with_counts) return;
  const int64_t count = parameter_count(module);
  if (count > 0) os << "  # " << with_thousands(count) << " params";
}

// A leaf prints its one-line description; a module with children prints its
// name, then each child on its own line, indented, as "(name): ...".
void print_tree(std::ostream& os, const Module& module, const std::string& indent, bool with_counts) {
  const auto children = module.named_children();
  if (children.empty()) {
    module.pretty_print(os);
    print_count(os, module, with_counts);
    return;
  }
  os << module.name() << "(";
  print_count(os, module, with_counts);
  os << "\n";
  for (const auto& [name, child] : children) {
    os << indent << "  (" << name << "): ";
    print_tree(os, *child, indent + "  ", with_counts);
    os << "\n";
  }
  os << indent << ")";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Module& module) {
  print_tree(os, module, "", /*with_counts=*/false);
  return os;
}

std::string summary(const Module& module) {
  std::ostringstream os;
  print_tree(os, module, "", /*with_counts=*/true);
  int64_t buffer_elements = 0;
  for (const Tensor& b : module.buffers()) buffer_elements += b.numel();
  os << "\nTotal: " << with_thousands(parameter_count(module)) << " parameters ("
     << with_thousands(parameter_count(module, /*trainable_only=*/true)) << " trainable), "
     << with_thousands(buffer_elements) << " buffer elements\n";
  return os.str();
}

}  // namespace ember::nn
