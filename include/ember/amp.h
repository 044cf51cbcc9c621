// Mixed precision on the CPU: autocast and gradient scaling, as torch.amp.
//
//   {
//     ember::amp::autocast guard(ember::kBFloat16);
//     Tensor logits = model->forward(x);          // linear/conv/matmul run in bf16
//     Tensor loss = F::cross_entropy(logits, y);  // losses and softmax run in f32
//   }
//   loss.backward();                              // parameter grads come back in f32
//
// Inside an autocast scope every op passes through the Autocast dispatch key,
// which casts its floating inputs by the op's policy (cast_policy) and runs
// it below itself:
// - LowerPrecision (mm, bmm, addmm, and so matmul and linear; convolution;
//   flash_attention): float32 inputs are cast to the autocast dtype;
// - Float32 (softmax, log_softmax, the norms, the losses, the reductions sum,
//   mean, prod, var, std, norm, logsumexp, cumsum, cumprod, and exp, log, pow):
//   float16/bfloat16 inputs are cast to float32;
// - Promote (everything else): inputs are left alone, so the op's type
//   promotion decides (an add of bf16 and f32 gives f32).
// float64 tensors are never cast. The casts are ordinary differentiable ops,
// so gradients flow back to float32 parameters in float32.
//
// GradScaler multiplies the loss by a scale before backward so that small
// float16 gradients do not flush to zero, then unscales the gradients, skips
// the optimizer step when one of them is inf or NaN, and adapts the scale.
#pragma once

#include <string_view>
#include <vector>

#include "ember/serialize.h"
#include "ember/tensor.h"

namespace ember::optim {
class Optimizer;
}

namespace ember::amp {

// Enables autocast to `dtype` (kBFloat16 or kFloat16) on this thread for the
// guard's lifetime; nested guards restore the outer state when they end.
class autocast {
 public:
  explicit autocast(DType dtype = DType::BFloat16, bool enabled = true);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  bool saved_enabled_;
  DType saved_dtype_;
};

bool is_autocast_enabled();
DType autocast_dtype();

enum class CastPolicy { LowerPrecision, Float32, Promote };
// The policy autocast applies to the dispatched op `op` ("mm", "softmax", ...).
CastPolicy cast_policy(std::string_view op);

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // steps without inf/NaN before the scale grows
  bool enabled = true;
};

// scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update();
class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});
  // loss * scale (the loss itself when disabled).
  Tensor scale(const Tensor& loss) const;
  // Divides the gradients of the optimizer's parameters by the scale, once
  // per step, and records whether any of them is inf or NaN.
  void unscale_(optim::Optimizer& optimizer);
  // Unscales if not done yet, then steps the optimizer unless a gradient was
  // inf or NaN. Returns whether the step ran.
  bool step(optim::Optimizer& optimizer);
  // Halves (backoff) the scale after a skipped step; grows it after
  // growth_interval clean steps in a row.
  void update();
  double get_scale() const { return scale_; }
  // scale, growth tracker (for checkpoints)
  TensorDict state_dict() const;
  void load_state_dict(const TensorDict& state);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  bool unscaled_ = false;
  bool found_inf_ = false;
};

}  // namespace ember::amp
