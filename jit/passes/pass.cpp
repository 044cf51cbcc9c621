// The pass registry (jit/passes/pass.h).
#include "jit/passes/pass.h"

namespace ember::jit {

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> passes = {
      {"constant_folding", &fold_constants, "run nodes whose inputs are all constants once, now"},
      {"simplify", &simplify_algebra, "x*1, x+0, x-0, x/1, transpose of transpose, view chains"},
      {"cse", &eliminate_common_subexpressions, "merge nodes with the same op, inputs and attributes"},
      {"batchnorm_folding", &fold_batch_norm, "fold eval-mode batch_norm into the conv/linear before it"},
      {"fusion", &fuse_elementwise, "fuse chains and trees of elementwise ops into one _fused_elementwise node"},
      {"dce", &eliminate_dead_code, "remove nodes whose outputs are unused (no side effects)"},
  };
  return passes;
}

const PassInfo& find_pass(const std::string& name) {
  std::string known;
  for (const PassInfo& p : all_passes()) {
    if (name == p.name) return p;
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  EMBER_FAIL("jit::optimize: unknown pass '", name, "' (known: ", known, ")");
}

std::string describe_node(const Node& n) {
  std::string s;
  for (size_t i = 0; i < n.outputs.size(); ++i) s += (i ? ", " : "") + n.outputs[i]->ref();
  s += " = " + n.name() + "(";
  bool first = true;
  for (const Value* v : n.input_values()) {
    s += (first ? "" : ", ") + v->ref();
    first = false;
  }
  return s + ")";
}

}  // namespace ember::jit
