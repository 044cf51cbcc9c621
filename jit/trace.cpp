// ember::jit::trace (include/ember/jit.h).
//
// Note [Dynamic batch]
// A trace sees sizes only as numbers: `x.view({x.size(0), -1})` records
// view(%x, size=[8, 784]) at batch 8. With options.dynamic_batch the model is
// traced twice, at the example batch b and at b + 1 (the inputs grown by
// their first row), and the two graphs are compared op by op: a size or an
// integer attribute that differs is the affine function of N through the two
// points (8 -> 9 gives N; 128 -> 144 gives 16N). Control flow that depends on
// the batch size shows up as two different graphs: the graph then stays
// static, with a warning (an error when strict). The second run must not
// leave a trace on the program: the default generator and the module's
// buffers (batch-norm statistics) are put back as the first run left them.
#include <cstdio>

#include "ember/autograd.h"
#include "ember/generator.h"
#include "ember/jit.h"
#include "ember/nn/module.h"
#include "ember/ops.h"
#include "jit/trace_batch.h"
#include "jit/tracer.h"

namespace ember::jit {
namespace {

struct BoundTensor {
  std::string name;
  InputRole role;
  Tensor tensor;
};

std::unique_ptr<Graph> trace_once(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                  const std::vector<BoundTensor>& bound, const TraceOptions& options, bool report) {
  auto g = std::make_unique<Graph>();
  TraceSession session(*g, options.strict, report);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    EMBER_CHECK(t.defined(), "trace: example input ", i, " is an undefined tensor");
    const std::string name = inputs.size() == 1 ? "x" : "x" + std::to_string(i);
    session.bind(t, g->add_input(name, InputRole::User, t.dtype(), t.device(), static_shape(t.sizes())));
  }
  for (const BoundTensor& b : bound) {
    Value* v = options.freeze ? g->add_constant(b.tensor)
                              : g->add_input(b.name, b.role, b.tensor.dtype(), b.tensor.device(), static_shape(b.tensor.sizes()));
    v->name = b.name;
    session.bind(b.tensor, v);
  }
  const std::vector<Tensor> outputs = fn(inputs);
  for (const Tensor& t : outputs) {
    EMBER_CHECK(t.defined(), "trace: the traced function returned an undefined tensor");
    g->outputs().push_back(session.value_or_constant(t));
  }
  session.check_constants();
  return g;
}

// The inputs with their first row appended along dim 0.
std::vector<Tensor> grow_batch(const std::vector<Tensor>& inputs) {
  NoGradGuard no_grad;
  std::vector<Tensor> out;
  for (const Tensor& t : inputs) out.push_back(cat({t, t.narrow(0, 0, 1)}, 0));
  return out;
}

std::vector<Tensor> snapshot(const std::vector<BoundTensor>& bound) {
  NoGradGuard no_grad;
  std::vector<Tensor> out;
  for (const BoundTensor& b : bound) out.push_back(b.role == InputRole::Buffer ? b.tensor.clone() : Tensor());
  return out;
}

void restore(const std::vector<BoundTensor>& bound, const std::vector<Tensor>& saved) {
  NoGradGuard no_grad;
  for (size_t i = 0; i < bound.size(); ++i)
    if (saved[i].defined()) {
      Tensor t = bound[i].tensor;
      t.copy_(saved[i]);
    }
}

GraphModule trace_impl(const TracedFunction& fn, const std::vector<Tensor>& inputs, std::vector<BoundTensor> bound,
                       const TraceOptions& options, bool training) {
  bool dynamic = options.dynamic_batch && !inputs.empty();
  int64_t b = 0;
  if (dynamic) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      EMBER_CHECK(inputs[i].defined() && inputs[i].dim() >= 1 && inputs[i].size(0) >= 1, "trace: with dynamic_batch, ",
                  "every example input needs a batch dim 0 of size >= 1; input ", i, " has shape ",
                  inputs[i].defined() ? inputs[i].sizes() : IntArrayRef{});
      if (i == 0) b = inputs[0].size(0);
      EMBER_CHECK(inputs[i].size(0) == b, "trace: with dynamic_batch, every example input has the batch size in dim 0; ",
                  "input 0 has ", b, " rows but input ", i, " has shape ", inputs[i].sizes());
    }
  }
  const Generator generator_before = default_generator();
  const std::vector<Tensor> buffers_before = dynamic ? snapshot(bound) : std::vector<Tensor>{};
  std::unique_ptr<Graph> g = trace_once(fn, inputs, bound, options, /*report=*/true);
  g->training = training;
  if (dynamic) {
    const Generator generator_after = default_generator();
    const std::vector<Tensor> buffers_after = snapshot(bound);
    restore(bound, buffers_before);
    default_generator() = generator_before;
    std::unique_ptr<Graph> other;
    std::string why;
    try {
      other = trace_once(fn, grow_batch(inputs), bound, options, /*report=*/false);
    } catch (const Error& e) {
      why = std::string("tracing at batch ") + std::to_string(b + 1) + " failed: " + e.what();
    }
    restore(bound, buffers_after);
    default_generator() = generator_after;
    if (other) why = merge_batch(*g, *other, b, g->warnings);
    if (!why.empty()) {
      const std::string msg = "trace: the graph depends on the batch size (" + why +
                              "); it is kept static, for batch " + std::to_string(b) + " only";
      EMBER_CHECK(!options.strict, msg);
      g->warnings.push_back(msg);
      std::fprintf(stderr, "[ember::jit] warning: %s\n", msg.c_str());
    }
  }
  g->remove_unused_constants();
  g->verify("trace");
  std::vector<Tensor> bound_tensors;
  if (!options.freeze)
    for (const BoundTensor& t : bound) bound_tensors.push_back(t.tensor);
  return GraphModule(std::shared_ptr<Graph>(std::move(g)), std::move(bound_tensors));
}

}  // namespace

GraphModule trace_function(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                           const TraceOptions& options) {
  return trace_impl(fn, example_inputs, {}, options, /*training=*/false);
}

GraphModule trace_module(const std::shared_ptr<nn::Module>& module, const TracedFunction& forward,
                         const std::vector<Tensor>& example_inputs, const TraceOptions& options) {
  EMBER_CHECK(module != nullptr, "trace: the module is null");
  std::vector<BoundTensor> bound;
  for (const auto& p : module->named_parameters()) bound.push_back({p.key(), InputRole::Parameter, p.value()});
  for (const auto& p : module->named_buffers()) bound.push_back({p.key(), InputRole::Buffer, p.value()});
  return trace_impl(forward, example_inputs, std::move(bound), options, module->is_training());
}

}  // namespace ember::jit
