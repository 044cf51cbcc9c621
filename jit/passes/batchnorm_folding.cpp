// Batch-norm folding, for inference: batch_norm(conv(x, W, b)) in eval mode
// (training=False) becomes conv(x, W', b') with
//   s  = gamma / sqrt(running_var + eps)       (per output channel)
//   W' = W * s (over W's output-channel dim),  b' = (b - running_mean) * s + beta,
// and the same for addmm(b, x, Wt), a linear layer (Wt's columns are the
// output channels). The weights and statistics must be constants (trace with
// freeze); W' and b' are computed in float64 and rounded once to W's dtype.
#include <algorithm>

#include "ember/autograd.h"
#include "ember/ops.h"
#include "jit/passes/pass.h"

namespace ember::jit {
namespace {

const Tensor* constant_of(const Arg& a) {
  return a.kind == Arg::Kind::Value && a.value->kind == ValueKind::Constant ? &a.value->constant : nullptr;
}

bool is_false(const Arg& a) {
  const auto* b = std::get_if<bool>(&a.constant.payload());
  return b != nullptr && !*b;
}

bool scalar_is_one(const Arg& a) {
  const auto* s = std::get_if<Scalar>(&a.constant.payload());
  return s != nullptr && a.sym.empty() && s->to<double>() == 1.0;
}

}  // namespace

int fold_batch_norm(Graph& g, PassLog& log) {
  NoGradGuard no_grad;
  const std::vector<int64_t> uses = g.use_counts();
  struct Fold {
    const Node* bn;
    const Node* producer;
    std::vector<Arg> args;
  };
  std::vector<Fold> folds;
  std::vector<const Node*> dead;
  for (const auto& node : g.nodes()) {
    Node& bn = *node;
    if (bn.name() != "batch_norm" || bn.args[0].kind != Arg::Kind::Value) continue;
    Value* in = bn.args[0].value;
    if (in->kind != ValueKind::NodeOutput) continue;
    Node& producer = *in->producer;
    const bool conv = producer.name() == "convolution";
    const bool linear = producer.name() == "addmm";
    if (!conv && !linear) continue;
    auto skip = [&](const std::string& why) {
      log.push_back("batchnorm_folding: kept " + describe_node(bn) + " after " + describe_node(producer) + ": " + why);
    };
    if (!is_false(bn.args[5])) {
      skip("it runs in training mode");
      continue;
    }
    if (uses[static_cast<size_t>(in->id)] != 1 || uses[static_cast<size_t>(bn.outputs[1]->id)] != 0 ||
        uses[static_cast<size_t>(bn.outputs[2]->id)] != 0) {
      skip("a value between them has other uses");
      continue;
    }
    const Tensor* mean = constant_of(bn.args[3]);
    const Tensor* var = constant_of(bn.args[4]);
    const Tensor* gamma = constant_of(bn.args[1]);
    const Tensor* beta = constant_of(bn.args[2]);
    const size_t w_arg = conv ? 1 : 2, b_arg = conv ? 2 : 0;
    const Tensor* weight = constant_of(producer.args[w_arg]);
    const Tensor* bias = constant_of(producer.args[b_arg]);
    const bool params_constant = mean && var && weight && (gamma || bn.args[1].kind == Arg::Kind::Constant) &&
                                 (beta || bn.args[2].kind == Arg::Kind::Constant) &&
                                 (bias || producer.args[b_arg].kind == Arg::Kind::Constant);
    if (!params_constant) {
      skip("its weights are graph inputs, not constants (trace with freeze)");
      continue;
    }
    if (conv && !is_false(producer.args[6])) {
      skip("transposed convolutions are not folded");
      continue;
    }
    if (linear && (!scalar_is_one(producer.args[3]) || !scalar_is_one(producer.args[4]) || bias == nullptr)) {
      skip("addmm with beta or alpha other than 1");
      continue;
    }
    const double eps = std::get<double>(bn.args[7].constant.payload());
    const DType dtype = weight->dtype();
    const Tensor scale64 =
        (gamma ? gamma->to(kFloat64) : ones_like(mean->to(kFloat64))) / (var->to(kFloat64) + eps).sqrt();
    const int64_t channels = scale64.numel();
    std::vector<int64_t> shape(static_cast<size_t>(weight->dim()), 1);
    shape[conv ? 0 : 1] = channels;
    const Tensor new_weight = (weight->to(kFloat64) * scale64.reshape(shape)).to(dtype);
    const Tensor bias64 = bias ? bias->to(kFloat64) : zeros({channels}, kFloat64);
    const Tensor new_bias =
        ((bias64 - mean->to(kFloat64)) * scale64 + (beta ? beta->to(kFloat64) : zeros({channels}, kFloat64))).to(dtype);
    // A new node with new output values: the self-check matches values by id,
    // and the producer's output meant the value before batch_norm.
    std::vector<Arg> args = producer.args;
    args[w_arg] = Arg::of_value(g.add_constant(new_weight));
    args[b_arg] = Arg::of_value(g.add_constant(new_bias));
    folds.push_back({&bn, &producer, std::move(args)});
  }
  for (Fold& f : folds) {
    size_t pos = 0;
    while (g.nodes()[pos].get() != f.producer) ++pos;
    Node* folded = g.insert_node(pos + 1, f.producer->op, std::move(f.args), 1);
    Value* out = folded->outputs[0];
    const Value* old = f.bn->outputs[0];
    out->dtype = old->dtype;
    out->device = old->device;
    out->shape = old->shape;
    g.replace_all_uses(old, out);
    log.push_back("batchnorm_folding: folded " + describe_node(*f.bn) + " into " + describe_node(*f.producer) +
                  ", now " + describe_node(*folded));
    dead.push_back(f.bn);
    dead.push_back(f.producer);
  }
  g.remove_nodes_if([&](const Node& n) { return std::find(dead.begin(), dead.end(), &n) != dead.end(); });
  g.remove_unused_constants();
  return static_cast<int>(folds.size());
}

}  // namespace ember::jit
