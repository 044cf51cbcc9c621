// jit::optimize and the self-check (Note [Self-check] in jit/optimize.h).
#include "jit/optimize.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "core/op_decls_fused.h"
#include "ember/autograd.h"
#include "ember/generator.h"
#include "ember/ops.h"
#include "jit/executor.h"
#include "jit/passes/pass.h"

namespace ember::jit {
namespace {

bool check_from_environment() {
  const char* env = std::getenv("EMBER_JIT_CHECK");
  return env != nullptr && env[0] != '\0' && env[0] != '0';
}

using Values = std::unordered_map<int64_t, Tensor>;

Values run_recording(const Graph& g, const std::vector<Tensor>& inputs) {
  Values values;
  NoGradGuard no_grad;
  run_graph(g, inputs, [&](const Node& n, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].defined()) values[n.outputs[i]->id] = outs[i].clone();  // later in-place ops must not change it
  });
  return values;
}

// "" when a and b agree within the tolerance of their dtype, widened by
// `ops` (the number of ops whose rounding errors a fused value gathers), else
// how they differ.
std::string difference(const Tensor& a, const Tensor& b, double ops) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    std::ostringstream os;
    os << "shape " << a.sizes() << " " << a.dtype() << " vs " << b.sizes() << " " << b.dtype();
    return os.str();
  }
  NoGradGuard no_grad;
  const bool floating = is_floating_point(a.dtype());
  const double rtol = ops * (a.dtype() == kFloat64 ? 1e-10 : 1e-4), atol = ops * (a.dtype() == kFloat64 ? 1e-12 : 1e-5);
  if (floating ? allclose(a, b, rtol, atol, /*equal_nan=*/true) : a.eq(b).all().item<bool>()) return "";
  std::ostringstream os;
  os << "max abs difference " << (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
  if (floating) os << " (rtol " << rtol << ", atol " << atol << ")";
  return os.str();
}

// A fused node's output went through every op of its program without being
// rounded to memory in between; other nodes count as one op.
double fused_ops(const Node& n) {
  if (n.op != &op::_fused_elementwise.entry()) return 1.0;
  const auto& expr = std::get<std::string>(n.args.at(1).constant.payload());
  return static_cast<double>(std::count(expr.begin(), expr.end(), ';') + 1);
}

}  // namespace

std::vector<Tensor> run_checked(const CheckPlan& plan, const Graph& final, const std::vector<Tensor>& inputs) {
  const Generator generator = default_generator();
  std::vector<Tensor> saved_buffers;
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < inputs.size(); ++i)
      saved_buffers.push_back(final.inputs()[i]->role == InputRole::Buffer ? inputs[i].clone() : Tensor());
  }
  auto reset = [&] {
    default_generator() = generator;
    NoGradGuard no_grad;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (saved_buffers[i].defined()) {
        Tensor t = inputs[i];
        t.copy_(saved_buffers[i]);
      }
  };
  Values previous;
  for (size_t k = 0; k < plan.stages.size(); ++k) {
    reset();
    Values current = run_recording(*plan.stages[k].graph, inputs);
    if (k > 0) {
      for (const auto& node : plan.stages[k].graph->nodes()) {
        for (const Value* v : node->outputs) {
          auto before = previous.find(v->id);
          auto after = current.find(v->id);
          if (before == previous.end() || after == current.end()) continue;
          const std::string why = difference(after->second, before->second, fused_ops(*node));
          EMBER_CHECK(why.empty(), "jit check: after pass '", plan.stages[k].pass, "', ", v->ref(), " (output of ",
                      describe_node(*node), ") differs from the graph before the pass: ", why);
        }
      }
    }
    previous = std::move(current);
  }
  reset();
  return run_graph(final, inputs);
}

std::vector<std::string> optimize(GraphModule& module, const OptimizeOptions& options) {
  std::vector<std::string> names = options.passes;
  if (names.empty())
    for (const PassInfo& p : all_passes()) names.emplace_back(p.name);
  const bool check = options.check || check_from_environment();
  auto plan = std::make_shared<CheckPlan>();
  Graph& g = *module.graph_;
  if (check) plan->stages.push_back({"", std::shared_ptr<Graph>(g.clone())});
  PassLog log;
  for (const std::string& name : names) {
    const PassInfo& pass = find_pass(name);
    const int changes = pass.run(g, log);
    g.verify("jit::optimize (after pass " + name + ")");
    g.passes_applied.push_back(name);
    if (changes == 0) log.push_back(name + ": no change");
    if (options.print_graphs) log.push_back("graph after " + name + ":\n" + g.str());
    if (check && changes > 0) plan->stages.push_back({name, std::shared_ptr<Graph>(g.clone())});
  }
  if (check) module.check_ = plan;
  return log;
}

}  // namespace ember::jit
