// The Autocast dispatch key: one boxed kernel for every op (include/ember/amp.h).
#include <algorithm>
#include <array>

#include "core/dispatcher.h"
#include "ember/amp.h"

namespace ember::amp {
namespace {

struct AutocastState {
  bool enabled = false;
  DType dtype = DType::BFloat16;
};
thread_local AutocastState tls_state;

// The op lists, as PyTorch's CPU autocast lists for the ops ember dispatches
// (matmul and linear are composites of mm/bmm/addmm and follow them).
constexpr std::array<std::string_view, 5> kLowerPrecision = {"mm", "bmm", "addmm", "convolution", "flash_attention"};
constexpr std::array<std::string_view, 24> kFloat32 = {
    "softmax", "log_softmax", "layer_norm", "rms_norm",  "group_norm", "batch_norm", "cross_entropy_loss", "nll_loss",
    "mse_loss", "sum",        "mean",       "prod",      "var",        "std",        "norm",               "logsumexp",
    "cumsum",  "cumprod",     "exp",        "log",       "pow",        "log1p",      "expm1",              "softplus"};

bool listed(std::string_view op, auto const& list) { return std::find(list.begin(), list.end(), op) != list.end(); }

Tensor cast_for(CastPolicy policy, const Tensor& t, DType lower) {
  if (!t.defined() || !is_floating_point(t.dtype()) || t.dtype() == DType::Float64) return t;
  if (policy == CastPolicy::LowerPrecision && t.dtype() == DType::Float32) return t.to(lower);
  if (policy == CastPolicy::Float32 && t.dtype() != DType::Float32) return t.to(DType::Float32);
  return t;
}

void autocast_kernel(const OpEntry& op, DispatchKeySet, Stack& stack) {
  ExcludeKeysGuard below(DispatchKey::Autocast);  // the casts, and the op, run below this layer
  const CastPolicy policy = cast_policy(op.name());
  if (policy != CastPolicy::Promote) {
    for (IValue& v : stack) {
      if (v.is_tensor()) {
        v = IValue(IValue::Payload(cast_for(policy, v.tensor(), tls_state.dtype)));
      } else if (v.is_tensor_list()) {
        TensorList cast;
        for (const Tensor& t : v.tensor_list()) cast.push_back(cast_for(policy, t, tls_state.dtype));
        v = IValue(IValue::Payload(std::move(cast)));
      }
    }
  }
  Dispatcher::call_boxed(op, Dispatcher::boxed_key_set(stack), stack);
}

}  // namespace

autocast::autocast(DType dtype, bool enabled) : saved_enabled_(tls_state.enabled), saved_dtype_(tls_state.dtype) {
  EMBER_CHECK(dtype == DType::BFloat16 || dtype == DType::Float16, "amp::autocast: dtype must be bfloat16 or float16, got ",
              dtype);
  tls_state = {enabled, dtype};
  LocalDispatchKeys& keys = local_dispatch_keys();
  keys.included = enabled ? keys.included | DispatchKeySet(DispatchKey::Autocast)
                          : keys.included.remove(DispatchKey::Autocast);
}

autocast::~autocast() {
  tls_state = {saved_enabled_, saved_dtype_};
  LocalDispatchKeys& keys = local_dispatch_keys();
  keys.included = saved_enabled_ ? keys.included | DispatchKeySet(DispatchKey::Autocast)
                                 : keys.included.remove(DispatchKey::Autocast);
}

bool is_autocast_enabled() { return tls_state.enabled; }
DType autocast_dtype() { return tls_state.dtype; }

CastPolicy cast_policy(std::string_view op) {
  if (listed(op, kLowerPrecision)) return CastPolicy::LowerPrecision;
  if (listed(op, kFloat32)) return CastPolicy::Float32;
  return CastPolicy::Promote;
}

void install_autocast() {
  Dispatcher::instance().set_fallback(DispatchKey::Autocast, &autocast_kernel, "autocast (cast by policy, run below)");
}

}  // namespace ember::amp
