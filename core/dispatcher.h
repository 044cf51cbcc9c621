// The dispatcher: every op is registered once, by name and schema, and every
// call is routed through its table of kernels.
//
// Note [How a call is dispatched]
// 1. The key set of a call is the union of its tensor arguments' key sets,
//    plus the thread-local "included" keys (modes such as the profiler), minus
//    the thread-local "excluded" keys (a layer that has done its work, e.g.
//    autograd while it runs the op below itself).
// 2. The highest key in that set picks the kernel. Keys above the backends
//    (Profiler, Tracer, Autocast, Autograd) hold one kernel per op, or a boxed fallback shared by all
//    ops; a key with neither falls through to the next key down.
// 3. A backend key (CPU, CUDA) holds one kernel per dtype. The dtype is the
//    op's "dispatch dtype": the promoted type of its tensor and scalar
//    arguments (DTypeRule::Promote, e.g. add) or the dtype of its first tensor
//    (DTypeRule::FirstTensor, e.g. argmax, index_select).
// A kernel above the backends re-enters the dispatcher below itself, either
// with an ExcludeKeysGuard (typed) or with Dispatcher::call_boxed on the keys
// below its own (boxed).
//
// Typed calls (TypedOp<Sig>::call) do no heap allocation and no string work:
// bit operations, one table lookup, one indirect call. Boxed calls build a
// Stack of IValues; every registered kernel gets a boxed adapter generated
// from its C++ signature, so a boxed caller can reach any kernel.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ivalue.h"
#include "core/result_type.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember {

enum class DTypeRule : uint8_t { Promote, FirstTensor };

struct SchemaArg {
  std::string type;           // "Tensor", "Tensor?", "Scalar", "int", "int[]", "bool", "float", "str", "ScalarType?"...
  std::string name;
  std::string default_value;  // empty when none
};

struct OpSchema {
  std::string name;  // "add", "add_"
  std::string text;  // the registered string
  std::vector<SchemaArg> args;
  std::vector<std::string> returns;
};
// Parses "name(Type arg, Type arg=default, ...) -> Ret" or "-> (Ret, Ret)".
OpSchema parse_schema(std::string_view text);

class OpEntry;
using BoxedFn = void (*)(const OpEntry& op, DispatchKeySet keys, Stack& stack);
// Calls an unboxed kernel from a stack: generated per C++ signature.
using BoxedAdapter = void (*)(void* unboxed, Stack& stack);

struct KernelSlot {
  void* unboxed = nullptr;
  BoxedAdapter adapter = nullptr;
  BoxedFn boxed = nullptr;  // a boxed-only kernel (fallbacks)
  const char* name = nullptr;
  bool present() const { return unboxed != nullptr || boxed != nullptr; }
};

class OpEntry {
 public:
  OpEntry(OpSchema schema, DTypeRule rule, size_t num_cpp_args);
  const OpSchema& schema() const { return schema_; }
  const std::string& name() const { return schema_.name; }
  DTypeRule dtype_rule() const { return rule_; }

  const KernelSlot& layer_kernel(DispatchKey k) const { return layers_[static_cast<int>(k)]; }
  const KernelSlot& backend_kernel(DispatchKey k, DType t) const {
    return backends_[static_cast<int>(k)][static_cast<int>(t)];
  }
  void set_layer_kernel(DispatchKey k, KernelSlot s);
  void set_backend_kernel(DispatchKey k, DType t, KernelSlot s);
  // "CPU[float32, float64] CUDA[float32]": for error messages and inspect.
  std::string registered_summary() const;
  [[noreturn]] void fail_missing(DispatchKey k, DType t) const;
  // Bit i is set when argument i is a required Tensor ("Tensor", not
  // "Tensor?"): an undefined tensor there raises (Note [Undefined tensors]).
  uint64_t required_tensors() const { return required_tensors_; }
  // Raises for the first required argument whose bit is set in `undefined`.
  [[noreturn]] void fail_undefined(uint64_t undefined) const;

 private:
  OpSchema schema_;
  DTypeRule rule_;
  uint64_t required_tensors_ = 0;
  std::array<KernelSlot, kNumDispatchKeys> layers_{};
  std::array<std::array<KernelSlot, kNumDTypes>, 2> backends_{};
};

// Hot thread-locals (read on every op call) use the initial-exec TLS model:
// a plain offset from the thread pointer instead of a __tls_get_addr call,
// which a shared library otherwise pays. They are a few bytes, well within
// the static TLS space glibc reserves even for a dlopen'ed library.
#define EMBER_HOT_TLS __attribute__((tls_model("initial-exec")))

// Thread-local key adjustments (Note [How a call is dispatched], step 1).
struct LocalDispatchKeys {
  DispatchKeySet included;
  DispatchKeySet excluded;
};
LocalDispatchKeys& local_dispatch_keys();

class ExcludeKeysGuard {
 public:
  explicit ExcludeKeysGuard(DispatchKeySet keys) : saved_(local_dispatch_keys().excluded) {
    local_dispatch_keys().excluded = saved_ | keys;
  }
  explicit ExcludeKeysGuard(DispatchKey key) : ExcludeKeysGuard(DispatchKeySet(key)) {}
  ~ExcludeKeysGuard() { local_dispatch_keys().excluded = saved_; }
  ExcludeKeysGuard(const ExcludeKeysGuard&) = delete;
  ExcludeKeysGuard& operator=(const ExcludeKeysGuard&) = delete;

 private:
  DispatchKeySet saved_;
};

class IncludeKeysGuard {
 public:
  explicit IncludeKeysGuard(DispatchKeySet keys) : saved_(local_dispatch_keys().included) {
    local_dispatch_keys().included = saved_ | keys;
  }
  ~IncludeKeysGuard() { local_dispatch_keys().included = saved_; }
  IncludeKeysGuard(const IncludeKeysGuard&) = delete;
  IncludeKeysGuard& operator=(const IncludeKeysGuard&) = delete;

 private:
  DispatchKeySet saved_;
};

class Dispatcher {
 public:
  static Dispatcher& instance();
  void add(OpEntry* op);
  const OpEntry* find(std::string_view name) const;
  const std::vector<OpEntry*>& ops() const { return ops_; }
  // A boxed kernel used for every op at a layer key that has no per-op kernel.
  void set_fallback(DispatchKey k, BoxedFn fn, const char* name);
  const KernelSlot& fallback(DispatchKey k) const { return fallbacks_[static_cast<int>(k)]; }

  // Runs `op` boxed: picks the kernel for `keys` (already adjusted by the
  // caller) and the stack's arguments; results replace the arguments.
  static void call_boxed(const OpEntry& op, DispatchKeySet keys, Stack& stack);
  // The key set of a boxed call's arguments, adjusted by the local keys.
  static DispatchKeySet boxed_key_set(const Stack& stack);

  static bool trace_enabled() { return trace_; }

 private:
  Dispatcher();
  std::vector<OpEntry*> ops_;
  std::array<KernelSlot, kNumDispatchKeys> fallbacks_{};
  static bool trace_;
};

namespace detail {

// Key set and dispatch dtype of a typed call, gathered from its arguments.
struct ArgScan {
  DispatchKeySet keys;
  ResultTypeState types;
  DType first_dtype = DType::Float32;
  bool has_first = false;
  uint64_t undefined = 0;  // bit i: argument i is an undefined Tensor (or a list holding one)

  // Argument `pos` of a typed call.
  void add(const Tensor& t, size_t pos) {
    if (__builtin_expect(!t.defined(), 0)) {
      undefined |= uint64_t{1} << pos;
      return;
    }
    add(t);
  }
  void add(const TensorList& list, size_t pos) {
    for (const Tensor& t : list) {
      if (__builtin_expect(!t.defined(), 0)) undefined |= uint64_t{1} << pos;
      else add(t);
    }
  }
  template <class T>
  void add(const T& v, size_t) {
    add(v);
  }
  void add(const Tensor& t) {
    if (!t.defined()) return;
    keys = keys | t.impl()->key_set();
    types.update(t);
    if (!has_first) {
      first_dtype = t.dtype();
      has_first = true;
    }
  }
  void add(const TensorList& list) {
    for (const Tensor& t : list) add(t);
  }
  void add(const std::optional<Tensor>& t) {
    if (t) add(*t);
  }
  void add(const Scalar& s) { types.update(s); }
  template <class T>
  void add(const T&) {}
};

void trace_call(const OpEntry& op, DispatchKey key, DType dtype, const KernelSlot& slot);

template <class R, class... A>
void boxed_adapter(void* fn, Stack& stack) {
  auto* f = reinterpret_cast<R (*)(A...)>(fn);
  R result = [&]<size_t... I>(std::index_sequence<I...>) {
    return f(boxing::Unbox<A>::get(stack[I])...);
  }(std::index_sequence_for<A...>{});
  stack.clear();
  boxing::push_result(stack, std::move(result));
}

}  // namespace detail

template <class Sig> class TypedOp;

// A registered op with a C++ signature. Ops are declared in core/op_decls.h.
template <class R, class... A>
class TypedOp<R(A...)> {
 public:
  using Fn = R (*)(A...);

  TypedOp(const char* schema, DTypeRule rule) : entry_(parse_schema(schema), rule, sizeof...(A)) {
    Dispatcher::instance().add(&entry_);
  }
  const OpEntry& entry() const { return entry_; }

  // Registers a backend kernel for each of `dtypes`.
  void impl(DispatchKey key, std::initializer_list<DType> dtypes, Fn fn, const char* name) {
    for (DType t : dtypes) entry_.set_backend_kernel(key, t, slot(fn, name));
  }
  // Registers the kernel of a layer above the backends (Autograd, Autocast, ...).
  void impl_layer(DispatchKey key, Fn fn, const char* name) { entry_.set_layer_kernel(key, slot(fn, name)); }

  R call(A... args) const {
    static_assert(sizeof...(A) <= 64, "ArgScan::undefined has a bit per argument");
    detail::ArgScan scan;
    [&]<size_t... I>(std::index_sequence<I...>) { (scan.add(args, I), ...); }(std::index_sequence_for<A...>{});
    if (__builtin_expect((scan.undefined & entry_.required_tensors()) != 0, 0)) entry_.fail_undefined(scan.undefined);
    const LocalDispatchKeys& local = local_dispatch_keys();
    DispatchKeySet keys = (scan.keys | local.included) - local.excluded;
    EMBER_CHECK(!keys.empty(), entry_.name(), ": no tensor argument decides the device (or all keys are excluded)");
    for (;;) {
      const DispatchKey k = keys.highest();
      if (k <= DispatchKey::CUDA) {
        const DType t = entry_.dtype_rule() == DTypeRule::Promote ? scan.types.result() : scan.first_dtype;
        const KernelSlot& s = entry_.backend_kernel(k, t);
        if (__builtin_expect(Dispatcher::trace_enabled(), 0)) detail::trace_call(entry_, k, t, s);
        if (__builtin_expect(s.unboxed == nullptr, 0)) entry_.fail_missing(k, t);
        return reinterpret_cast<Fn>(s.unboxed)(args...);
      }
      const KernelSlot* s = &entry_.layer_kernel(k);
      if (!s->present()) s = &Dispatcher::instance().fallback(k);
      if (!s->present()) {  // nothing at this layer: fall through
        keys = keys.remove(k);
        continue;
      }
      if (__builtin_expect(Dispatcher::trace_enabled(), 0)) detail::trace_call(entry_, k, DType::Float32, *s);
      if (s->unboxed) return reinterpret_cast<Fn>(s->unboxed)(args...);
      Stack stack;
      stack.reserve(sizeof...(A));
      (stack.push_back(boxing::box(args)), ...);
      s->boxed(entry_, keys, stack);
      return boxing::PopResult<R>::get(stack.data());
    }
  }

 private:
  static KernelSlot slot(Fn fn, const char* name) {
    KernelSlot s;
    s.unboxed = reinterpret_cast<void*>(fn);
    s.adapter = &detail::boxed_adapter<R, A...>;
    s.name = name;
    return s;
  }
  OpEntry entry_;
};

}  // namespace ember
