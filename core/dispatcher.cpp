#include "core/dispatcher.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace ember {

bool Dispatcher::trace_ = [] {
  const char* env = std::getenv("EMBER_TRACE_DISPATCH");
  return env != nullptr && env[0] != '\0' && env[0] != '0';
}();

// ---- schemas ----

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits on commas that are not inside brackets.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[' || s[i] == '(') ++depth;
    if (s[i] == ']' || s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (!trim(s.substr(start)).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

}  // namespace

OpSchema parse_schema(std::string_view text) {
  OpSchema schema;
  schema.text = std::string(text);
  const size_t open = text.find('(');
  const size_t arrow = text.rfind("->");
  const size_t close = text.rfind(')', arrow);
  EMBER_CHECK(open != std::string_view::npos && arrow != std::string_view::npos && close != std::string_view::npos,
              "parse_schema: expected 'name(args) -> returns', got '", text, "'");
  schema.name = std::string(trim(text.substr(0, open)));
  for (std::string_view arg : split_top_level(text.substr(open + 1, close - open - 1))) {
    SchemaArg a;
    const size_t eq = arg.find('=');
    if (eq != std::string_view::npos) {
      a.default_value = std::string(trim(arg.substr(eq + 1)));
      arg = trim(arg.substr(0, eq));
    }
    const size_t space = arg.rfind(' ');
    EMBER_CHECK(space != std::string_view::npos, "parse_schema: argument '", arg, "' of ", schema.name,
                " has no type");
    a.type = std::string(trim(arg.substr(0, space)));
    a.name = std::string(trim(arg.substr(space + 1)));
    schema.args.push_back(std::move(a));
  }
  std::string_view rets = trim(text.substr(arrow + 2));
  if (!rets.empty() && rets.front() == '(') rets = rets.substr(1, rets.size() - 2);
  for (std::string_view r : split_top_level(rets)) schema.returns.emplace_back(r);
  return schema;
}

// ---- op entries ----

OpEntry::OpEntry(OpSchema schema, DTypeRule rule, size_t num_cpp_args) : schema_(std::move(schema)), rule_(rule) {
  EMBER_CHECK(schema_.args.size() == num_cpp_args, "op ", schema_.name, ": schema has ", schema_.args.size(),
              " arguments but the C++ signature has ", num_cpp_args);
  for (size_t i = 0; i < schema_.args.size() && i < 64; ++i) {
    const std::string& type = schema_.args[i].type;  // "Tensor", "Tensor(a!)" or "Tensor[]"; not "Tensor?"
    if (type == "Tensor" || type == "Tensor[]" || type.rfind("Tensor(", 0) == 0) required_tensors_ |= uint64_t{1} << i;
  }
}

void OpEntry::fail_undefined(uint64_t undefined) const {
  const uint64_t bad = undefined & required_tensors_;
  const int i = __builtin_ctzll(bad);
  const SchemaArg& arg = schema_.args[static_cast<size_t>(i)];
  EMBER_FAIL(name(), ": argument '", arg.name, arg.type == "Tensor[]" ? "' holds" : "' is",
             " an undefined tensor (a default-constructed Tensor, or x.grad() before backward)");
}

void OpEntry::set_layer_kernel(DispatchKey k, KernelSlot s) {
  EMBER_CHECK(k > DispatchKey::CUDA, name(), ": ", dispatch_key_name(k), " is a backend key; register per dtype");
  layers_[static_cast<int>(k)] = s;
}

void OpEntry::set_backend_kernel(DispatchKey k, DType t, KernelSlot s) {
  EMBER_CHECK(k <= DispatchKey::CUDA, name(), ": ", dispatch_key_name(k), " is not a backend key");
  backends_[static_cast<int>(k)][static_cast<int>(t)] = s;
}

std::string OpEntry::registered_summary() const {
  std::ostringstream os;
  bool any = false;
  for (int k = 0; k < 2; ++k) {
    std::string list;
    for (int t = 0; t < kNumDTypes; ++t) {
      if (!backends_[k][t].present()) continue;
      if (!list.empty()) list += ", ";
      list += dtype_name(static_cast<DType>(t));
    }
    if (list.empty()) continue;
    os << (any ? " " : "") << dispatch_key_name(static_cast<DispatchKey>(k)) << "[" << list << "]";
    any = true;
  }
  for (int k = 2; k < kNumDispatchKeys; ++k) {
    if (layers_[k].present()) os << (any ? " " : "") << dispatch_key_name(static_cast<DispatchKey>(k));
    any = any || layers_[k].present();
  }
  return any ? os.str() : "nothing";
}

void OpEntry::fail_missing(DispatchKey k, DType t) const {
  EMBER_FAIL(name(), ": no ", dispatch_key_name(k), " kernel for dtype ", t, "; registered: ", registered_summary());
}

// ---- local keys ----

LocalDispatchKeys& local_dispatch_keys() {
  thread_local LocalDispatchKeys keys EMBER_HOT_TLS;
  return keys;
}

// ---- the dispatcher ----

Dispatcher::Dispatcher() = default;

Dispatcher& Dispatcher::instance() {
  static Dispatcher* d = new Dispatcher();  // leaked: ops are used until exit
  return *d;
}

void Dispatcher::add(OpEntry* op) {
  EMBER_CHECK(find(op->name()) == nullptr, "op ", op->name(), " is registered twice");
  ops_.push_back(op);
}

const OpEntry* Dispatcher::find(std::string_view name) const {
  for (const OpEntry* op : ops_)
    if (op->name() == name) return op;
  return nullptr;
}

void Dispatcher::set_fallback(DispatchKey k, BoxedFn fn, const char* name) {
  KernelSlot s;
  s.boxed = fn;
  s.name = name;
  fallbacks_[static_cast<int>(k)] = s;
}

DispatchKeySet Dispatcher::boxed_key_set(const Stack& stack) {
  DispatchKeySet keys;
  for (const IValue& v : stack) {
    if (v.is_tensor() && v.tensor().defined()) keys = keys | v.tensor().impl()->key_set();
    if (v.is_tensor_list())
      for (const Tensor& t : v.tensor_list())
        if (t.defined()) keys = keys | t.impl()->key_set();
  }
  const LocalDispatchKeys& local = local_dispatch_keys();
  return (keys | local.included) - local.excluded;
}

namespace {

// The undefined tensors of a boxed call: bit i for argument i (a list holding one counts).
detail::ArgScan scan_boxed(const Stack& stack) {
  detail::ArgScan scan;
  for (size_t i = 0; i < stack.size() && i < 64; ++i) {
    const IValue& v = stack[i];
    if (v.is_tensor()) scan.add(v.tensor(), i);
    else if (v.is_tensor_list()) scan.add(v.tensor_list(), i);
    else if (auto* s = std::get_if<Scalar>(&v.payload())) scan.add(*s);
  }
  return scan;
}

}  // namespace

void Dispatcher::call_boxed(const OpEntry& op, DispatchKeySet keys, Stack& stack) {
  if (keys.empty()) {  // no defined tensor: an undefined one is the problem to name, not the device
    const detail::ArgScan scan = scan_boxed(stack);
    if (scan.undefined & op.required_tensors()) op.fail_undefined(scan.undefined);
  }
  for (;;) {
    EMBER_CHECK(!keys.empty(), op.name(), ": no tensor argument decides the device (or all keys are excluded)");
    const DispatchKey k = keys.highest();
    if (k <= DispatchKey::CUDA) {
      const detail::ArgScan scan = scan_boxed(stack);
      if (scan.undefined & op.required_tensors()) op.fail_undefined(scan.undefined);
      const DType t = op.dtype_rule() == DTypeRule::Promote ? scan.types.result() : scan.first_dtype;
      const KernelSlot& s = op.backend_kernel(k, t);
      if (trace_) detail::trace_call(op, k, t, s);
      if (!s.present()) op.fail_missing(k, t);
      if (s.unboxed) s.adapter(s.unboxed, stack);
      else s.boxed(op, keys, stack);
      return;
    }
    const KernelSlot* s = &op.layer_kernel(k);
    if (!s->present()) s = &instance().fallback(k);
    if (!s->present()) {
      keys = keys.remove(k);
      continue;
    }
    if (trace_) detail::trace_call(op, k, DType::Float32, *s);
    if (s->unboxed) s->adapter(s->unboxed, stack);
    else s->boxed(op, keys, stack);
    return;
  }
}

namespace detail {

void trace_call(const OpEntry& op, DispatchKey key, DType dtype, const KernelSlot& slot) {
  const char* kernel = slot.name ? slot.name : (slot.present() ? "(unnamed)" : "(missing)");
  if (key <= DispatchKey::CUDA) {
    std::fprintf(stderr, "[dispatch] %s -> %s %s: %s\n", op.name().c_str(), dispatch_key_name(key),
                 std::string(dtype_name(dtype)).c_str(), kernel);
  } else {
    std::fprintf(stderr, "[dispatch] %s -> %s: %s\n", op.name().c_str(), dispatch_key_name(key), kernel);
  }
}

}  // namespace detail

// ---- IValue printing ----

std::string IValue::to_string() const {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, NoneValue>) os << "None";
        else if constexpr (std::is_same_v<T, Tensor>) {
          if (!v.defined()) os << "None";
          else os << "Tensor" << v.sizes() << " " << v.dtype();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) os << IntArrayRef(v);
        else if constexpr (std::is_same_v<T, TensorList>) {
          os << "[";
          for (size_t i = 0; i < v.size(); ++i) {
            os << (i ? ", " : "");
            if (v[i].defined()) os << "Tensor" << v[i].sizes();
            else os << "None";
          }
          os << "]";
        } else if constexpr (std::is_same_v<T, bool>) os << (v ? "True" : "False");
        else os << v;
      },
      v_);
  return os.str();
}

}  // namespace ember
