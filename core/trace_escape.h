// Values leaving a traced graph (Note [Tracing escapes]).
//
// Note [Tracing escapes]
// While ember::jit traces a function, every op call is recorded; a tensor's
// value read into C++ (item(), data_ptr<T>()) is not: whatever the program
// then does with the number (a branch, a size) is baked into the graph. The
// tracer sets a hook here; the accessors call check_escape, which costs a
// thread-local bit test when no trace runs. Calls from inside a kernel (the
// Tracer key excluded) are the engine's own reads and are not reported.
#pragma once

#include "core/dispatcher.h"

namespace ember::detail {

// Called with the tensor read and the accessor's name ("item", "data_ptr").
using EscapeHook = void (*)(const Tensor& t, const char* what);
void set_escape_hook(EscapeHook hook);
void report_escape(const Tensor& t, const char* what);

// A tensor made from another without a dispatched op (detach()): the tracer
// lets it stand for the same graph value.
using AliasHook = void (*)(const Tensor& from, const Tensor& to);
void set_alias_hook(AliasHook hook);
void report_alias(const Tensor& from, const Tensor& to);

inline bool user_level_trace() {
  const LocalDispatchKeys& keys = local_dispatch_keys();
  return keys.included.has(DispatchKey::Tracer) && !keys.excluded.has(DispatchKey::Tracer);
}
inline void check_escape(const Tensor& t, const char* what) {
  if (__builtin_expect(user_level_trace(), 0)) report_escape(t, what);
}
inline void check_alias(const Tensor& from, const Tensor& to) {
  if (__builtin_expect(user_level_trace(), 0)) report_alias(from, to);
}

}  // namespace ember::detail
