// The Tracer dispatch layer (Note [Tracing] in jit/tracer.h).
#include "jit/tracer.h"

#include <cstdio>

#include "core/trace_escape.h"
#include "ember/generator.h"
#include "jit/op_traits.h"

namespace ember::jit {
namespace {

thread_local TraceSession* tls_session = nullptr;

bool returns_list(const OpEntry& op) {
  const auto& r = op.schema().returns;
  return r.size() == 1 && r[0].rfind("Tensor[]", 0) == 0;
}

void set_value_meta(Value* v, const Tensor& t) {
  v->defined = t.defined();
  if (!t.defined()) return;
  v->dtype = t.dtype();
  v->device = t.device();
  v->shape = static_shape(t.sizes());
}

std::string describe(const Value* v) {
  if (v->kind == ValueKind::Input) return v->ref() + " (a graph input)";
  if (v->kind == ValueKind::Constant) return v->ref() + " (a constant)";
  return v->ref() + " (output of " + v->producer->name() + ")";
}

void tracer_kernel(const OpEntry& op, DispatchKeySet, Stack& stack) {
  ExcludeKeysGuard below(DispatchKey::Tracer);
  if (TraceSession* s = TraceSession::current()) {
    s->record(op, stack);
    return;
  }
  Dispatcher::call_boxed(op, Dispatcher::boxed_key_set(stack), stack);
}

void escape_hook(const Tensor& t, const char* what) {
  if (TraceSession* s = TraceSession::current()) s->escape(t, what);
}

// detach() makes a tensor without a dispatched op; the graph reads the same
// value there (so the graph's gradients flow through it: docs/graphs.md).
void alias_hook(const Tensor& from, const Tensor& to) {
  TraceSession* s = TraceSession::current();
  if (Value* v = s ? s->lookup(from) : nullptr) s->bind(to, v);
}

}  // namespace

TraceSession::TraceSession(Graph& graph, bool strict, bool report)
    : graph_(graph), strict_(strict), report_(report), previous_(tls_session) {
  EMBER_CHECK(previous_ == nullptr, "trace: a trace is already running on this thread (traces do not nest)");
  tls_session = this;
  LocalDispatchKeys& keys = local_dispatch_keys();
  keys.included = keys.included.add(DispatchKey::Tracer);
}

TraceSession::~TraceSession() {
  tls_session = previous_;
  LocalDispatchKeys& keys = local_dispatch_keys();
  keys.included = keys.included.remove(DispatchKey::Tracer);
}

TraceSession* TraceSession::current() { return tls_session; }

void TraceSession::bind(const Tensor& t, Value* v) {
  bindings_[t.impl()] = Binding{t, v, t.impl()->storage()->version()};
}

Value* TraceSession::lookup(const Tensor& t) const {
  if (!t.defined()) return nullptr;
  auto it = bindings_.find(t.impl());
  return it == bindings_.end() ? nullptr : it->second.value;
}

Value* TraceSession::value_or_constant(const Tensor& t) {
  if (Value* v = lookup(t)) return v;
  Value* c = graph_.add_constant(t);
  bind(t, c);
  return c;
}

void TraceSession::warn(const std::string& message) {
  EMBER_CHECK(!strict_, message);
  graph_.warnings.push_back(message);
  if (report_) std::fprintf(stderr, "[ember::jit] warning: %s\n", message.c_str());
}

void TraceSession::escape(const Tensor& t, const char* what) {
  const Value* v = lookup(t);
  if (v == nullptr || v->kind == ValueKind::Constant) return;  // not computed from the inputs
  std::string where = last_node_ ? " after node " + last_node_->outputs.at(0)->ref() + " = " + last_node_->name()
                                 : " before the first recorded op";
  warn(std::string("trace: ") + what + "() reads the value of " + describe(v) + " into C++" + where +
       "; the graph keeps what the program did with this one value (a branch taken, a size), which other inputs "
       "may not share");
}

void TraceSession::check_constants() {
  for (const auto& [impl, b] : bindings_) {
    if (b.value->kind != ValueKind::Constant || impl->storage()->version() == b.version) continue;
    warn("trace: constant " + b.value->ref() + " of shape " + shape_string(b.value->shape) +
         " was modified in place after the graph captured it; the graph holds its final value");
  }
}

void TraceSession::record(const OpEntry& op, Stack& stack) {
  const bool random = is_random(op);
  bool tracked = random;
  auto computed = [&](const Tensor& t) {
    const Value* v = lookup(t);
    return v != nullptr && v->kind != ValueKind::Constant;
  };
  for (const IValue& v : stack) {
    if (v.is_tensor()) tracked = tracked || computed(v.tensor());
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list()) tracked = tracked || computed(t);
  }
  if (!tracked) {  // reads constants only: run it, record nothing (its result is a constant)
    Dispatcher::call_boxed(op, Dispatcher::boxed_key_set(stack), stack);
    return;
  }
  std::vector<Arg> args;
  args.reserve(stack.size());
  for (const IValue& v : stack) {
    if (v.is_tensor()) {
      args.push_back(v.tensor().defined() ? Arg::of_value(value_or_constant(v.tensor())) : Arg::of_constant(IValue()));
    } else if (v.is_tensor_list()) {
      Arg a;
      a.kind = Arg::Kind::ValueList;
      for (const Tensor& t : v.tensor_list()) a.values.push_back(t.defined() ? value_or_constant(t) : nullptr);
      args.push_back(std::move(a));
    } else {
      args.push_back(Arg::of_constant(v));
    }
  }
  Dispatcher::call_boxed(op, Dispatcher::boxed_key_set(stack), stack);

  std::vector<Tensor> results;
  const bool list = returns_list(op);
  if (list) results = stack.at(0).tensor_list();
  else
    for (const IValue& v : stack) results.push_back(v.is_tensor() ? v.tensor() : Tensor());
  Node* n = graph_.add_node(&op, std::move(args), results.size());
  n->list_output = list;
  if (random) {
    const size_t s = seed_arg(op);
    const auto seed = static_cast<uint64_t>(std::get<int64_t>(n->args[s].constant.payload()));
    const auto offset = static_cast<uint64_t>(std::get<int64_t>(n->args[s + 1].constant.payload()));
    const Generator& gen = default_generator();
    if (seed != gen.seed() || gen.offset() < offset)
      warn("trace: " + op.name() + " draws from a generator other than the default one; the graph draws from "
           "the default generator when it runs");
    else n->random_blocks = SymDim{0, static_cast<int64_t>(gen.offset() - offset)};
  }
  for (size_t i = 0; i < results.size(); ++i) {
    set_value_meta(n->outputs[i], results[i]);
    if (results[i].defined()) bind(results[i], n->outputs[i]);
  }
  last_node_ = n;
}

void install_tracer() {
  Dispatcher::instance().set_fallback(DispatchKey::Tracer, &tracer_kernel, "tracer (record, run below)");
  detail::set_escape_hook(&escape_hook);
  detail::set_alias_hook(&alias_hook);
}

}  // namespace ember::jit
